#!/bin/sh
# 4 ranks each write 100k lines at once, in write() calls that cut lines on
# purpose: every line ternrun prints is one complete line of one rank, none
# is lost or merged, and each rank's lines keep their order.
. "$(dirname "$0")/lib.sh"

N=100000
run -n 4 "$WRITER" lines $N
expect_rc 0 "4 x $N lines"
# line n of rank r: "R<r> L<n> " then ((n*7+r)%120) copies of letter n%26
awk -v N=$N '
BEGIN { letters = "abcdefghijklmnopqrstuvwxyz"; bad = 0 }
{
    if ($0 !~ /^R[0-3] L[0-9]+ [a-z]*$/) { bad++; if (bad < 5) print "malformed: " substr($0, 1, 80); next }
    r = substr($1, 2) + 0; n = substr($2, 2) + 0
    want = (n * 7 + r) % 120; p = $3
    if (length(p) != want) { bad++; if (bad < 5) print "wrong length: " substr($0, 1, 80); next }
    if (want > 0) { c = substr(letters, n % 26 + 1, 1); gsub(c, "", p); if (p != "") { bad++; if (bad < 5) print "wrong payload: " substr($0, 1, 80); next } }
    if (n != next_n[r]) { bad++; if (bad < 5) print "rank " r ": line " n " where " next_n[r] " was due"; }
    next_n[r] = n + 1; total++
}
END {
    for (r = 0; r < 4; r++) if (next_n[r] != N) { bad++; print "rank " r ": " next_n[r] " lines, expected " N }
    if (total != 4 * N) { bad++; print "total " total " lines, expected " 4 * N }
    exit bad > 0
}' "$OUT" >"$WORK/check" || fail "lines split, merged, lost or reordered: $(head -n 5 "$WORK/check")"

# the same through a pipe (the non-blocking pipe sink)
# (ternrun's status through the pipe: a file, as sh has no pipefail)
{ timeout -k 5 "$T" "$TERNRUN" -n 4 "$WRITER" lines $N 2>"$ERR" </dev/null; echo $? >"$WORK/rc"; } |
    cat >"$OUT"
[ "$(cat "$WORK/rc")" -eq 0 ] || fail "through a pipe: exit status $(cat "$WORK/rc"): $(head -c 300 "$ERR")"
[ "$(wc -l <"$OUT")" -eq $((4 * N)) ] || fail "through a pipe: $(wc -l <"$OUT") lines, expected $((4 * N))"
grep -Evc '^R[0-3] L[0-9]+ [a-z]*$' "$OUT" >"$WORK/nbad"
[ "$(cat "$WORK/nbad")" -eq 0 ] || fail "through a pipe: $(cat "$WORK/nbad") malformed lines"

# stdout and stderr into one pipe (2>&1): one writer, lines still whole
{ timeout -k 5 "$T" "$TERNRUN" -n 4 "$WRITER" both 50000 2>&1 </dev/null; echo $? >"$WORK/rc"; } |
    cat >"$OUT"
[ "$(cat "$WORK/rc")" -eq 0 ] || fail "2>&1 | cat: exit status $(cat "$WORK/rc")"
[ "$(wc -l <"$OUT")" -eq 400000 ] || fail "2>&1 | cat: $(wc -l <"$OUT") lines, expected 400000"
grep -Evc '^[RE][0-3] L[0-9]+ [a-z]*$' "$OUT" >"$WORK/nbad"
[ "$(cat "$WORK/nbad")" -eq 0 ] || fail "2>&1 | cat: $(cat "$WORK/nbad") malformed lines"

run --iof-raw -n 1 "$WRITER" lines $N
expected 0 lines $N >"$WORK/want"
expect_same "$OUT" "$WORK/want" "--iof-raw, one rank: output byte-exact"

# raw mode forwards a line before its newline; line mode waits for it
timeout -k 5 "$T" "$TERNRUN" --iof-raw -n 1 "$WRITER" partial 3 >"$OUT" 2>"$ERR" </dev/null &
pid=$!
sleep 1.5
[ "$(cat "$OUT")" = "partial" ] || fail "--iof-raw: a partial line was not forwarded while the rank runs"
wait $pid
timeout -k 5 "$T" "$TERNRUN" -n 1 "$WRITER" partial 3 >"$OUT" 2>"$ERR" </dev/null &
pid=$!
sleep 1.5
[ -s "$OUT" ] && fail "line mode: a partial line was forwarded before its newline"
wait $pid
[ "$(cat "$OUT")" = "partial" ] || fail "line mode: the completed line is missing"

finish
