#!/bin/bash
# A clean finalize across hosts says nothing (issue 21, defect 6): 4 ranks
# on 2 namespace hosts under Open MPI's mpirun, shm inside a host and tcp
# across.  Open MPI (like Slurm) releases the finalize fence to the hosts at
# different times, so one host's ranks close their connections while the
# other's still wait in the fence: before the close handshake these read
# the EOF and warned "connection to rank N failed: ... closed by the peer
# (EOF)" in most jobs, with exit 0.
#
# fin_stagger, $MN_FIN_RUNS jobs in each of the yield and block wait modes,
# one rank sleeping 50 ms before tern_finalize while the others go straight
# in (none, rank 0, rank 3: in turn).  Any warning of tern's (not Open MPI's)
# or a failure fails it (tests/engine/fin_check.sh, shared with
# finalize_tcp.sh).
# A host that dies is still a failure: host_killed.sh.
. "${srcdir:-.}/tests/multinode/lib.sh"
. "${srcdir:-.}/tests/engine/fin_check.sh"
PROG=${FIN_STAGGER:-./tests/fin_stagger}
TERN_INFO=${TERN_INFO:-./tern_info}
RUNS=${MN_FIN_RUNS:-8}
[ -x "$PROG" ] || mn_fail "$PROG not built"
"$TERN_INFO" --netmods | grep -Eq '^netmods:.* tcp( |$)' ||
    mn_skip "no tcp netmod in this build: nothing reaches the other host"
mn_skip_unless_possible
mn_setup
MN_TIMEOUT=${MN_FIN_TIMEOUT:-120} # one job takes about a second: a hang is a failure
export TERN_NETMODS=shm,tcp
out=$MN_DIR/out
for mode in yield block; do
    for i in $(seq 0 $((RUNS - 1))); do
        case $((i % 3)) in 0) sleeper=-1 ;; 1) sleeper=0 ;; *) sleeper=3 ;; esac
        TERN_WAIT_MODE=$mode fin_job "$out" "$mode mode, job $((i + 1)) of $RUNS (late rank: $sleeper)" 0 \
            mn_mpirun 4 "$PROG" "$sleeper" 50 || exit 1
    done
    echo "ok: $RUNS jobs across 2 hosts in $mode mode finalized without a warning"
done
