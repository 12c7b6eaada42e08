#!/bin/sh
# Nothing a rank wrote before dying is lost (PRRTE issue #109): a rank that
# writes 1 MiB and then calls abort(), is killed by SIGKILL or calls
# PMIx_Abort; the survivors killed by ternrun keep what they wrote too.
. "$(dirname "$0")/lib.sh"

M=1048576
expected 0 bytes $M >"$WORK/want.0"
expected 1 bytes $M >"$WORK/want.1"

for end in abort kill; do
    run --kill-grace 0 -n 2 sh -c 'if [ "$PMIX_RANK" = 0 ]; then exec "$0" bytes '$M' '$end'; else exec "$0" bytes '$M' sleep; fi' "$WRITER"
    [ "$RC" -ne 0 ] || fail "$end: exit status 0"
    grep "^B0 " "$OUT" >"$WORK/got"
    expect_same "$WORK/got" "$WORK/want.0" "$end: the dead rank's 1 MiB"
    # the survivor may be killed before it wrote everything: a prefix
    grep -a "^B1 " "$OUT" >"$WORK/got"
    head -c "$(wc -c <"$WORK/got")" "$WORK/want.1" | cmp -s - "$WORK/got" ||
        fail "$end: the killed survivor's output is not what it wrote"
done

# PMIx_Abort with output pending: the probe prints then aborts
run -n 2 sh -c '"$0" bytes '$M'; exec "$1" abort 0 3' "$WRITER" "$PROBE"
expect_rc 3 "PMIx_Abort"
grep "^B0 " "$OUT" >"$WORK/got"
expect_same "$WORK/got" "$WORK/want.0" "PMIx_Abort: the aborting rank's 1 MiB"


# a last line without newline is forwarded at the end
run -n 1 sh -c 'printf "no newline"; kill -9 $$'
[ "$(cat "$OUT")" = "no newline" ] || fail "a last partial line was lost"

# ternrun's own note about a rank that died comes after the rank's last
# stderr line even when ternrun still holds that line: its stderr here is a
# pipe nobody reads for 2 s, so 300 kB of the rank's stderr wait in
# ternrun's buffer when the rank's exit is reported
timeout -k 5 "$T" "$TERNRUN" -n 1 sh -c \
    'head -c 300000 /dev/zero | tr "\0" e | fold -w 99 >&2; echo >&2; echo LAST >&2; exit 3' \
    2>&1 >/dev/null | (sleep 2; cat) >"$WORK/ordered"
last=$(grep -n -x LAST "$WORK/ordered" | cut -d: -f1)
note=$(grep -n "^ternrun: rank 0 .*exited with status 3" "$WORK/ordered" | cut -d: -f1)
[ -n "$last" ] && [ -n "$note" ] && [ "$note" -gt "$last" ] ||
    fail "ternrun's note about the dead rank (line ${note:-none}) is not after its last line (line ${last:-none})"

finish
