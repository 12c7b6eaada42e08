#!/bin/sh
# The soak, short (bench/soak.sh runs the full one): every rank sends to
# every other at once, a few thousand messages of 0..1 MiB with random tags
# and spaces, over shm (2 ranks pinned; 3 ranks on 2 cores in block wait
# mode), over tcp on loopback, over verbs on the loopback device of
# tests/ibloop and over dpdk on memif with 1 % of the frames dropped, held
# back, duplicated and corrupted by its fault shim (2 and 3 ranks each; the
# dpdk runs must also show the shim at work, and with drops only, resend
# under 3 x what was dropped); each run's summary must say nothing was
# lost, corrupt or reordered.  Then the checker must fail when
# it should: a damaged message (also a 0-byte one, whose tag is damaged) is
# counted corrupt, and a message the sender skips is counted lost within
# the timeout, both with a non-zero exit.
# The seed is random unless SOAK_SEED is set; every run prints it.
. "${srcdir:-.}/tests/engine/lib.sh"
SOAK=${SOAK:-./tests/soak/soak}
SEED=${SOAK_SEED:-$(($(date +%s) % 1000000))}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "# soak seed $SEED (re-run: SOAK_SEED=$SEED)"

# soak NP "ternrun options" SOAK-ARGS...: output in $out, status returned
soak() {
    np=$1; opts=$2; shift 2
    echo "+ $TERNRUN -n $np $opts $SOAK --seed $SEED $*"
    # shellcheck disable=SC2086
    timeout 120 "$TERNRUN" -n "$np" $opts "$SOAK" --seed "$SEED" "$@" </dev/null >"$out" 2>&1
    rc=$?
    cat "$out"
    return $rc
}
# summary NETMOD NP MESSAGES COUNTS: the summary line names them
summary() {
    grep -Eq "^soak: netmod=$1 ranks=$2 messages=$3 bytes=[0-9]+ $4 " "$out"
}
clean="lost=0 corrupt=0 reordered=0 errors=0"

soak 2 "" -n 3000 -s 1M || fail "shm, 2 ranks: exit status"
summary shm 2 6000 "$clean" || fail "shm, 2 ranks: summary"
TERN_WAIT_MODE=block
export TERN_WAIT_MODE
soak 3 "--bind-to none" -n 2000 -s 1M || fail "shm, 3 ranks, block mode: exit status"
summary shm 3 6000 "$clean" || fail "shm, 3 ranks, block mode: summary"
unset TERN_WAIT_MODE

TERN_NETMODS=tcp TERN_TCP_ADDRS=127.0.0.1 # one host: stay on loopback
export TERN_NETMODS TERN_TCP_ADDRS
soak 2 "" -n 3000 -s 1M || fail "tcp, 2 ranks: exit status"
summary tcp 2 6000 "$clean" || fail "tcp, 2 ranks: summary"
soak 3 "--bind-to none" -n 2000 -s 1M || fail "tcp, 3 ranks: exit status"
summary tcp 3 6000 "$clean" || fail "tcp, 3 ranks: summary"
unset TERN_NETMODS TERN_TCP_ADDRS

if ${TERN_INFO:-./tern_info} --netmods | grep -Eq '^netmods:.* verbs( |$)'; then
    # verbs alone, through the loopback device (netmods/verbs/test.env)
    (set -a && . "${srcdir:-.}/netmods/verbs/test.env" && set +a &&
        TERN_NETMODS=verbs && export TERN_NETMODS &&
        soak 2 "" -n 3000 -s 1M && summary verbs 2 6000 "$clean" &&
        soak 3 "--bind-to none" -n 2000 -s 1M && summary verbs 3 6000 "$clean") ||
        fail "verbs: a run failed or its summary is not clean"
fi

if ${TERN_INFO:-./tern_info} --netmods | grep -Eq '^netmods:.* dpdk( |$)'; then
    (set -a && . "${srcdir:-.}/netmods/dpdk/test.env" && set +a &&
        TERN_NETMODS=dpdk &&
        TERN_DPDK_FAULTS="drop=0.01,hold=0.01,dup=0.01,corrupt=0.01,seed=$SEED" &&
        export TERN_NETMODS TERN_DPDK_FAULTS &&
        # corrupt= without the CRC would deliver the flipped bytes: refused
        ! soak 2 "" -n 10 -s 1K &&
        grep -q "tern_init: .*TERN_DPDK_CSUM=1" "$out" &&
        TERN_DPDK_CSUM=1 && export TERN_DPDK_CSUM &&
        soak 2 "" -n 2000 -s 1M --counters && summary dpdk 2 4000 "$clean" &&
        grep -Eq '^soak: rank 0: dpdk\.fault_dropped=[1-9]' "$out" &&
        grep -Eq '^soak: rank 0: dpdk\.retransmits=[1-9]' "$out" &&
        grep -Eq '^soak: rank 0: dpdk\.csum_errors=[1-9]' "$out" &&
        soak 3 "--bind-to none" -n 1000 -s 1M && summary dpdk 3 3000 "$clean") ||
        fail "dpdk with faults: a run failed, its summary is not clean, or no fault was injected"
    # Loss recovery resends what was lost, not what it cannot see: with
    # drops only, the retransmissions of both ranks stay under 3 x the
    # frames dropped (measured 1.27-1.45; 6.5 when a frame missing from the
    # one SACK block reported was taken for lost, 7.6 before SACK blocks).
    # A count, not a time.
    (set -a && . "${srcdir:-.}/netmods/dpdk/test.env" && set +a &&
        TERN_NETMODS=dpdk TERN_DPDK_FAULTS="drop=0.01,seed=$SEED" &&
        export TERN_NETMODS TERN_DPDK_FAULTS &&
        soak 2 "" -n 2000 -s 1M --counters && summary dpdk 2 4000 "$clean") ||
        fail "dpdk with 1 % drops: a run failed or its summary is not clean"
    counts=$(awk -F'[=: ]+' '/dpdk\.retransmits=/ { r += $NF } /dpdk\.fault_dropped=/ { d += $NF }
        END { print r + 0, d + 0 }' "$out")
    echo "dpdk with 1 % drops: retransmissions, frames dropped: $counts"
    echo "$counts" | awk '{ exit !($2 > 0 && $1 < 3 * $2) }' ||
        fail "dpdk with 1 % drops: $counts: retransmissions not under 3 x the drops (or no drop)"
fi

# The checker can fail: one byte flipped in rank 0's 123rd message...
soak 2 "" -n 500 -s 1M --inject-corrupt 123 && fail "a corrupt message went unnoticed"
summary shm 2 999 "lost=0 corrupt=1 reordered=0 errors=0" || fail "corruption not counted once"
grep -q "^soak: rank 0: from 1 seq [0-9]* space [0-9]* ([0-9]* bytes): byte " "$out" ||
    fail "the corrupt byte was not named"
# ... one 0-byte message whose tag is damaged (-s 0: every message is empty)...
soak 2 "" -n 100 -s 0 --inject-corrupt 7 && fail "a damaged 0-byte message went unnoticed"
summary shm 2 199 "lost=0 corrupt=1 reordered=0 errors=0" || fail "0-byte corruption not counted"
# ... and a message the last rank never sends: found lost when the time is up
# (the soak's own --timeout ends the run: the summary line below is its
# report, which a run killed from outside never prints; no time bound)
soak 2 "" -n 500 -s 1M --inject-drop 50 --timeout 3 && fail "a lost message went unnoticed"
grep -Eq "^soak: netmod=shm ranks=2 messages=[0-9]+ bytes=[0-9]+ lost=[1-9]" "$out" ||
    fail "the lost message was not counted"
grep -q "^soak: rank 1: injected loss: seq 49 to rank 0 not sent" "$out" || fail "no loss injected"
echo "soak: all runs as expected"
