#!/bin/sh
# tern_init_ex (include/tern/core.h): bad parameters refused naming the
# field, and the set fields winning over the environment (tests/engine/
# init_ex.c says how each is seen), at 2 ranks under ternrun.  The
# environment says otherwise for every field: 1 worker, spin waits and a
# TERN_NETMODS no build has (an overridden variable is not read at all).
. "${srcdir:-.}/tests/engine/lib.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
TERN_NUM_WORKERS=1 TERN_WAIT_MODE=spin TERN_NETMODS=nosuch \
    timeout -k 5 120 "$TERNRUN" -n 2 ./tests/init_ex </dev/null >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || fail "init_ex exited with $rc"
[ "$(grep -c '^ok rank' "$out")" -eq 2 ] || fail "not both ranks ok"
! grep -q "FAIL" "$out" || fail "a check failed"
echo "ok init_ex"
