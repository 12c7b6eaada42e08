#!/bin/sh
# PMIX_NODE_OVERSUBSCRIBED (docs/ternrun.md): true when the job's ranks
# outnumber the CPUs (PUs) allowed to ternrun, false when they fit.  Also
# on a machine with more than 1024 CPUs, whose kernel refuses the 1024-bit
# cpu_set_t of sched_getaffinity (EINVAL) whatever the mask holds:
# fault_shim's TERN_SHIM_AFFINITY_BITS=4096 makes sched_getaffinity answer
# ternrun as such a kernel does.  ternrun said "not oversubscribed" there,
# however many ranks.
. "$(dirname "$0")/lib.sh"

ncpu=$(nproc) || exit 99
if [ "$ncpu" -gt 15 ]; then
    echo "SKIP: $ncpu CPUs: nproc + 1 ranks is too many for a test"
    exit 77
fi

# check NP WANT [KNOB]: every rank reads PMIX_NODE_OVERSUBSCRIBED = WANT,
# and ternrun -v says what it counted
check() {
    if [ -n "${3:-}" ]; then
        run_shim "$3" -v -n "$1" "$PROBE" oversub
    else
        run -v -n "$1" "$PROBE" oversub
    fi
    what="$1 ranks on $ncpu CPUs${3:+ ($3)}"
    expect_rc 0 "$what"
    [ "$(grep -c "^oversubscribed [0-9]* $2\$" "$OUT")" -eq "$1" ] ||
        fail "$what: PMIX_NODE_OVERSUBSCRIBED is not $2 on every rank"
    if [ "$2" = true ]; then verdict="oversubscribed"; else verdict="not oversubscribed"; fi
    expect_err "$1 ranks on the $ncpu CPUs allowed to ternrun: $verdict" "$what: ternrun -v"
}

check $((ncpu + 1)) true
check "$ncpu" false
check $((ncpu + 1)) true TERN_SHIM_AFFINITY_BITS=4096
check "$ncpu" false TERN_SHIM_AFFINITY_BITS=4096

finish
