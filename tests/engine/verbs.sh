#!/bin/sh
# verbs beyond the engine matrix (tests/engine/matrix.sh runs the whole
# suite over verbs), on the loopback device of tests/ibloop (settings in
# netmods/verbs/test.env).  TERN_NETMODS=verbs keeps shm out, so every VC to
# another rank is an RC queue pair:
#  - 3 ranks: connects from every side at once (the connection manager's
#    tie-break), sizes, unexpected sizes, iovecs, truncation; again in RoCE
#    mode (GID addressing, GRH);
#  - lazy connections: 4 ranks of which only 0 and 3 talk make one RC QP
#    each and the others none;
#  - a fan-out to 39 peers whose unsignaled tails fill the send CQ's budget;
#  - an 8-byte ping-pong returns every credit on its replies (no
#    credit-only message, tern_bench --counters); a one-way stream grows
#    its grant, leaving later ranks their shares, and takes ~1 post per
#    message (IBLOOP_STATS);
#  - TERN_VERBS_DEVICE: by name and port; an absent device or port named;
#  - the key changing mid-transfer: registration windows of 64 KiB
#    (TERN_VERBS_REG_WINDOW) in get and in put, up to 64 MiB, unaligned;
#  - registrations the device refuses (IBLOOP_FAULT_REG_FAIL_AFTER, at the
#    start and in the middle of transfers): the data goes through the
#    stream instead, byte-exact; registrations above a size on one rank
#    only (IBLOOP_FAULT_REG_MAX_BYTES): its side moves smaller windows;
#  - a peer killed in the middle of an RDMA read: PEER_FAILED, no hang;
#  - one-sided puts and gets as one RDMA write / read each (counted), none
#    with TERN_VERBS_RMA=0; a refused one among others in flight;
#  - the link going down (IBLOOP_FAULT_LINK_DOWN_AFTER): the failure names
#    the peer and the work completion's status (ibv_wc_status_str);
#  - without a device (the system library, no HCA): TERN_NETMODS=verbs
#    fails tern_init with a message naming ibv_get_device_list.
. "${srcdir:-.}/tests/engine/lib.sh"
INFO=${TERN_INFO:-./tern_info}
# TERN_TEST_REAL_VERBS=1 (an HCA): the real library; the cases that need
# the loopback device's fault injection (IBLOOP_FAULT_*) are left out
verbs_only
out=$(mktemp)
trap 'rm -f "$out"' EXIT

run_engine 3 "--bind-to none" sizes sizes_unexpected wildcard_order iov truncate \
    || fail "engine cases over verbs, 3 ranks"

# RoCE: the loopback device's Ethernet link layer, addressed by GID (the
# IPv4-mapped one at index 1), a GRH on every address vector
if [ "$ibloop" = yes ]; then
    IBLOOP_LINK_LAYER=ethernet TERN_VERBS_GID_INDEX=1 IBLOOP_FABRIC=$IBLOOP_FABRIC-roce \
        run_engine 3 "--bind-to none" sizes large iov truncate || fail "engine cases over RoCE"
fi

# the device chosen by name and port; a device or port that is not there
# fails tern_init naming it
if [ "$ibloop" = yes ]; then
    TERN_VERBS_DEVICE=ibloop0:1 run_engine 2 "" sizes || fail "TERN_VERBS_DEVICE=ibloop0:1"
    for dev in mlx5_0 ibloop0:2; do
        TERN_VERBS_DEVICE=$dev run_engine 2 "" self >"$out" 2>&1 &&
            fail "TERN_VERBS_DEVICE=$dev (not there) was accepted"
        grep -Eq "tern_init: .*verbs: (no device mlx5_0 |TERN_VERBS_DEVICE asks for port 2 of ibloop0)" "$out" ||
            { cat "$out"; fail "TERN_VERBS_DEVICE=$dev: the failure does not name it"; }
    done
fi

run_engine 4 "--bind-to none" lazy_connect >"$out" 2>&1 || { cat "$out"; fail "lazy_connect"; }
cat "$out"
[ "$(grep -c '^lazy_connect: rank [03]: 1 connection(s)$' "$out")" -eq 2 ] ||
    fail "ranks 0 and 3 did not make exactly one connection each"
[ "$(grep -c '^lazy_connect: rank [12]: 0 connection(s)$' "$out")" -eq 2 ] ||
    fail "ranks 1 and 2, which never talked, made connections"

# 40 ranks, small send queues, no keepalive: rank 0's unsignaled tails to
# all 39 peers together exceed the send CQ's budget; posting must still go
# on (signalled near the limit, tails flushed), not hang
TERN_VERBS_KEEPALIVE_MS=0 TERN_VERBS_TX_DEPTH=16 TERN_VERBS_SIGNAL_EVERY=8 ENGINE_TIMEOUT=120 \
    run_engine 40 "--bind-to none" fanout >"$out" 2>&1 || { cat "$out"; fail "fanout to 39 peers"; }
[ "$(grep -c '^ok fanout' "$out")" -eq 40 ] || { cat "$out"; fail "fanout: not every rank ok"; }

for mode in get put; do
    TERN_LMT_MODE=$mode TERN_VERBS_REG_WINDOW=65536 run_engine 2 "--bind-to none" large truncate \
        || fail "$mode in 64 KiB registration windows (a new key per window)"
done

# registrations after the first N fail (each rank registers 4 buffer slabs
# at tern_init): 4, no user buffer can be registered; 7, registrations start
# failing between the windows of a transfer
[ "$ibloop" = yes ] && for mode in get put; do
    for after in 4 7; do
        TERN_LMT_MODE=$mode TERN_VERBS_REG_WINDOW=1048576 IBLOOP_FAULT_REG_FAIL_AFTER=$after \
            run_engine 2 "--bind-to none" large >"$out" 2>&1 ||
            { cat "$out"; fail "$mode with registrations failing after $after"; }
    done
done

# rank 0 alone cannot register more than 48 MiB (a memlock limit, a full
# translation table): its 64 MiB transfers, active or exposed, go in 16 MiB
# windows while rank 1's go whole, and the windows still meet
[ "$ibloop" = yes ] && for mode in get put; do
    TERN_LMT_MODE=$mode timeout 120 "$TERNRUN" -n 2 --bind-to none sh -c \
        'if [ "$PMIX_RANK" = 0 ]; then IBLOOP_FAULT_REG_MAX_BYTES=50331648; export IBLOOP_FAULT_REG_MAX_BYTES; fi
         exec "$0" large' "$ENGINE_TESTS" </dev/null >"$out" 2>&1 ||
        { cat "$out"; fail "$mode with rank 0's registrations limited to 48 MiB"; }
done

# one-sided: puts and gets are one RDMA write or read each on the VC's RMA
# QP (verbs.post_send counts every post; the stream's own may add at most
# 8 in the run), none with TERN_VERBS_RMA=0
TERN_TEST_RMA_NATIVE=1 run_engine 2 "--bind-to none" rma_native >"$out" 2>&1 ||
    { cat "$out"; fail "rma_native: puts and gets not one post each"; }
cat "$out"
TERN_VERBS_RMA=0 TERN_TEST_RMA_NATIVE=0 run_engine 2 "--bind-to none" rma_native >"$out" 2>&1 ||
    { cat "$out"; fail "rma_native with TERN_VERBS_RMA=0"; }
# device atomics (TERN_REGION_ATOMIC_DEVICE, created and allocated
# regions): every rank's fetch-adds and compare-and-swaps on every rank's
# region give exact totals and one winner; each on a peer's region is one
# RDMA atomic, each on its own one loopback atomic; a second worker's first
# atomics wait for its VCs to connect and stay in order; none with
# TERN_VERBS_AMO=0 (packets and the target's CPU), same totals
for np in 2 3; do
    TERN_NUM_WORKERS=2 TERN_TEST_AMO_DEVICE=1 run_engine $np "--bind-to none" rma_amo_device rma_amo_device_alloc \
        >"$out" 2>&1 || { cat "$out"; fail "device atomics at $np ranks"; }
    cat "$out"
done
TERN_VERBS_AMO=0 TERN_TEST_AMO_DEVICE=0 run_engine 2 "--bind-to none" rma_amo_device \
    rma_amo_device_alloc >"$out" 2>&1 || { cat "$out"; fail "TERN_VERBS_AMO=0"; }
# a destroyed device region: its atomics refused by the owner's device
run_engine 2 "--bind-to none" rma_amo_device_gone >"$out" 2>&1 ||
    { cat "$out"; fail "device atomics on a destroyed region"; }
# a put refused by the target's device (its region destroyed) among others
# in flight: it alone is refused (the flush says so), what was posted
# behind it goes back to the engine and out as packets (rma.replayed),
# device atomics among them still fetching in order
for np in 2 3; do
    run_engine $np "--bind-to none" rma_replay >"$out" 2>&1 ||
        { cat "$out"; fail "rma_replay at $np ranks"; }
    cat "$out"
    grep -Eq '^rma_replay: rank [0-9]: [1-9][0-9]* operations replayed' "$out" ||
        fail "rma_replay at $np ranks: no operation came back from the failed RMA QP"
done

# credits go back on the replies of a ping-pong, never in a message of
# their own (each waits one poll for the reply; a stream still gets them)
timeout 120 "$TERNRUN" -n 2 --bind-to none ./tern_bench -t lat -m 8:8 -i 3000 -w 0 -q --counters \
    </dev/null >"$out" 2>&1 || { cat "$out"; fail "tern_bench --counters over verbs"; }
cm=$(awk '/^# size/ { for (i = 1; i <= NF; i++) if ($i == "credit_msgs") c = i - 1 }
          c && /^ +8 / { print $c; exit }' "$out")
[ "$cm" = 0.000 ] || { cat "$out"; fail "an 8-byte ping-pong sent credit-only messages ($cm per message)"; }

# a one-way stream: rank 0 never answers, so its credits go back in
# messages of their own and the grant grows (TERN_VERBS_CREDITS_MAX) from
# SRQ room no other rank's share needs: with 200 buffers the first
# streamer's growth must leave rank 2 its full grant (no "queue full")
TERN_VERBS_SRQ_MAX=200 run_engine 3 "--bind-to none" stream_in >"$out" 2>&1 ||
    { cat "$out"; fail "stream_in at 3 ranks"; }
g=$(sed -n 's/^stream_in: rank 0: after rank 1: grants_grown \([0-9]*\)$/\1/p' "$out")
[ "${g:-0}" -ge 1 ] || { cat "$out"; fail "stream_in: rank 1's one-way stream grew no grant"; }
! grep -q "receive queue full" "$out" ||
    { cat "$out"; fail "stream_in: the grown grant left rank 2 short of its share"; }
if [ "$ibloop" = yes ]; then
    # and the posts per message of tern_bench's stream (no ack per window)
    # as the device counts them, both processes: ~1.06 with the grant held
    # at 32, where every 16 messages took a credit message
    for cmax in 512 32; do
        rm -f "$out.stats"
        TERN_VERBS_CREDITS_MAX=$cmax IBLOOP_STATS="$out.stats" timeout 120 "$TERNRUN" -n 2 \
            --bind-to none ./tern_bench -t stream -m 8:8 -i 2000 -w 0 -q </dev/null >"$out" 2>&1 ||
            { cat "$out"; fail "tern_bench -t stream over verbs (TERN_VERBS_CREDITS_MAX=$cmax)"; }
        grep -Eq '^8 +[0-9]+ ' "$out" || { cat "$out"; fail "tern_bench -t stream printed no figure"; }
        ps=$(awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); t[kv[1]] += kv[2] } }
                  END { printf "%.4f\n", t["post_send"] / (2000 * 64) }' "$out.stats")
        echo "one-way 8-byte stream, TERN_VERBS_CREDITS_MAX=$cmax: $ps ibv_post_send per message"
        case $cmax in
        512) awk -v p="$ps" 'BEGIN { exit !(p <= 1.01) }' ||
            fail "a one-way stream took $ps posts per message (credit messages: the grant did not grow)" ;;
        32) awk -v p="$ps" 'BEGIN { exit !(p > 1.03) }' ||
            fail "with the grant held at 32 the stream took $ps posts per message: the check above proves nothing" ;;
        esac
    done
    rm -f "$out.stats"
fi

TERN_LMT_MODE=get run_engine 2 "-v --kill-grace 20" peer_killed >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -ne 0 ] || fail "ternrun exited 0 although rank 1 was killed"
grep -q "^ok peer_killed (rank 0)" "$out" || fail "rank 0 did not see its verbs peer fail"

# the fault on rank 0 only: its link goes down after 100 posted sends
if [ "$ibloop" = yes ]; then
timeout 120 "$TERNRUN" -n 2 --bind-to none sh -c \
    'if [ "$PMIX_RANK" = 0 ]; then IBLOOP_FAULT_LINK_DOWN_AFTER=100; export IBLOOP_FAULT_LINK_DOWN_AFTER; fi
     exec "$0" link_down' "$ENGINE_TESTS" </dev/null >"$out" 2>&1
cat "$out"
grep -q "^link_down: rank 0: peer process failed after [0-9]* rounds: .*rank 1.*(work request" "$out" ||
    fail "the link-down failure does not name the peer and the work request"
grep -q "^ok link_down (rank 0)" "$out" || fail "link_down: rank 0's checks failed"
fi

# no device: the system library on a machine without an HCA
if [ -z "${TERN_TEST_REAL_VERBS:-}" ] &&
    env -u LD_LIBRARY_PATH "$INFO" --netmods | grep -q "unusable in this process: no verbs device"; then
    (unset LD_LIBRARY_PATH LD_BIND_NOW
     run_engine 2 "" self) >"$out" 2>&1 && fail "TERN_NETMODS=verbs started without a device"
    grep -q "verbs: no verbs device (ibv_get_device_list" "$out" ||
        { cat "$out"; fail "the missing device is not named"; }
fi
echo "verbs: all checks passed"
