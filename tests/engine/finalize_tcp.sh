#!/bin/sh
# A clean finalize over tcp says nothing (issue 21, defect 6).  Before the
# close handshake a rank still in the finalize fence often read the EOF of a
# peer that had already left it and warned "connection to rank N failed:
# ... closed by the peer (EOF)" with exit 0 (under ternrun in 2-10 % of the
# jobs).  Now each side says BYE as the last packet of its streams and reads
# the peer's BYE before closing (engine_internal.h, tern_vc_say_bye).
#
# fin_stagger on 4 ranks over tcp alone (every pair connected), in each of
# the yield and block wait modes:
#  - $RUNS jobs with one rank sleeping before tern_finalize while the others
#    go straight in (none, the first, the last: in turn): the race as it
#    comes;
#  - $LATE jobs where one rank (the first, the last: in turn) learns of the
#    finalize fence's end 300 ms late and goes on polling meanwhile
#    (TERN_FAULT_FENCE_LATE_MS, as under a launcher that releases the fence
#    to the nodes at different times): every one of them warned before;
#    the late rank must say, once, that the hook delayed it (a note), so
#    a hook that is not read cannot pass for one that found nothing.
# Any warning of tern's or a failure fails it (tests/engine/fin_check.sh).
# A peer that dies without finalizing is still a failure: peer_killed.sh,
# peer_exit.sh.
. "${srcdir:-.}/tests/engine/lib.sh"
TERN_INFO=${TERN_INFO:-./tern_info}
PROG=${FIN_STAGGER:-./tests/fin_stagger}
RUNS=${FIN_RUNS:-15}
LATE=${FIN_LATE_RUNS:-4}
NP=4
ENGINE_TIMEOUT=60 # one job takes well under a second: a hang is a failure
"$TERN_INFO" --netmods | grep -Eq '^netmods:.* tcp( |$)' ||
    { echo "SKIP: no tcp netmod in this build"; exit 77; }
TERN_NETMODS=tcp
TERN_TCP_ADDRS=127.0.0.1 # one host: stay on loopback
export TERN_NETMODS TERN_TCP_ADDRS
. "${srcdir:-.}/tests/engine/fin_check.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# job MODE LATE SLEEPER MS LABEL: fin_stagger on $NP ranks over tcp in wait
# mode MODE, rank SLEEPER (-1: none) sleeping MS ms before tern_finalize,
# rank LATE (-1: none) told of the finalize fence's end 300 ms late.  Only
# rank LATE gets the hook (ternrun gives every rank the same environment):
# a shell between ternrun and the program sets it.
job() {
    notes=0
    [ "$2" -ge 0 ] && notes=1
    fin_job "$out" "$1 mode, $5" "$notes" \
        env TERN_WAIT_MODE="$1" timeout -k 5 "$ENGINE_TIMEOUT" "$TERNRUN" -n "$NP" --bind-to none \
        sh -c 'if [ "$PMIX_RANK" = "$1" ]; then TERN_FAULT_FENCE_LATE_MS=300
               export TERN_FAULT_FENCE_LATE_MS; fi; shift; exec "$@"' \
        fin_stagger "$2" "$PROG" "$3" "$4" || exit 1
}

for mode in yield block; do
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        case $((i % 3)) in 0) sleeper=-1 ;; 1) sleeper=0 ;; *) sleeper=$((NP - 1)) ;; esac
        job "$mode" -1 "$sleeper" 50 "job $((i + 1)) of $RUNS (rank $sleeper sleeping; -1: none)"
        i=$((i + 1))
    done
    i=0
    while [ "$i" -lt "$LATE" ]; do
        late=$(((i % 2) * (NP - 1)))
        job "$mode" "$late" -1 0 "job $((i + 1)) of $LATE (rank $late told of the fence's end 300 ms late)"
        i=$((i + 1))
    done
    echo "ok: $RUNS + $LATE jobs of $NP ranks over tcp in $mode mode finalized without a warning" \
        "($LATE with the late rank's note)"
done
