#!/bin/sh
# bench/compare.sh measures its bandwidth reference, a one-core memcpy of
# the same size, in every round (beside tern's bandwidth, so the ratio is
# taken within a round), and says how much CPU other processes took in
# each round (the quiet rounds get ratios of their own); raw_pingpong
# --memcpy -m measures a size range, --rings the ping-pong of shm's pattern
# (the reference of the sweep's rendezvous sizes); --baseline runs a second
# build right after tern in each round and prints tern / baseline (here the
# same build twice).  Short runs: no speed is asserted, only that the
# figures are there.  Runs from the top build directory.
set -u
srcdir=${srcdir:-.}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tern-compare.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

out=$(timeout 120 ./raw_pingpong --memcpy -q -m 16k:64k) || fail "raw_pingpong --memcpy -m 16k:64k: $out"
[ "$(printf '%s\n' "$out" | awk '$1 ~ /^(16384|32768|65536)$/ && $2 > 0' | wc -l)" -eq 3 ] ||
    fail "raw_pingpong --memcpy -m 16k:64k did not give 16, 32 and 64 KiB: $out"
msg=$(./raw_pingpong --memcpy -m 100:4k 2>&1) && fail "raw_pingpong accepted -m 100:4k"
echo "$msg" | grep -q "bad size range" || fail "no message for -m 100:4k: $msg"
# --rings: the two-ring pattern (a line per direction) gives a latency too
out=$(timeout 120 ./raw_pingpong --rings -q -n 2000 -w 100) || fail "raw_pingpong --rings: $out"
echo "$out" | grep -Eq '^[0-9]+\.[0-9]+$' || fail "raw_pingpong --rings printed no figure: $out"

timeout 300 bash "$srcdir/bench/compare.sh" --builddir . --tools raw --rounds 2 \
    --lat-iters 2000 --outdir "$tmp" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "compare.sh --tools raw"; }
json=$(ls "$tmp"/compare-*.json 2>/dev/null | head -n 1)
[ -n "$json" ] || { cat "$tmp/log"; fail "compare.sh wrote no JSON"; }
for r in 1 2; do
    grep -q "\"tool\": \"memcpy\", \"metric\": \"bw\", \"size\": 4194304, \"round\": \"$r\"" "$json" ||
        fail "no memcpy 4 MiB figure in round $r of $json"
done
grep -q 'tern/memcpy >= 0.8' "$tmp/log" || fail "compare.sh prints no tern/memcpy target"
# others%: a figure per round, and the quiet rounds named
[ "$(awk '/^# round .* others%$/ { on = 1; next } on && /^  [12] / && $NF ~ /^[0-9]+$/ { n++ } END { print n + 0 }' "$tmp/log")" -eq 2 ] ||
    { cat "$tmp/log"; fail "no others% figure for both rounds"; }
grep -Eq '^  two-ring ping-pong \(us\) +[0-9.]+  tern/rings' "$tmp/log" ||
    { cat "$tmp/log"; fail "no two-ring (raw_pingpong --rings) line"; }
grep -q '"tool": "rings", "metric": "lat", "size": 64, "round": "2"' "$json" ||
    fail "no two-ring figure in round 2 of $json"
grep -Eq '^# quiet rounds \(others% <= [0-9]+ in every run\): [0-2] of 2' "$tmp/log" ||
    { cat "$tmp/log"; fail "no quiet-rounds line"; }
grep -q '"others_percent_by_round": {"1": [0-9]*, "2": [0-9]*}' "$json" || fail "no others% in $json"

rm -f "$tmp"/compare-*.json
timeout 300 bash "$srcdir/bench/compare.sh" --builddir . --tools tern --baseline . --rounds 2 \
    --lat-iters 2000 --bw-iters 1 --mr-iters 20 --outdir "$tmp" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; fail "compare.sh --baseline ."; }
grep -Eq '^  latency 8 B one-way \(us\) .*\[[0-9.]+\] +[0-9.]+ [0-9.]+ *$' "$tmp/log" ||
    { cat "$tmp/log"; fail "no tern / baseline latency line with two per-round ratios"; }
json=$(ls "$tmp"/compare-*.json 2>/dev/null | head -n 1)
grep -q '"tool": "base", "metric": "bw", "size": 4194304, "round": "2"' "$json" ||
    fail "no baseline bandwidth in round 2 of $json"
grep -q '"ratios_tern_over_base": {"lat": [0-9.]' "$json" || fail "no tern / baseline ratios in $json"
echo "PASS: memcpy per round and per size, tern / baseline per round"
