#!/bin/bash
# A rank killed mid-run under stock Open MPI over tern's libfabric provider
# (issue 23), on this host: tests/ompi/ompi_killed at 4 ranks (and 2), over
# shm and over tcp.  Ranks 0-1 wait on receives from and 4 MiB sends to
# ranks 2-3, which wait in a receive; once every rank is wired up and the
# first half's requests are posted, ranks 2-3 are SIGKILLed.  Then
#   - mpirun must end by itself within $OMPI_KILL_BOUND (60) s (a hang
#     catcher: Open MPI tears a job down within seconds of a rank's death;
#     no figure is asserted), with a non-zero status;
#   - no surviving rank may claim its wait succeeded ("FAIL" line) or
#     crash (a signal other than the victims' SIGKILL, tern's backtrace);
#   - every rank must have said tern was its provider;
#   - nothing of the job may be left: no rank (by the pids they printed) and
#     no process below mpirun.
# Skips (77) without Open MPI or the provider.
. "${srcdir:-.}/tests/ompi/lib.sh"
ompi_skip_unless_possible
ompi_setup
BOUND=${OMPI_KILL_BOUND:-60}
ompi_build "$OMPI_WORK" ompi_killed
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# ready_pids OUT: the pids the ranks printed ("ready RANK PID")
ready_pids() { awk '$1 == "ready" { print $3 }' "$1"; }

# one_case NM NP: start the job, wait (bounded) until its ranks are ready
# and the first half posted, kill the second half, check the end
one_case() {
    local nm=$1 np=$2 label="$1, $2 ranks" out=$OMPI_WORK/out.$1.$2 half r i left pids job rc
    local victims="" all=""
    half=$((np / 2))
    echo "=== $label: kill ranks $half..$((np - 1)) while ranks 0..$((half - 1)) wait on them"
    ompi_netmod_env "$nm"
    ompi_mpirun "$np" "${OMPI_ENV[@]}" -- "$OMPI_WORK/ompi_killed" >"$out" 2>&1 &
    job=$!
    OMPI_JOB=$job # (the trap kills it if the script is stopped)
    # every rank ready, the first half posted: bounded by the job's own limit
    for i in $(seq 1 $((${OMPI_TIMEOUT:-180} * 10))); do
        [ "$(grep -c '^ready ' "$out")" -ge "$np" ] &&
            [ "$(grep -c '^posted ' "$out")" -ge "$half" ] && break
        kill -0 "$job" 2>/dev/null || break
        sleep 0.1
    done
    if [ "$(grep -c '^ready ' "$out")" -lt "$np" ] || [ "$(grep -c '^posted ' "$out")" -lt "$half" ]; then
        pids=$(ompi_tree "$job")
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null
        wait "$job"
        cat "$out"
        fail "$label: the job did not get ready (ranks wired up, requests posted)"
        return
    fi
    for r in $(seq 0 $((np - 1))); do
        pids=$(awk -v r="$r" '$1 == "ready" && $2 == r { print $3 }' "$out")
        all="$all $pids"
        [ "$r" -ge "$half" ] && victims="$victims $pids"
    done
    # (ompi_mpirun's subshell, then timeout, then mpirun: all of it, for the
    # check that nothing remains)
    local tree
    tree=$(ompi_tree "$job")
    echo "killing$victims"
    # shellcheck disable=SC2086
    kill -KILL $victims
    for i in $(seq 1 $((BOUND * 10))); do
        kill -0 "$job" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$job" 2>/dev/null; then
        fail "$label: mpirun still ran $BOUND s after ranks$victims were killed (a hang)"
        pids=$(ompi_tree "$job")
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null
    fi
    wait "$job"
    rc=$?
    cat "$out"
    echo "mpirun exit status $rc"
    [ "$rc" -ne 0 ] || fail "$label: mpirun exited 0 although ranks$victims were killed"
    [ "$rc" -ne 124 ] || fail "$label: mpirun did not end within ${OMPI_TIMEOUT:-180} s"
    grep -q '^FAIL' "$out" && fail "$label: a surviving rank's wait succeeded"
    # the survivors end by the launcher's signal or an MPI error, never a crash
    if grep -E 'exited on signal [0-9]+' "$out" | grep -Evq 'signal 9 \(Killed\)' ||
        grep -q 'fatal signal\|Segmentation fault' "$out"; then
        fail "$label: a rank crashed"
    fi
    [ "$(ompi_provider_lines "$out")" -eq "$np" ] ||
        fail "$label: $(ompi_provider_lines "$out") of $np ranks reported 'mtl:ofi:prov: $OMPI_PROV'"
    # nothing left: the ranks and everything the job started (bounded: the
    # kernel may need a moment to reap)
    for i in $(seq 1 50); do
        left=""
        for pids in $all $tree; do
            [ -d "/proc/$pids" ] && [ "$(awk '{ print $3 }' "/proc/$pids/stat" 2>/dev/null)" != Z ] &&
                left="$left $pids"
        done
        [ -z "$left" ] && break
        sleep 0.1
    done
    if [ -n "$left" ]; then
        fail "$label: processes left after mpirun ended:$(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)" | sed 's/^/ /')"
        # shellcheck disable=SC2086
        kill -KILL $left 2>/dev/null
    fi
}

for nm in ${OMPI_NETMODS:-shm tcp}; do
    for np in ${OMPI_NPS:-4 2}; do
        one_case "$nm" "$np"
    done
done
[ "$failures" -eq 0 ] || ompi_fail "$failures check(s) failed"
echo "ok: every job ended with an error, nothing left running"
