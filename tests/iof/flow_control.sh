#!/bin/sh
# Flow control: 50 MiB of output into a reader that reads nothing for 2 s
# and then everything: ternrun completes, nothing is lost, and its memory
# stays bounded (the ranks are made to wait in write() instead).
. "$(dirname "$0")/lib.sh"

M=$((25 * 1048576))
expected 0 bytes $M | sha256sum >"$WORK/want.0"
expected 1 bytes $M | sha256sum >"$WORK/want.1"

# Under ASan, freed buffers sit in its quarantine (256 MiB by default), so
# ternrun's RSS would measure the quarantine, not the flow control: keep
# none for this run (the rest of ASAN_OPTIONS is kept).
if [ -n "${TERN_TEST_SANITIZED:-}" ]; then
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
    export ASAN_OPTIONS
fi

# "$WORK/rss" gets ternrun's VmRSS (kB) every 0.1 s while it runs
# (and ternrun's exit status in "$WORK/pid.rc")
timeout -k 5 "$T" sh -c '"$0" -n 2 "$1" bytes '$M' 2>"$2" </dev/null & echo $! >"$3"; wait $!; echo $? >"$3.rc"' \
    "$TERNRUN" "$WRITER" "$ERR" "$WORK/pid" | (sleep 2; cat >"$OUT") &
job=$!
i=0
while [ ! -s "$WORK/pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
tpid=$(cat "$WORK/pid")
: >"$WORK/rss"
while kill -0 "$tpid" 2>/dev/null; do
    awk '/^VmRSS:/ { print $2 }' "/proc/$tpid/status" >>"$WORK/rss" 2>/dev/null
    sleep 0.1
done
wait $job
[ "$(cat "$WORK/pid.rc" 2>/dev/null)" = 0 ] ||
    fail "ternrun's exit status $(cat "$WORK/pid.rc" 2>/dev/null): $(head -c 300 "$ERR")"
max=$(sort -n "$WORK/rss" | tail -n 1)
[ -n "$max" ] || fail "no RSS sample of ternrun"
[ "${max:-0}" -lt 65536 ] || fail "ternrun's RSS reached $max kB (bound: 64 MiB)"
[ "$(wc -l <"$WORK/rss")" -ge 10 ] || fail "ternrun ended before the reader read (only $(wc -l <"$WORK/rss") samples): flow control not exercised"
for r in 0 1; do
    grep -a "^B$r " "$OUT" | sha256sum >"$WORK/got"
    expect_same "$WORK/got" "$WORK/want.$r" "rank $r's 25 MiB through a slow reader"
done
echo "ternrun max RSS: ${max:-?} kB over $(wc -l <"$WORK/rss") samples"

finish
