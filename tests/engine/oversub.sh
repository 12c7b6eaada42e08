#!/bin/sh
# An oversubscribed node (issue 21, defect 8): with more ranks of the job on
# a node than CPUs for them, idle waits default to TERN_WAIT_MODE=block and
# TERN_SPIN_COUNT=1 (engine/oversub.c: spinning there made collectives
# crawl), a setting the user gave wins, and local rank 0 says so on one
# line.  tern_info started by the launcher shows the values in effect.
#
# nproc + 1 ranks (nproc: the CPUs this shell, and so the launcher, may use)
# against nproc ranks, under
#   ternrun                 it tells the ranks (PMIX_NODE_OVERSUBSCRIBED);
#   mpirun.openmpi          unbound (--oversubscribe): the CPUs of the
#                           node's cpuset; bound (--bind-to
#                           core:overload-allowed): the union of the ranks'
#                           PMIX_CPUSET; nproc ranks bound one per
#                           hardware thread by Open MPI: not oversubscribed
#                           (its own 1-CPU mask must not make it look so).
# For each: tern_info's TERN_WAIT_MODE / TERN_SPIN_COUNT on rank 0, and a
# tern program (fin_stagger) printing exactly one note (or none), no
# warning (shm's "differs from this node's": every rank chose alike).
. "${srcdir:-.}/tests/engine/lib.sh"
TERN_INFO=${TERN_INFO:-./tern_info}
PROG=${FIN_STAGGER:-./tests/fin_stagger}
MPIRUN_OMPI=${MPIRUN_OMPI:-mpirun.openmpi}
ENGINE_TIMEOUT=120 # a few short jobs; a hang is a failure
ncpu=$(nproc) || fail "nproc"
[ "$ncpu" -le 15 ] || { echo "SKIP: $ncpu CPUs: nproc + 1 ranks is too many for a test"; exit 77; }
over=$((ncpu + 1))
unset TERN_WAIT_MODE TERN_SPIN_COUNT
work=$(mktemp -d "${TMPDIR:-/tmp}/tern-oversub.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT

# value VAR FILE: the value column of tern_info's line for VAR
value() { sed -n "s/^$1  *\([^ ]*\) .*/\1/p" "$2" | head -1; }

# expect_info LABEL FILE MODE SPIN VERDICT: rank 0's tern_info output
expect_info() {
    m=$(value TERN_WAIT_MODE "$2") s=$(value TERN_SPIN_COUNT "$2")
    [ "$m $s" = "$3 $4" ] || { cat "$2"; fail "$1: tern_info shows TERN_WAIT_MODE=$m" \
        "TERN_SPIN_COUNT=$s, not $3 $4"; }
    grep -q "^# .*: $5\$\|^# .*, $5 (" "$2" || { cat "$2"; fail "$1: tern_info does not say '$5'"; }
}

# expect_notes LABEL FILE N [MODE SPIN]: N note lines from a tern program's
# job (0 or 1), naming the values in effect; no warning
expect_notes() {
    n=$(grep -c "tern\[[0-9]*\]: note: .*oversubscribed" "$2")
    [ "$n" -eq "$3" ] || { cat "$2"; fail "$1: $n notes about the oversubscribed node, not $3"; }
    if [ "$3" -eq 1 ]; then
        grep -q "note: .*TERN_WAIT_MODE=$4 TERN_SPIN_COUNT=$5" "$2" ||
            { cat "$2"; fail "$1: the note does not say TERN_WAIT_MODE=$4 TERN_SPIN_COUNT=$5"; }
    fi
    grep -q "tern\[[0-9]*\]: warning" "$2" && { cat "$2"; fail "$1: a warning"; }
    return 0
}

# ternrun NP [VAR=value...]: tern_info's rank-0 output in $work/info, a
# fin_stagger job's output in $work/job
ternrun_case() {
    np=$1
    shift
    rm -rf "$work/files"
    env "$@" timeout -k 5 "$ENGINE_TIMEOUT" "$TERNRUN" -n "$np" --output-filename "$work/files" \
        "$TERN_INFO" --params </dev/null >/dev/null 2>&1 || fail "ternrun -n $np tern_info"
    cp "$work/files/0/stdout" "$work/info" || fail "no output of tern_info's rank 0"
    env "$@" timeout -k 5 "$ENGINE_TIMEOUT" "$TERNRUN" -n "$np" "$PROG" -1 0 </dev/null \
        >"$work/job" 2>&1 || { cat "$work/job"; fail "ternrun -n $np fin_stagger"; }
}

echo "# ternrun, $over ranks on $ncpu CPUs"
ternrun_case "$over"
expect_info "ternrun -n $over" "$work/info" block 1 oversubscribed
grep -q "PMIX_NODE_OVERSUBSCRIBED" "$work/info" || fail "ternrun did not say it"
expect_notes "ternrun -n $over" "$work/job" 1 block 1
echo "# ternrun, $ncpu ranks"
ternrun_case "$ncpu"
expect_info "ternrun -n $ncpu" "$work/info" yield 2000 "not oversubscribed"
expect_notes "ternrun -n $ncpu" "$work/job" 0
echo "# ternrun, $over ranks, TERN_WAIT_MODE=yield given"
ternrun_case "$over" TERN_WAIT_MODE=yield
expect_info "TERN_WAIT_MODE=yield" "$work/info" yield 1 oversubscribed
expect_notes "TERN_WAIT_MODE=yield" "$work/job" 1 yield 1
echo "# ternrun, $over ranks, TERN_WAIT_MODE=spin TERN_SPIN_COUNT=50 given"
ternrun_case "$over" TERN_WAIT_MODE=spin TERN_SPIN_COUNT=50
expect_info "both given" "$work/info" spin 50 oversubscribed
expect_notes "both given" "$work/job" 0

if ! command -v "$MPIRUN_OMPI" >/dev/null 2>&1; then
    echo "note: no $MPIRUN_OMPI (Debian: openmpi-bin): the detection through PMIx alone is not run"
    exit 0
fi
# mpirun_case LABEL MPIRUN-OPTIONS...: as ternrun_case, under Open MPI's mpirun
mpirun_case() {
    label=$1
    shift
    rm -rf "$work/files"
    timeout -k 5 "$ENGINE_TIMEOUT" "$MPIRUN_OMPI" --allow-run-as-root "$@" \
        --output-filename "$work/files" "$TERN_INFO" --params </dev/null >/dev/null 2>&1 ||
        fail "$label: mpirun tern_info"
    cp "$work/files/1/rank.0/stdout" "$work/info" || fail "$label: no output of tern_info's rank 0"
    timeout -k 5 "$ENGINE_TIMEOUT" "$MPIRUN_OMPI" --allow-run-as-root "$@" "$PROG" -1 0 \
        </dev/null >"$work/job" 2>&1 || { cat "$work/job"; fail "$label: mpirun fin_stagger"; }
}
echo "# mpirun --oversubscribe, $over ranks unbound"
mpirun_case "mpirun unbound" --oversubscribe --bind-to none -n "$over"
expect_info "mpirun unbound" "$work/info" block 1 oversubscribed
grep -q "cpuset allows" "$work/info" || { cat "$work/info"; fail "mpirun unbound: not by the cpuset"; }
expect_notes "mpirun unbound" "$work/job" 1 block 1
echo "# mpirun, $over ranks bound to cores (wrapping around)"
mpirun_case "mpirun bound" --oversubscribe --bind-to core:overload-allowed -n "$over"
expect_info "mpirun bound" "$work/info" block 1 oversubscribed
grep -q "PMIX_CPUSET" "$work/info" || { cat "$work/info"; fail "mpirun bound: not by the bindings"; }
expect_notes "mpirun bound" "$work/job" 1 block 1
echo "# mpirun, $ncpu ranks bound one per CPU"
# nproc counts hardware threads, Open MPI's slots are cores unless told
# otherwise: on an SMT host `--bind-to core -n $(nproc)` is refused ("not
# enough slots").  Hardware threads as slots, one rank bound to each: nproc
# ranks with a 1-CPU mask each, on every host.
mpirun_case "mpirun one per CPU" --use-hwthread-cpus --bind-to hwthread -n "$ncpu"
expect_info "mpirun one per CPU" "$work/info" yield 2000 "not oversubscribed"
expect_notes "mpirun one per CPU" "$work/job" 0
echo "ok oversub"
