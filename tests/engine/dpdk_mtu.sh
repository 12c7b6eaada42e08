#!/bin/sh
# dpdk frame sizes on kernel interfaces: a veth pair in a network namespace
# of this test, one end per rank (TERN_DPDK_VDEV's %r), both ranks on this
# host.  netmods/dpdk/dpdk_devargs.c: af_packet takes the interface's MTU by
# default (its ring frames are sized for it) though ethdev calls it a
# 1500-byte device; af_xdp takes it too, as far as its UMEM chunk (a page)
# and the veth's XDP limit allow.
#  - af_packet, veth MTU 9000: a 4 MiB message must go in fewer than 600
#    frames (dpdk.tx_frames per message, rank 0: ~466 at 9000, ~2880 at
#    1500), and every byte arrives (tern_bench checks nothing, the engine
#    suite's large and sizes cases do: run over the same ports);
#  - af_packet with TERN_DPDK_MTU=1500 on that veth: back to ~2880 frames
#    (at least 2500);
#  - af_xdp, veth MTU 3498: frames of ~3500 bytes arrive (the pool leaves
#    room for XDP's own headroom: without it every full frame was dropped
#    and the VC timed out), in fewer than 1600 frames per message (~1225).
# Needs root and ip; af_xdp also its PMD and a kernel with XDP on veth.
. "${srcdir:-.}/tests/engine/lib.sh"
INFO=${TERN_INFO:-./tern_info}
"$INFO" --netmods | grep -Eq '^netmods:.* dpdk( |$)' ||
    { echo "SKIP: no dpdk netmod in this build"; exit 77; }
[ "$(id -u)" = 0 ] && command -v ip >/dev/null || { echo "SKIP: needs root and ip"; exit 77; }

test_netns tern-mtu
# DPDK 22.11's af_packet joins a PACKET_FANOUT group (pid ^ ifindex) &
# 0xffff of the network namespace: two ranks with consecutive pids on
# interfaces 2 and 3 picked the same group and the second failed
# ("could not set PACKET_FANOUT ... Invalid argument").  Indexes whose xor
# no two nearby pids have keep the ranks' groups apart.
inns ip link add tmtu0 index 4242 type veth peer name tmtu1 index 20561 || fail "veth pair"
mtu() { inns ip link set tmtu0 mtu "$1" && inns ip link set tmtu1 mtu "$1" || fail "MTU $1"; }
mtu 9000
inns ip link set tmtu0 up && inns ip link set tmtu1 up || fail "veth up"

out=$(mktemp)
trap 'rm -f "$out"; cleanup' EXIT
TERN_NETMODS=dpdk TERN_TEST_NETMOD=dpdk TERN_CMA=off
export TERN_NETMODS TERN_TEST_NETMOD TERN_CMA

# frames VDEV [ENV...]: FRAMES = dpdk.tx_frames per 4 MiB message (rank 0)
# of a bandwidth run, after the engine's large and sizes cases over the
# ports; returns 2 (output in $out) when tern_init could not make the port
frames() {
    vdev=$1
    shift
    FRAMES=none
    if ! env TERN_DPDK_VDEV="$vdev" "$@" timeout -k 5 120 ip netns exec "$ns" "$TERNRUN" -n 2 \
        --bind-to none "$ENGINE_TESTS" large sizes </dev/null >"$out" 2>&1; then
        grep -q 'tern_init.*\(creating net_\|queue setup\)' "$out" && return 2
        cat "$out"
        fail "engine cases large, sizes over $vdev $*"
    fi
    env TERN_DPDK_VDEV="$vdev" "$@" timeout -k 5 120 ip netns exec "$ns" "$TERNRUN" -n 2 \
        --bind-to none ./tern_bench -t bw -m 4m:4m -b 64m -q --counters </dev/null >"$out" 2>&1 ||
        { cat "$out"; fail "bandwidth over $vdev $*"; }
    FRAMES=$(awk '/^# size/ { for (i = 1; i <= NF; i++) if ($i == "tx_frames") col = i - 1 }
                  /^ +4194304 / && col { v = $col } END { print v == "" ? "none" : v }' "$out")
    [ "$FRAMES" != none ] || { cat "$out"; fail "no tx_frames counter over $vdev $*"; }
}
# is $1 below $2?  (tx_frames counts retransmissions too: the bounds leave
# room for a loaded machine's, and still tell the MTUs apart)
below() { awk -v v="$1" -v l="$2" 'BEGIN { exit !(v + 0 < l) }'; }

afp='net_af_packet%r,iface=tmtu%r'
frames "$afp" || { cat "$out"; fail "af_packet port over tmtu0/1"; }
echo "af_packet, veth MTU 9000: $FRAMES frames per 4 MiB message"
below "$FRAMES" 600 || { cat "$out"; fail "af_packet on a 9000-byte veth sent $FRAMES frames per message"; }
frames "$afp" TERN_DPDK_MTU=1500 || { cat "$out"; fail "af_packet port, TERN_DPDK_MTU=1500"; }
echo "af_packet, TERN_DPDK_MTU=1500: $FRAMES frames per 4 MiB message"
! below "$FRAMES" 2500 ||
    { cat "$out"; fail "af_packet with TERN_DPDK_MTU=1500 sent $FRAMES frames per message"; }

mtu 3498
if ! ls /usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so* >/dev/null 2>&1; then
    echo "SKIP (af_xdp part): no af_xdp PMD"
elif ! frames 'net_af_xdp%r,iface=tmtu%r,start_queue=0,queue_count=1'; then
    # no XDP on this kernel's veth: the port is refused at tern_init (a
    # dropped frame, the bug this checks, times the VC out instead)
    grep 'tern_init' "$out" | head -2
    echo "SKIP (af_xdp part): tern_init could not make the af_xdp port"
else
    echo "af_xdp, veth MTU 3498: $FRAMES frames per 4 MiB message"
    below "$FRAMES" 1600 || { cat "$out"; fail "af_xdp on a 3498-byte veth sent $FRAMES frames per message"; }
fi
echo "PASS: dpdk frames take the interface's MTU (af_packet 9000, af_xdp 3498)"
