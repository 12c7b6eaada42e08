#!/bin/sh
# The PMIx session directory works with a TMPDIR too long for a Unix socket
# path (fallback under /tmp, said under -v), honours --tmpdir, and is
# removed when ternrun exits.
. "$(dirname "$0")/lib.sh"

long=$WORK
while [ ${#long} -lt 150 ]; do
    long=$long/aaaaaaaaaaaaaaaaaaaa
done
mkdir -p "$long" || { echo "cannot create $long"; exit 99; }

TMPDIR=$long run -v -n 2 "$PROBE" keys
expect_rc 0 "long TMPDIR"
expect_err 'too long for a Unix socket path' "-v explains the fallback"
sess=$(sed -n 's/^ternrun: session directory //p' "$ERR")
[ -n "$sess" ] || fail "no session directory line under -v"
case "$sess" in /tmp/ternrun.*) ;; *) fail "fallback dir $sess is not under /tmp" ;; esac
[ -e "$sess" ] && fail "session directory $sess left behind"
[ -z "$(ls -A "$long")" ] || fail "files left in the long TMPDIR"

mkdir -p "$WORK/td"
run -v --tmpdir "$WORK/td" -n 2 "$PROBE" keys
expect_rc 0 "--tmpdir"
sess=$(sed -n 's/^ternrun: session directory //p' "$ERR")
case "$sess" in "$WORK/td/ternrun."*) ;; *) fail "--tmpdir not used: $sess" ;; esac
[ -z "$(ls -A "$WORK/td")" ] || fail "files left in --tmpdir"

run --tmpdir "$WORK/does-not-exist" -n 1 true
[ "$RC" -ne 0 ] || fail "--tmpdir to a missing directory accepted"
expect_err '^ternrun: .*does-not-exist' "missing --tmpdir is named"

finish
