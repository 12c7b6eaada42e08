#!/bin/sh
# Output options produce exactly the expected bytes: --tag-output,
# --timestamp-output, --merge-stderr-to-stdout and --output-filename DIR
# (DIR/<rank>/stdout and stderr, byte-exact, nothing on ternrun's stdout).
. "$(dirname "$0")/lib.sh"

N=2000
for r in 0 1 2; do
    expected $r both $N >"$WORK/want.out.$r" 2>"$WORK/want.err.$r"
done

# untagged: each rank's lines in order, stdout and stderr apart
run -n 3 "$WRITER" both $N
expect_rc 0 "plain"
for r in 0 1 2; do
    grep "^R$r " "$OUT" >"$WORK/got"
    expect_same "$WORK/got" "$WORK/want.out.$r" "plain stdout of rank $r"
    grep "^E$r " "$ERR" >"$WORK/got"
    expect_same "$WORK/got" "$WORK/want.err.$r" "plain stderr of rank $r"
done
[ "$(wc -l <"$OUT")" -eq $((3 * N)) ] || fail "plain: stdout has other lines"

# --tag-output: "[rank,stream] " before every line and nothing else changed
run --tag-output -n 3 "$WRITER" both $N
expect_rc 0 "--tag-output"
for r in 0 1 2; do
    sed "s/^/[$r,stdout] /" "$WORK/want.out.$r" >"$WORK/want"
    grep -F "[$r,stdout] " "$OUT" >"$WORK/got"
    expect_same "$WORK/got" "$WORK/want" "--tag-output stdout of rank $r"
    sed "s/^/[$r,stderr] /" "$WORK/want.err.$r" >"$WORK/want"
    grep -F "[$r,stderr] " "$ERR" >"$WORK/got"
    expect_same "$WORK/got" "$WORK/want" "--tag-output stderr of rank $r"
done
[ "$(grep -Evc '^\[[0-2],stdout\] R' "$OUT")" -eq 0 ] || fail "--tag-output: untagged or foreign lines on stdout"

# --timestamp-output (with tags): a local time with microseconds first
run --timestamp-output --tag-output -n 3 "$WRITER" both $N
expect_rc 0 "--timestamp-output"
TS='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} '
[ "$(grep -Evc "^$TS\[[0-2],stdout\] R" "$OUT")" -eq 0 ] || fail "--timestamp-output: a stdout line without timestamp"
for r in 0 1 2; do
    sed -E "s/^$TS//" "$OUT" | grep -F "[$r,stdout] " | sed "s/^\[$r,stdout\] //" >"$WORK/got"
    expect_same "$WORK/got" "$WORK/want.out.$r" "--timestamp-output stdout of rank $r"
done
# this year and hour, not a constant
expect_out "^$(date +%Y-%m-%d)" "--timestamp-output: today's date"

# --merge-stderr-to-stdout: both streams on stdout, nothing on stderr
run --merge-stderr-to-stdout --tag-output -n 3 "$WRITER" both $N
expect_rc 0 "--merge-stderr-to-stdout"
for r in 0 1 2; do
    sed "s/^/[$r,stderr] /" "$WORK/want.err.$r" >"$WORK/want"
    grep -F "[$r,stderr] " "$OUT" >"$WORK/got"
    expect_same "$WORK/got" "$WORK/want" "--merge-stderr-to-stdout: stderr of rank $r on stdout"
done
[ "$(wc -l <"$OUT")" -eq $((6 * N)) ] || fail "--merge-stderr-to-stdout: $(wc -l <"$OUT") lines, expected $((6 * N))"
grep -q '^\[' "$ERR" && fail "--merge-stderr-to-stdout: rank output left on stderr"

# --output-filename DIR: byte-exact per-rank files, ternrun's stdout empty
run --output-filename "$WORK/dir" --tag-output -n 3 "$WRITER" both $N
expect_rc 0 "--output-filename"
for r in 0 1 2; do
    expect_same "$WORK/dir/$r/stdout" "$WORK/want.out.$r" "--output-filename: $r/stdout"
    expect_same "$WORK/dir/$r/stderr" "$WORK/want.err.$r" "--output-filename: $r/stderr"
done
[ -s "$OUT" ] && fail "--output-filename: rank output on ternrun's stdout"

# with --merge-stderr-to-stdout: one file per rank with both streams
run --output-filename "$WORK/dir2" --merge-stderr-to-stdout -n 2 "$WRITER" both $N
expect_rc 0 "--output-filename --merge-stderr-to-stdout"
for r in 0 1; do
    grep "^R$r " "$WORK/dir2/$r/stdout" >"$WORK/got"
    expect_same "$WORK/got" "$WORK/want.out.$r" "merged file: stdout lines of rank $r"
    grep "^E$r " "$WORK/dir2/$r/stdout" >"$WORK/got"
    expect_same "$WORK/got" "$WORK/want.err.$r" "merged file: stderr lines of rank $r"
    [ -e "$WORK/dir2/$r/stderr" ] && fail "merged file: $r/stderr exists"
done

# a line longer than the 64 KiB line cap: forwarded in pieces, but the
# bytes are unchanged and the tag is only at the start of the line
run --tag-output -n 1 sh -c 'head -c 200000 /dev/zero | tr "\0" x; echo; echo next'
{ printf '[0,stdout] '; head -c 200000 /dev/zero | tr "\0" x; printf '\n[0,stdout] next\n'; } >"$WORK/want"
expect_same "$OUT" "$WORK/want" "--tag-output with a 200000-byte line"

run --output-filename /proc/no-such-dir -n 1 true
[ "$RC" -ne 0 ] || fail "--output-filename in an impossible place: exit status 0"
expect_err "^ternrun: --output-filename: cannot create" "--output-filename error message"

finish
