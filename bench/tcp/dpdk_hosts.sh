#!/bin/bash
# dpdk_hosts.sh — tern_bench over the dpdk netmod between two namespace
# hosts (tests/multinode/lib.sh, Open MPI's mpirun), on a veth pair of
# their own (tdx), with the netmod's counters: where a transfer's time goes
# (frames, acks, bursts, window full ...).  Removes the hosts when done.
#
# Usage (root, from the build directory):
#   bench/tcp/dpdk_hosts.sh afpkt|afxdp MTU [NAME=VALUE ...] [-- TERN_BENCH-ARGS...]
# e.g. bench/tcp/dpdk_hosts.sh afpkt 1500 TERN_DPDK_WINDOW=1024
# The default tern_bench arguments: -t bw -m 4m -b 256m --counters
set -u
[ $# -ge 2 ] || { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
kind=$1 mtu=$2
shift 2
SRC=$(cd "$(dirname "$0")/../.." && pwd)
srcdir=$SRC
# shellcheck source=../../tests/multinode/lib.sh
. "$SRC/tests/multinode/lib.sh"
mn_skip_unless_possible
mn_setup >/dev/null
case $kind in
afpkt) vdev=net_af_packet0,iface=tdx ;;
afxdp) vdev=net_af_xdp0,iface=tdx,start_queue=0,queue_count=1 ;;
*) mn_fail "kind $kind: afpkt or afxdp" ;;
esac
ip link add tdx netns "$MN_NS1" type veth peer name tdx netns "$MN_NS2" || mn_fail "veth tdx"
for ns in "$MN_NS1" "$MN_NS2"; do
    ip -n "$ns" link set tdx mtu "$mtu" up || mn_fail "tdx MTU $mtu"
done
printf 'rank 0=%s slot=0\nrank 1=%s slot=1\n' "$MN_NS1" "$MN_NS2" >"$MN_DIR/rankfile"
export TERN_NETMODS=dpdk TERN_DPDK_VDEV=$vdev
while [ $# -gt 0 ] && [ "$1" != -- ]; do export "${1?}"; shift; done
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- -t bw -m 4m -b 256m --counters
mn_mpirun 2 --rankfile "$MN_DIR/rankfile" -- ./tern_bench "$@"
