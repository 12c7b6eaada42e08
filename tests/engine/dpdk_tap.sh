#!/bin/sh
# dpdk on net_tap: block mode sleeping on the port's RX interrupt.  memif,
# af_packet and af_xdp have no receive interrupt in DPDK 22.11 (block mode
# sleeps in TERN_DPDK_SLEEP_US slices there, which the matrix tests); the
# tap PMD has one, the same rte_eth_dev_rx_intr_ctl_q path a NIC's takes.
#
# Two persistent multi-queue taps in a network namespace of this test, each
# redirecting what its DPDK side sends (the tap's ingress) to the other
# tap's egress (tc u32 + mirred: no bridge, which would take the frames for
# its own, DPDK giving each tap the port's MAC), one per rank:
#  - the whole engine suite over dpdk in block mode (TERN_HEALTH_MS=20000:
#    block_wake fails a receive woken only by that timeout);
#  - a ping-pong in block mode, TERN_SPIN_COUNT=1 (each wait sleeps): with
#    TERN_DPDK_RX_INTR=1 the RX interrupt ended at least a quarter of the
#    sleeps per message (dpdk.intr_wakeups, rank 0); with 0, none did, and
#    the ping-pong still completes on the sleep slices.
# Needs root, ip, tc with u32 + mirred, /dev/net/tun; skipped otherwise.
. "${srcdir:-.}/tests/engine/lib.sh"
INFO=${TERN_INFO:-./tern_info}
"$INFO" --netmods | grep -Eq '^netmods:.* dpdk( |$)' ||
    { echo "SKIP: no dpdk netmod in this build"; exit 77; }
[ "$(id -u)" = 0 ] && command -v ip >/dev/null && command -v tc >/dev/null &&
    [ -c /dev/net/tun ] || { echo "SKIP: needs root, ip, tc and /dev/net/tun"; exit 77; }

test_netns tern-tap
for t in 0 1; do
    inns ip tuntap add dev "ttap$t" mode tap multi_queue || fail "creating tap ttap$t"
    inns ip link set "ttap$t" up || fail "ttap$t up"
done
for t in 0 1; do
    if ! inns tc qdisc add dev "ttap$t" ingress ||
        ! inns tc filter add dev "ttap$t" parent ffff: protocol all u32 match u32 0 0 \
            action mirred egress redirect dev "ttap$((1 - t))"; then
        echo "SKIP: this kernel has no tc ingress / u32 / mirred"
        exit 77
    fi
done

TERN_NETMODS=dpdk TERN_TEST_NETMOD=dpdk TERN_WAIT_MODE=block
TERN_DPDK_VDEV='net_tap%r,iface=ttap%r'
export TERN_NETMODS TERN_TEST_NETMOD TERN_WAIT_MODE TERN_DPDK_VDEV
out=$(mktemp)
trap 'rm -f "$out"; cleanup' EXIT

# the tap PMD logs that this kernel has no multiq qdisc (no rte_flow: not
# used); every other line is kept
TERN_HEALTH_MS=20000 timeout -k 5 300 ip netns exec "$ns" "$TERNRUN" -n 2 --bind-to core \
    "$ENGINE_TESTS" all </dev/null >"$out" 2>&1
rc=$?
grep -v 'multiq\|qdisc\|rte flow support' "$out"
[ "$rc" -eq 0 ] || fail "engine suite over dpdk on net_tap, block mode"
[ "$(grep -c '^ok ' "$out")" -gt 2 ] || fail "no case reported ok"

# dpdk.intr_wakeups per message (rank 0) of a block-mode ping-pong
wakeups() {
    TERN_SPIN_COUNT=1 TERN_DPDK_RX_INTR=$1 timeout -k 5 120 ip netns exec "$ns" "$TERNRUN" \
        -n 2 --bind-to core ./tern_bench -t lat -m 8:8 -i 2000 -q --counters \
        </dev/null >"$out" 2>&1 || { cat "$out"; fail "ping-pong, TERN_DPDK_RX_INTR=$1"; }
    awk '/^# size/ { for (i = 1; i <= NF; i++) if ($i == "intr_wakeups") col = i - 1 }
         /^ +8 / && col { v = $col } END { print v == "" ? "none" : v }' "$out"
}
on=$(wakeups 1)
echo "intr_wakeups per message, TERN_DPDK_RX_INTR=1: $on"
awk -v v="$on" 'BEGIN { exit !(v != "none" && v + 0 >= 0.25) }' ||
    { cat "$out"; fail "the RX interrupt ended $on sleeps per message (want >= 0.25)"; }
off=$(wakeups 0)
echo "intr_wakeups per message, TERN_DPDK_RX_INTR=0: $off"
[ "$off" = 0.000 ] || { cat "$out"; fail "TERN_DPDK_RX_INTR=0 still slept on the interrupt"; }
echo "PASS: dpdk on net_tap, block mode on the RX interrupt"
