#!/bin/sh
# The whole engine suite, 2 ranks pinned to cores, over $TERN_TEST_NETMOD (shm);
# the job leaves no segment in /dev/shm.
. "${srcdir:-.}/tests/engine/lib.sh"
out=$(mktemp)
run_engine 2 "-v --bind-to core" all >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || fail "engine suite on 2 pinned ranks"
[ "$(shm_leftovers "$out")" -eq 0 ] || fail "a tern segment was left in /dev/shm"
rm -f "$out"
