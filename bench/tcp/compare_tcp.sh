#!/bin/bash
# compare_tcp.sh — TCP across two namespace "hosts" joined by a veth pair
# (set up by tests/multinode/lib.sh, removed when the script ends), three
# contenders interleaved round by round in one run:
#
#   kernel   bench/tcp/tcp_pingpong: plain kernel TCP, TCP_NODELAY, blocking
#            recv ("kernel") and polling with MSG_DONTWAIT ("kernel-spin")
#   ucx      ucx_perftest with UCX_TLS=tcp (tag_lat -s 8, tag_bw -s 4 MiB)
#   tern     tern's tcp netmod: tern_bench on 2 ranks, one per host, under
#            Open MPI's mpirun (--tern), or the command given with
#            --tern-cmd; skipped with a note when neither is given
#   NAME     any number of further contenders, --tern-as NAME 'COMMAND'
#            (same contract as --tern-cmd); --dpdk adds the dpdk netmod's:
#            dpdk-afxdp (net_af_xdp, copy mode) and dpdk-afpkt
#            (net_af_packet), both on a veth pair of their own between the
#            hosts (tdx: af_xdp takes every frame of its queue, so not the
#            pair mpirun talks over)
#
# The server side runs in host 2 pinned to core B, the client in host 1
# pinned to core A (--cores A,B; default 0,1).  Prints every round, then
# medians and the ratios between them.
#
# Usage (root; from the build directory or with --builddir):
#   bench/tcp/compare_tcp.sh [--rounds R] [--lat-iters N] [--bw-mib M]
#                            [--cores A,B] [--builddir DIR] [--json FILE]
#                            [--tern | --tern-cmd 'COMMAND']
#                            [--tern-as NAME 'COMMAND']... [--dpdk] [--mtu N]
#
# --mtu N sets the MTU of the hosts' veth pair before the first round, and
# of tdx before each dpdk contender's run: 9000 gives every contender jumbo
# frames (kernel TCP over veth segments by GSO whatever the MTU; the dpdk
# netmod takes the interface's MTU by default, netmods/dpdk/dpdk_devargs.c;
# dpdk-afxdp runs with tdx at most 3498, the largest MTU a veth takes XDP
# with).  The host line names the CPU, caches, kernel, DPDK and the MTUs;
# after the medians come the per-round ratios (median and spread) of every
# contender against kernel and kernel-spin.
#
# Units: latency one-way (round trip / 2) in us for 8-byte messages;
# bandwidth for 4 MiB messages in MB/s with MB = 1e6 bytes (ucx_perftest's
# MB/s are MiB/s: converted x 1.048576).
#
# --tern-cmd: run by bash -c once per round and test with these variables in
# its environment: TEST (lat|bw), SIZE (8 or 4194304), ITERS (lat
# iterations), BW_BYTES, CORE_A, CORE_B, MN_NS1, MN_NS2, MN_ADDR1, MN_ADDR2,
# MN_IF1, MN_IF2, MN_HOSTFILE, MN_AGENT, MN_DIR, MN_RANKFILE (rank 0 on
# host 1 core A, rank 1 on host 2 core B), TERN_BUILDDIR, and the function
# mn_mpirun (tests/multinode/lib.sh).  Its output must contain a line
# "SIZE VALUE" (what tern_bench -q prints); VALUE is taken from the last.
# --tern is the same as
#   --tern-cmd "$TERN_DEFAULT_CMD"   (printed by --help below)
set -u

# tern_bench between rank 0 (host 1, core A) and rank 1 (host 2, core B)
# shellcheck disable=SC2016
TERN_DEFAULT_CMD='mn_mpirun 2 --rankfile "$MN_RANKFILE" -- "$TERN_BUILDDIR/tern_bench" -t "$TEST" -m "$SIZE" -q $([ "$TEST" = lat ] && echo -i "$ITERS" || echo -b "$BW_BYTES")'
usage() {
    sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
    echo "TERN_DEFAULT_CMD: $TERN_DEFAULT_CMD"
    exit 2
}

ROUNDS=5
LAT_ITERS=20000
BW_MIB=256
CORES=0,1
BUILDDIR=.
JSON=
TERN_CMD=
EXTRA_NAMES=()
EXTRA_CMDS=()
DPDK=0
# the dpdk contenders (--dpdk): TERN_DPDK_VDEV for the tdx link, as TERN_DEFAULT_CMD
# shellcheck disable=SC2016
DPDK_CMD='export TERN_NETMODS=dpdk TERN_DPDK_VDEV=$VDEV; '$TERN_DEFAULT_CMD
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    --lat-iters) LAT_ITERS=$2; shift 2 ;;
    --bw-mib) BW_MIB=$2; shift 2 ;;
    --cores) CORES=$2; shift 2 ;;
    --builddir) BUILDDIR=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    --tern-cmd) TERN_CMD=$2; shift 2 ;;
    --tern) TERN_CMD=$TERN_DEFAULT_CMD; shift ;;
    --tern-as) EXTRA_NAMES+=("$2"); EXTRA_CMDS+=("$3"); shift 3 ;;
    --dpdk) DPDK=1; shift ;;
    --mtu) MTU=$2; shift 2 ;;
    -h | --help) usage ;;
    *) echo "$0: unknown option $1" >&2; usage ;;
    esac
done
CORE_A=${CORES%,*}
CORE_B=${CORES#*,}
BW_SIZE=4194304
BW_BYTES=$((BW_MIB << 20))
BUILDDIR=$(cd "$BUILDDIR" && pwd) || exit 2
SRC=$(cd "$(dirname "$0")/../.." && pwd)

PINGPONG=$BUILDDIR/bench/tcp/tcp_pingpong
[ -x "$PINGPONG" ] || { echo "$0: $PINGPONG not built (make bench/tcp/tcp_pingpong)" >&2; exit 2; }
UCX_PERFTEST=$(command -v ucx_perftest) || UCX_PERFTEST=
[ -n "$UCX_PERFTEST" ] || echo "note: ucx_perftest not found (Debian: ucx-utils): UCX skipped"
[ "$(id -u)" -eq 0 ] || { echo "$0: needs root (ip netns)" >&2; exit 2; }

srcdir=$SRC
# shellcheck source=../../tests/multinode/lib.sh
. "$SRC/tests/multinode/lib.sh"
mn_skip_unless_netns
mn_setup
MN_RANKFILE=$MN_DIR/rankfile
if [ "$DPDK" = 1 ]; then
    ip link add tdx netns "$MN_NS1" type veth peer name tdx netns "$MN_NS2" &&
        ip -n "$MN_NS1" link set tdx up && ip -n "$MN_NS2" link set tdx up ||
        { echo "$0: the tdx veth pair for dpdk" >&2; exit 2; }
    # af_xdp: a veth takes an XDP program only up to MTU ~3500 (the kernel:
    # "veth: Peer MTU is too large to set XDP"), so its run sets tdx to at
    # most 3498 and af_packet's sets it back
    TDX_MTU=${MTU:-1500}
    XDP_MTU=$((TDX_MTU > 3498 ? 3498 : TDX_MTU))
    tdx_mtu() { echo "ip -n $MN_NS1 link set tdx mtu $1 && ip -n $MN_NS2 link set tdx mtu $1 &&"; }
    EXTRA_NAMES+=(dpdk-afxdp dpdk-afpkt)
    EXTRA_CMDS+=("$(tdx_mtu "$XDP_MTU") VDEV=net_af_xdp0,iface=tdx,start_queue=0,queue_count=1; $DPDK_CMD"
        "$(tdx_mtu "$TDX_MTU") VDEV=net_af_packet0,iface=tdx; $DPDK_CMD")
fi
# (tdx's MTU is set by each dpdk contender's command, tdx_mtu above)
if [ -n "$MTU" ]; then
    ip -n "$MN_NS1" link set "$MN_IF1" mtu "$MTU" && ip -n "$MN_NS2" link set "$MN_IF2" mtu "$MTU" ||
        { echo "$0: MTU $MTU on the hosts' veth pair" >&2; exit 2; }
fi
printf 'rank 0=%s slot=%s\nrank 1=%s slot=%s\n' "$MN_NS1" "$CORE_A" "$MN_NS2" "$CORE_B" >"$MN_RANKFILE"

# ports: one range per run, a new port for every server start (no reuse of
# a port in TIME_WAIT); nothing else listens in these namespaces
PORT=$((20000 + $$ % 20000))
next_port() { PORT=$((PORT + 1)); }

in1() { ip netns exec "$MN_NS1" "$@"; }
in2() { ip netns exec "$MN_NS2" "$@"; }

# wait (bounded, 10 s) until something listens on TCP port $1 in host 2
wait_listen() {
    local i
    for i in $(seq 1 100); do
        in2 ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
        sleep 0.1
    done
    return 1
}

declare -A VAL   # VAL[tool,test,round] = figure
TOOLS=(kernel kernel-spin)
[ -n "$UCX_PERFTEST" ] && TOOLS+=(ucx)
[ -n "$TERN_CMD" ] && TOOLS+=(tern)
declare -A CMD_OF
[ -n "$TERN_CMD" ] && CMD_OF[tern]=$TERN_CMD
for i in "${!EXTRA_NAMES[@]}"; do
    TOOLS+=("${EXTRA_NAMES[$i]}")
    CMD_OF[${EXTRA_NAMES[$i]}]=${EXTRA_CMDS[$i]}
done
[ -n "$TERN_CMD" ] || echo "note: no --tern-cmd given: tern's tcp netmod is not measured"

# kernel TOOL TEST ROUND
kernel_one() {
    local tool=$1 test=$2 round=$3 spin="" log out v
    [ "$tool" = kernel-spin ] && spin=--spin
    next_port
    log=$MN_DIR/$tool-$test-$round
    in2 timeout 120 taskset -c "$CORE_B" "$PINGPONG" -s -B "$MN_ADDR2" -p "$PORT" --idle 30 \
        >"$log.server" 2>&1 &
    local spid=$!
    wait_listen "$PORT" || { echo "FAIL: tcp_pingpong server did not listen"; kill "$spid"; return 1; }
    if [ "$test" = lat ]; then
        out=$(in1 timeout 120 taskset -c "$CORE_A" "$PINGPONG" -c "$MN_ADDR2" -p "$PORT" $spin \
            -t lat -m 8 -M 8 -n "$LAT_ITERS" -q 2>&1)
    else
        out=$(in1 timeout 120 taskset -c "$CORE_A" "$PINGPONG" -c "$MN_ADDR2" -p "$PORT" $spin \
            -t bw -m "$BW_SIZE" -M "$BW_SIZE" -b "$BW_MIB" -q 2>&1)
    fi
    wait "$spid"
    echo "$out" >"$log.client"
    v=$(awk -v t="$test" '$1 == t { v = $3 } END { print v }' <<<"$out")
    [ -n "$v" ] || { echo "FAIL: no figure from tcp_pingpong $tool $test: $out"; return 1; }
    VAL[$tool,$test,$round]=$v
}

ucx_one() {
    local test=$1 round=$2 log final v
    local -a args
    next_port
    log=$MN_DIR/ucx-$test-$round
    in2 env UCX_TLS=tcp UCX_NET_DEVICES="$MN_IF2" timeout 120 "$UCX_PERFTEST" -c "$CORE_B" \
        -p "$PORT" >"$log.server" 2>&1 &
    local spid=$!
    wait_listen "$PORT" || { echo "FAIL: ucx_perftest server did not listen"; kill "$spid"; return 1; }
    if [ "$test" = lat ]; then
        args=(-t tag_lat -s 8 -n "$LAT_ITERS")
    else
        args=(-t tag_bw -s "$BW_SIZE" -n $((BW_BYTES / BW_SIZE)))
    fi
    in1 env UCX_TLS=tcp UCX_NET_DEVICES="$MN_IF1" timeout 120 "$UCX_PERFTEST" "$MN_ADDR2" \
        -p "$PORT" -c "$CORE_A" "${args[@]}" >"$log.client" 2>&1
    wait "$spid"
    # Final: iters lat50 lat_avg lat_overall bw_avg bw_overall rate_avg rate_overall
    final=$(grep '^Final:' "$log.client" | tail -n 1)
    if [ "$test" = lat ]; then
        v=$(awk '{ print $5 }' <<<"$final")
    else
        v=$(awk '{ printf "%.1f", $7 * 1.048576 }' <<<"$final")
    fi
    [ -n "$final" ] && [ -n "$v" ] || {
        echo "FAIL: no Final: line from ucx_perftest ${args[*]}:"
        tail -5 "$log.client"
        return 1
    }
    VAL[ucx,$test,$round]=$v
}

# tern_one NAME TEST ROUND: the command of contender NAME
tern_one() {
    local name=$1 test=$2 round=$3 size=8 out v
    [ "$test" = bw ] && size=$BW_SIZE
    out=$(TEST=$test SIZE=$size ITERS=$LAT_ITERS BW_BYTES=$BW_BYTES CORE_A=$CORE_A \
        CORE_B=$CORE_B MN_NS1=$MN_NS1 MN_NS2=$MN_NS2 MN_ADDR1=$MN_ADDR1 MN_ADDR2=$MN_ADDR2 \
        MN_IF1=$MN_IF1 MN_IF2=$MN_IF2 MN_HOSTFILE=$MN_HOSTFILE MN_AGENT=$MN_AGENT \
        MN_DIR=$MN_DIR MN_RANKFILE=$MN_RANKFILE MN_TIMEOUT=120 TERN_BUILDDIR=$BUILDDIR \
        MPIRUN_OMPI=$MPIRUN_OMPI bash -c "${CMD_OF[$name]}" 2>&1)
    echo "$out" >"$MN_DIR/$name-$test-$round.out"
    v=$(awk -v s="$size" '$1 == s && NF >= 2 { v = $2 } END { print v }' <<<"$out")
    [ -n "$v" ] || { echo "FAIL: no '$size VALUE' line from $name's command:"; tail -5 <<<"$out"; return 1; }
    VAL[$name,$test,$round]=$v
}
# the commands run in bash -c: mn_mpirun and what it calls
export -f mn_mpirun mn_mpirun_cmd mn_watchdog

# shellcheck source=../host_info.sh
. "$SRC/bench/host_info.sh"
host_line() {
    echo "$(bench_host_cpu); DPDK $(pkg_version libdpdk-dev);" \
        "MTU $(ip -n "$MN_NS1" -o link show "$MN_IF1" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')" \
        "($MN_IF1)$([ "$DPDK" = 1 ] && echo ", tdx $TDX_MTU for dpdk-afpkt and $XDP_MTU for dpdk-afxdp")"
}
echo "# host: $(host_line)"
echo "# path: $MN_NS1 $MN_ADDR1 ($MN_IF1, core $CORE_A) <-> $MN_NS2 $MN_ADDR2 ($MN_IF2, core $CORE_B)"
echo "# $ROUNDS rounds; lat: 8 B, $LAT_ITERS iterations; bw: 4 MiB messages, $BW_MIB MiB per point"
echo "# round test tool value"
for round in $(seq 1 "$ROUNDS"); do
    for test in lat bw; do
        for tool in "${TOOLS[@]}"; do
            case $tool in
            kernel | kernel-spin) kernel_one "$tool" "$test" "$round" ;;
            ucx) ucx_one "$test" "$round" ;;
            *) tern_one "$tool" "$test" "$round" ;;
            esac
            echo "$round $test $tool ${VAL[$tool,$test,$round]:-n/a}"
        done
    done
done

median() { # TOOL TEST
    local r
    for r in $(seq 1 "$ROUNDS"); do
        [ -n "${VAL[$1,$2,$r]:-}" ] && echo "${VAL[$1,$2,$r]}"
    done | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
minmax() {
    local r
    for r in $(seq 1 "$ROUNDS"); do
        [ -n "${VAL[$1,$2,$r]:-}" ] && echo "${VAL[$1,$2,$r]}"
    done | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%s..%s", lo, hi }'
}

echo
echo "# medians over $ROUNDS rounds (min..max)"
printf '%-12s %-28s %-28s\n' tool "lat 8 B (us, one-way)" "bw 4 MiB (MB/s)"
declare -A MED
for tool in "${TOOLS[@]}"; do
    MED[$tool,lat]=$(median "$tool" lat)
    MED[$tool,bw]=$(median "$tool" bw)
    printf '%-12s %-28s %-28s\n' "$tool" "${MED[$tool,lat]:-n/a} ($(minmax "$tool" lat))" \
        "${MED[$tool,bw]:-n/a} ($(minmax "$tool" bw))"
done
ratio() { # TOOL REF TEST
    awk -v a="${MED[$1,$3]:-}" -v b="${MED[$2,$3]:-}" \
        'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2fx", a / b }'
}
echo
echo "# ratios of medians, tool / reference (latency: < 1 is faster; bandwidth: > 1 is faster)"
for tool in "${TOOLS[@]}"; do
    for ref in "${TOOLS[@]}"; do
        [ "$tool" = "$ref" ] && continue
        case $ref in kernel | kernel-spin | ucx) ;; *) [ "$ref" = tern ] && [ "$tool" != tern ] || continue ;; esac
        printf '%-12s / %-12s lat %-8s bw %s\n' "$tool" "$ref" "$(ratio "$tool" "$ref" lat)" \
            "$(ratio "$tool" "$ref" bw)"
    done
done
[ -n "$TERN_CMD" ] || printf '%-12s %s\n' tern "not measured (no --tern-cmd; tern's tcp netmod)"

# per-round ratios: TOOL REF TEST -> "median (min..max)" over the rounds both have
round_ratios() {
    local r
    for r in $(seq 1 "$ROUNDS"); do
        [ -n "${VAL[$1,$3,$r]:-}" ] && [ -n "${VAL[$2,$3,$r]:-}" ] &&
            awk -v a="${VAL[$1,$3,$r]}" -v b="${VAL[$2,$3,$r]}" 'BEGIN { if (b > 0) print a / b }'
    done | sort -g | awk '{ a[NR] = $1 } END {
        if (NR == 0) { print "n/a"; exit }
        m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
        printf "%.2fx (%.2f..%.2f)\n", m, a[1], a[NR] }'
}
echo
echo "# per-round ratios, median (min..max), tool / reference"
for tool in "${TOOLS[@]}"; do
    case $tool in kernel | kernel-spin) continue ;; esac
    for ref in kernel kernel-spin; do
        printf '%-12s / %-12s lat %-20s bw %s\n' "$tool" "$ref" "$(round_ratios "$tool" "$ref" lat)" \
            "$(round_ratios "$tool" "$ref" bw)"
    done
done

if [ -n "$JSON" ]; then
    {
        printf '{"bench": "compare_tcp", "path": "veth between network namespaces", '
        printf '"host": "%s", ' "$(host_line | sed 's/"/\\"/g')"
        printf '"cores": [%s, %s], "rounds": %s, "lat_size": 8, "bw_size": %s, ' \
            "$CORE_A" "$CORE_B" "$ROUNDS" "$BW_SIZE"
        printf '"units": {"lat": "us one-way", "bw": "MB/s, MB = 1e6 bytes"}, "medians": {'
        sep=
        for tool in "${TOOLS[@]}"; do
            printf '%s"%s": {"lat": %s, "bw": %s}' "$sep" "$tool" "${MED[$tool,lat]:-null}" \
                "${MED[$tool,bw]:-null}"
            sep=', '
        done
        printf '}}\n'
    } >"$JSON"
    echo "JSON: $JSON"
fi
