#!/usr/bin/env bash
# dpdk_compare.sh — tern's dpdk netmod on memif against its floor and the
# TCP paths on one host, interleaved round by round in ONE run on two
# pinned cores (this VM's absolute times swing up to 3x between runs: only
# ratios inside a run mean anything):
#
#   raw        bench/dpdk_raw: DPDK frames of the netmod's size bounced over
#              memif, no reliability (the floor)
#   dpdk       tern_bench over the dpdk netmod on memif (netmods/dpdk/test.env)
#   dpdk-loss  the same with 1 % of the frames dropped by the fault shim
#              (bandwidth only; on both ranks' ports, both directions)
#   dpdk-jumbo the same lossless with TERN_DPDK_MTU=9000 (bandwidth only)
#   dpdk-frames the same with TERN_CMA=off (bandwidth only): the netmod's
#              own frames; the others' rendezvous messages take the
#              engine's same-host copy (CMA), as a user's job on one host
#              does
#   tcp        tern_bench over the tcp netmod on loopback
#   kernel     bench/tcp/tcp_pingpong on loopback, blocking recv and, as
#              kernel-spin, polling with MSG_DONTWAIT
#
# Each round: 8-byte one-way latency of every contender, then 4 MiB
# bandwidth of every contender (raw: its stream of MTU-sized frames).  The
# medians of the rounds and the ratios of issue 10's targets are printed at
# the end: dpdk/raw and dpdk/tcp latency, dpdk/tcp bandwidth, dpdk-loss/dpdk
# bandwidth; then per-round ratios (median [min..max]) of issue 27's:
# dpdk/raw latency and dpdk-frames/raw bandwidth.  The first line names
# the host (CPU, caches, kernel, DPDK, the memif device).  Prints every
# command.  Asserts nothing; the exit status is
# non-zero only when a contender printed nothing usable.
#
# With --base DIR (another build tree: the code before a change), the dpdk
# and tcp contenders also run as built there, right after their own run in
# every round, and the per-round ratios this build / base are printed.
#
# Usage (from the build directory, or --builddir):
#   bench/dpdk_compare.sh [--rounds R] [--lat-iters N] [--builddir DIR] [--base DIR]
# Units: latency one-way (round trip / 2) in us; bandwidth MB/s, MB = 1e6 B.
set -u -o pipefail

ROUNDS=5
ITERS=20000
BUILDDIR=${TERN_BUILDDIR:-$PWD}
BASE=""
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    --lat-iters) ITERS=$2; shift 2 ;;
    --builddir) BUILDDIR=$2; shift 2 ;;
    --base) BASE=$2; shift 2 ;;
    *) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
    esac
done
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=$BUILDDIR
for p in ternrun tern_bench dpdk_raw bench/tcp/tcp_pingpong; do
    [ -x "$B/$p" ] || { echo "$0: $B/$p not built (is the dpdk netmod built? --builddir)" >&2; exit 2; }
done
if [ -n "$BASE" ]; then
    for p in ternrun tern_bench; do
        [ -x "$BASE/$p" ] || { echo "$0: --base: $BASE/$p not built" >&2; exit 2; }
    done
fi
VDEV=$(. "$SRC/netmods/dpdk/test.env" && echo "$TERN_DPDK_VDEV")
BW_BYTES=$((256 << 20))
declare -A res
bad=0

run() { echo "+ $*" >&2; "$@"; }
# last "SIZE VALUE" line of tern_bench -q; TB=DIR runs DIR's build instead
tern() { # NAME ENV... -- TEST SIZE
    local name=$1 v
    shift
    local -a env=()
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    local t=$1 s=$2 extra
    [ "$t" = lat ] && extra=(-i "$ITERS" -w 2000) || extra=(-b "$BW_BYTES")
    local tb=${TB:-$B}
    v=$(run env "${env[@]}" timeout 300 "$tb/ternrun" -n 2 --bind-to core "$tb/tern_bench" -t "$t" \
        -m "$s" -q "${extra[@]}" </dev/null 2>/dev/null | awk -v s="$s" '$1 == s { v = $2 } END { print v }')
    echo "$name $t $v"
    res[$name.$t]+="$v "
}
raw() {
    local out v
    run timeout 120 "$B/dpdk_raw" --role server --core 0 --iters "$ITERS" --bw-frames 400000 \
        >/dev/null 2>&1 &
    out=$(run timeout 120 "$B/dpdk_raw" --role client --core 1 --sizes 8:8 --iters "$ITERS" \
        --bw-frames 400000 2>&1)
    wait
    v=$(echo "$out" | awk '$1 == 8 { print $3 }')
    echo "raw lat $v"
    res[raw.lat]+="$v "
    v=$(echo "$out" | sed -n 's/.*: \([0-9.]*\) MB\/s.*/\1/p')
    echo "raw bw $v"
    res[raw.bw]+="$v "
}
kernel() { # spin|block lat|bw
    local port=$((20000 + RANDOM % 20000)) v spin=()
    [ "$1" = spin ] && spin=(--spin)
    taskset -c 0 "$B/bench/tcp/tcp_pingpong" -s -B 127.0.0.1 -p "$port" --idle 20 >/dev/null 2>&1 &
    local srv=$!
    sleep 0.2
    if [ "$2" = lat ]; then
        v=$(run taskset -c 1 "$B/bench/tcp/tcp_pingpong" -c 127.0.0.1 -p "$port" -t lat -m 8 -M 8 \
            -n "$ITERS" "${spin[@]}" -q 2>&1 | awk '$1 == "lat" { print $3 }')
    else
        v=$(run taskset -c 1 "$B/bench/tcp/tcp_pingpong" -c 127.0.0.1 -p "$port" -t bw -m 4194304 \
            -M 4194304 -b 256 "${spin[@]}" -q 2>&1 | awk '$1 == "bw" { print $3 }')
    fi
    kill "$srv" 2>/dev/null
    wait "$srv" 2>/dev/null
    local name=kernel
    [ "$1" = spin ] && name=kernel-spin
    echo "$name $2 $v"
    res[$name.$2]+="$v "
}

# shellcheck source=bench/host_info.sh
. "$SRC/bench/host_info.sh"
echo "# host: $(bench_host_cpu); DPDK $(pkg_version libdpdk-dev); device ${VDEV%%,*}" \
    "(MTU 1500, copy mode)"
echo "# dpdk_compare: $ROUNDS rounds, $ITERS latency iterations, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores"
for r in $(seq 1 "$ROUNDS"); do
    echo "# round $r"
    raw
    tern dpdk TERN_NETMODS=dpdk "TERN_DPDK_VDEV=$VDEV" -- lat 8
    [ -z "$BASE" ] || TB=$BASE tern base-dpdk TERN_NETMODS=dpdk "TERN_DPDK_VDEV=$VDEV" -- lat 8
    tern tcp TERN_NETMODS=tcp TERN_TCP_ADDRS=127.0.0.1 -- lat 8
    [ -z "$BASE" ] || TB=$BASE tern base-tcp TERN_NETMODS=tcp TERN_TCP_ADDRS=127.0.0.1 -- lat 8
    kernel block lat
    kernel spin lat
    tern dpdk TERN_NETMODS=dpdk "TERN_DPDK_VDEV=$VDEV" -- bw 4194304
    [ -z "$BASE" ] || TB=$BASE tern base-dpdk TERN_NETMODS=dpdk "TERN_DPDK_VDEV=$VDEV" -- bw 4194304
    tern dpdk-loss TERN_NETMODS=dpdk "TERN_DPDK_VDEV=$VDEV" "TERN_DPDK_FAULTS=drop=0.01,seed=$r" -- bw 4194304
    tern dpdk-jumbo TERN_NETMODS=dpdk "TERN_DPDK_VDEV=$VDEV" TERN_DPDK_MTU=9000 -- bw 4194304
    tern dpdk-frames TERN_NETMODS=dpdk "TERN_DPDK_VDEV=$VDEV" TERN_CMA=off -- bw 4194304
    tern tcp TERN_NETMODS=tcp TERN_TCP_ADDRS=127.0.0.1 -- bw 4194304
    [ -z "$BASE" ] || TB=$BASE tern base-tcp TERN_NETMODS=tcp TERN_TCP_ADDRS=127.0.0.1 -- bw 4194304
    kernel block bw
done

median() { tr ' ' '\n' | grep -E '^[0-9.]+$' | sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
declare -A med
echo "# medians of $ROUNDS rounds"
for k in raw.lat dpdk.lat tcp.lat kernel.lat kernel-spin.lat raw.bw dpdk.bw dpdk-loss.bw dpdk-jumbo.bw dpdk-frames.bw tcp.bw kernel.bw; do
    med[$k]=$(echo "${res[$k]:-}" | median)
    [ -n "${med[$k]}" ] || { med[$k]=0; bad=1; }
    printf '%-16s %12s %s\n' "$k" "${med[$k]}" "$(case $k in *.lat) echo us ;; *) echo MB/s ;; esac)"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo "# ratios (issue 10 targets in brackets)"
echo "dpdk/raw latency        $(ratio "${med[dpdk.lat]}" "${med[raw.lat]}")   [<= 1.5]"
echo "dpdk/tcp latency        $(ratio "${med[dpdk.lat]}" "${med[tcp.lat]}")   [<= 0.3]"
echo "dpdk/kernel-spin lat    $(ratio "${med[dpdk.lat]}" "${med[kernel-spin.lat]}")"
echo "dpdk/tcp bandwidth      $(ratio "${med[dpdk.bw]}" "${med[tcp.bw]}")   [>= 1]"
echo "dpdk-loss/dpdk bw       $(ratio "${med[dpdk-loss.bw]}" "${med[dpdk.bw]}")   [>= 0.5 with 1 % loss]"
echo "dpdk/raw bandwidth      $(ratio "${med[dpdk.bw]}" "${med[raw.bw]}")"
echo "dpdk-jumbo/tcp bw       $(ratio "${med[dpdk-jumbo.bw]}" "${med[tcp.bw]}")   (MTU 9000 on memif)"
# per-round ratios: the two lists hold one value per round, in order
rr() { paste -d' ' <(tr ' ' '\n' <<<"${res[$1]:-}" | grep .) <(tr ' ' '\n' <<<"${res[$2]:-}" | grep .) |
       awk '$1 > 0 && $2 > 0 { printf "%.3f\n", $1 / $2 }'; }
echo "# per-round ratios, median [min-max] (issue 27 targets in brackets)"
for pair in "dpdk.lat raw.lat <= 1.5" "dpdk-frames.bw raw.bw >= 0.8" "dpdk.lat kernel-spin.lat"; do
    set -- $pair
    r=$(rr "$1" "$2")
    printf '%-28s %8s  [%s]  %s\n' "${1%.*}/${2%.*} ${1#*.}" "$(median <<<"$r")" \
        "$(sort -g <<<"$r" | sed -n '1p;$p' | paste -sd- -)" "${3:+[$3 $4]}"
done
if [ -n "$BASE" ]; then
    echo "# before / after: this build ($B) over base ($BASE), per-round ratios"
    echo "# (latency < 1 and bandwidth > 1 favour this build): median [range]"
    for k in dpdk.lat tcp.lat dpdk.bw tcp.bw; do
        r=$(rr "$k" "base-$k")
        printf '%-16s %8s  [%s]\n' "$k" "$(median <<<"$r")" "$(sort -g <<<"$r" | sed -n '1p;$p' | paste -sd- -)"
    done
fi
exit $bad
