#!/bin/sh
# tern's MPI layer: intercommunicators and dynamic processes (issue 24;
# docs/mpi.md).  Two plain MPI programs (mpi_inter passes under MPICH too,
# mpi_spawn's spawn part under Open MPI: Debian's MPICH has no dynamic
# processes) built with the build tree's ternmpicc (the project's warnings,
# -Werror) and run through ternrun:
#  - mpi_inter (intercommunicators: creation, point to point, every
#    collective with MPI_ROOT / MPI_PROC_NULL, merge, dup / split / create /
#    idup / free, errors) at 1 to 4 ranks over shm and over tcp, again with
#    two workers per rank and with the collectives' long-message thresholds
#    at 1;
#  - mpi_spawn within (ports and MPI_Comm_join inside the job) at 1 to 4
#    ranks over shm and over tcp; with spawned jobs (spawn, spawn_multiple,
#    two jobs that meet through the name service and join) at 1 to 4 ranks
#    over tcp and with every netmod (shm inside each job, tcp between
#    them), and with two workers; and over shm alone, where no netmod takes
#    ports, MPI_Comm_spawn must fail at once with MPI_ERR_SPAWN (refused).
# Every run is bounded by timeout; each process of every job prints one
# "ok ..." line, counted.
set -u
fail() { echo "FAIL: $*"; exit 1; }
srcdir=${srcdir:-.}
work=$(mktemp -d "${TMPDIR:-/tmp}/tern-mpi-inter-test.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT
[ -x ./ternmpicc ] || fail "./ternmpicc not built"
for prog in mpi_inter mpi_spawn; do
    # shellcheck disable=SC2086
    ./ternmpicc ${TERN_TEST_CFLAGS:--Wall -Werror} -O2 -I"$srcdir" \
        "$srcdir/tests/mpi/$prog.c" -o "$work/$prog" || fail "ternmpicc $prog.c"
done

# run NETMODS NP OKS PROG [ARGS...]: ternrun -n NP with TERN_NETMODS
# (empty: every netmod), the netmod's test settings; OKS "ok" lines
# expected (each process of every job prints one); extra environment in
# $env ("V=x ..."), stated
run() {
    nm=$1 np=$2 oks=$3
    shift 3
    (if [ -n "$nm" ] && [ -f "$srcdir/netmods/$nm/test.env" ]; then
         set -a; . "$srcdir/netmods/$nm/test.env"; set +a
     fi
     if [ -n "$nm" ]; then
         TERN_NETMODS=$nm; export TERN_NETMODS
     else
         unset TERN_NETMODS
         TERN_TCP_ADDRS=127.0.0.1; export TERN_TCP_ADDRS # the jobs meet on loopback
     fi
     for kv in ${env:-}; do export "${kv?}"; done
     echo "+ ${env:+$env }TERN_NETMODS=${nm:-(all)} ternrun -n $np --bind-to none $*"
     # 120 s only catches a hang: a 4-rank run with its spawned jobs takes
     # a few seconds on a busy 2-CPU VM
     timeout -k 5 120 ./ternrun -n "$np" --bind-to none "$@" </dev/null >"$work/out" 2>&1 &
     tpid=$!
     sh "$srcdir/tests/stacks.sh" 110 "$tpid" & # a hang's stacks, to the log
     spid=$!
     wait "$tpid"
     rc=$?
     kill "$spid" 2>/dev/null
     wait "$spid" 2>/dev/null
     cat "$work/out"
     [ "$rc" -eq 0 ] || exit 1
     grep -q FAIL "$work/out" && exit 1
     [ "$(grep -c '^ok ' "$work/out")" -eq "$oks" ] || exit 1
    ) || fail "$*, $np ranks over ${nm:-every netmod}${env:+ ($env)}"
}

nps="1 2 3 4"
if [ "${TERN_TEST_SANITIZED:-0}" = 1 ]; then
    nps="1 2 4"
fi
for nm in shm tcp; do
    for np in $nps; do
        [ "$nm" = shm ] && [ "$np" = 1 ] && continue # one rank: no peer, no netmod
        env="" run "$nm" "$np" "$np" "$work/mpi_inter"
        env="" run "$nm" "$np" "$np" "$work/mpi_spawn" within
    done
    env="TERN_NUM_WORKERS=2" run "$nm" 3 3 "$work/mpi_inter"
    env="TERN_MPI_BCAST_LONG=1 TERN_MPI_BCAST_MIN_PROCS=1 TERN_MPI_ALLREDUCE_LONG=1" \
        run "$nm" 4 4 "$work/mpi_inter"
done
# spawned jobs: 3 children, 3 of spawn_multiple, a server and a client job
# of 2 each, beside the np ranks
for nm in tcp ""; do
    for np in $nps; do
        env="" run "$nm" "$np" $((np + 10)) "$work/mpi_spawn" within spawn strangers
    done
done
env="TERN_NUM_WORKERS=2" run "" 2 12 "$work/mpi_spawn" within spawn strangers
env="" run shm 2 2 "$work/mpi_spawn" within refused
echo "ok mpi_inter"
