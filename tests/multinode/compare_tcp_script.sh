#!/bin/bash
# bench/tcp/compare_tcp.sh runs every contender: kernel TCP (blocking and
# spinning), tern's tcp netmod (--tern) and the dpdk netmod over af_xdp and
# af_packet (--dpdk), here with --mtu 9000, one short round.  Its tern and
# dpdk contenders run mn_mpirun in bash -c, and once printed n/a for every
# round ("mn_mpirun_cmd: command not found") without anything failing.
# Asserts a figure from each of them (no speed), the host line, the
# per-round ratio lines and the JSON's host.  UCX only when ucx_perftest is
# installed.  Skips (77) where the multinode harness cannot run.
. "${srcdir:-.}/tests/multinode/lib.sh"
mn_skip_unless_possible
tools="kernel kernel-spin tern"
"${TERN_INFO:-./tern_info}" --netmods | grep -Eq '^netmods:.* dpdk( |$)' && dpdk=--dpdk &&
    tools="$tools dpdk-afpkt"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tern-ctcp.XXXXXX") || mn_fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
timeout -k 5 600 bash "$srcdir/bench/tcp/compare_tcp.sh" --builddir . --rounds 1 \
    --lat-iters 500 --bw-mib 16 --tern ${dpdk:-} --mtu 9000 --json "$tmp/c.json" \
    >"$tmp/log" 2>&1 || { cat "$tmp/log"; mn_fail "compare_tcp.sh exited with $?"; }
cat "$tmp/log"
for t in $tools; do
    for test in lat bw; do
        awk -v t="$t" -v x="$test" '$1 == 1 && $2 == x && $3 == t && $4 ~ /^[0-9.]+$/ && $4 > 0 { f = 1 }
            END { exit !f }' "$tmp/log" || mn_fail "no $test figure from $t"
    done
done
# af_xdp needs XDP on veth: a figure, or the note of what refused it
[ -z "${dpdk:-}" ] || grep -Eq '^1 (lat|bw) dpdk-afxdp ([0-9.]+|n/a)$' "$tmp/log" ||
    mn_fail "no dpdk-afxdp line"
grep -q '^# host: .*CPUs, L2 .*; kernel .*; DPDK .*; MTU 9000' "$tmp/log" || mn_fail "no host line"
grep -Eq '^tern +/ kernel-spin +lat [0-9.]+x \([0-9.]+\.\.[0-9.]+\) +bw [0-9.]+x' "$tmp/log" ||
    mn_fail "no per-round ratio line for tern"
grep -q '"host": ".*MTU 9000' "$tmp/c.json" || mn_fail "no host in the JSON: $(cat "$tmp/c.json")"
echo "PASS: compare_tcp.sh gives a figure for $tools"
