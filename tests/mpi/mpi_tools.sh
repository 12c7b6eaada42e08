#!/bin/sh
# tern's MPI layer, the rest of MPI-3.1 outside communication (issue 24):
# mpi_tools (the tool information interface, MPI_T) and mpi_misc2 (complex
# and Fortran types, MPI_Type_create_f90_*, communicator hints,
# MPI_Comm_idup's attributes), written for any MPI (they pass under MPICH
# 4.0 too, tern's own checks under TERN_MPI_H), built with the build
# tree's ternmpicc (the project's warnings, -Werror) and run through ternrun
# at 1 to 4 ranks over shm and over tcp.  mpi_tools runs with settings in
# its environment that it reads back as control variables (TERN_MPI_TEST_*
# tell it what to expect); once more on a node of one CPU (taskset), where
# the engine's idle-wait defaults differ from the environment's, so the
# values read after MPI_Init must be those the engine uses.
set -u
fail() { echo "FAIL: $*"; exit 1; }
srcdir=${srcdir:-.}
work=$(mktemp -d "${TMPDIR:-/tmp}/tern-mpi-tools.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT
[ -x ./ternmpicc ] || fail "./ternmpicc not built"
for prog in mpi_tools mpi_misc2; do
    # shellcheck disable=SC2086
    ./ternmpicc ${TERN_TEST_CFLAGS:--Wall -Werror} -O2 -I"$srcdir" \
        "$srcdir/tests/mpi/$prog.c" -o "$work/$prog" || fail "ternmpicc $prog.c"
done

# run PROG at NP ranks over NETMOD (more VAR=value settings after them);
# every rank must print its "ok rank" line
run() {
    prog=$1 np=$2 nm=$3
    shift 3
    (if [ -f "$srcdir/netmods/$nm/test.env" ]; then
         set -a; . "$srcdir/netmods/$nm/test.env"; set +a
     fi
     TERN_NETMODS=$nm; export TERN_NETMODS
     for kv in "$@"; do export "${kv?}"; done
     echo "+ $* TERN_NETMODS=$nm ternrun -n $np --bind-to none $prog"
     # 120 s only catches a hang (each run takes about a second)
     timeout -k 5 120 ${TASKSET:-} ./ternrun -n "$np" --bind-to none "$work/$prog" \
         </dev/null >"$work/out" 2>&1
     rc=$?
     cat "$work/out"
     [ "$rc" -eq 0 ] || exit 1
     [ "$(grep -c '^ok rank' "$work/out")" -eq "$np" ] || exit 1
    ) || fail "$prog, $np ranks over $nm"
}

# settings mpi_tools reads back as control variables: one of the engine's,
# one of the MPI layer's, one netmod's (shm's, used or not), a string and a
# choice; the same-host copy on (tcp's test.env turns it off) from 64 KiB,
# so that its counters count the program's 1 MiB messages on both netmods
set_env="TERN_MPI_BCAST_LONG=4096 TERN_SPIN_COUNT=777 TERN_SHM_NUM_CELLS=32
TERN_CMA=all TERN_CMA_THRESHOLD=64k TERN_MPI_TEST_SETTINGS=1"
for nm in shm tcp; do
    for np in 1 2 3 4; do
        [ "$nm" = shm ] && [ "$np" = 1 ] && continue # one rank: no peer, no netmod
        # shellcheck disable=SC2086
        run mpi_tools "$np" "$nm" $set_env
        run mpi_misc2 "$np" "$nm"
    done
done
# more ranks than CPUs: the engine waits in block mode with one spin
# (engine/oversub.c) whatever the environment's default says
if command -v taskset >/dev/null; then
    TASKSET="taskset -c 0"
    run mpi_tools 2 shm TERN_MPI_TEST_OVERSUBSCRIBED=1
    TASKSET=
else
    echo "# no taskset: the oversubscribed run is skipped"
fi
echo "ok mpi_tools"
