#!/bin/sh
# A rank SIGKILLed mid-transfer: its peer's wait returns TERN_ERR_PEER_FAILED
# within the launcher's grace period, ternrun exits non-zero, and no shm
# segment is left behind.
. "${srcdir:-.}/tests/engine/lib.sh"
out=$(mktemp)
start=$(date +%s)
run_engine 2 "-v --kill-grace 20" peer_killed >"$out" 2>&1
rc=$?
end=$(date +%s)
cat "$out"
[ "$rc" -ne 0 ] || fail "ternrun exited 0 although rank 1 was killed"
grep -q "peer_killed: rank 0 saw peer process failed" "$out" || fail "rank 0 did not see the failure"
grep -q "^ok peer_killed (rank 0)" "$out" || fail "rank 0's checks failed"
[ $((end - start)) -lt 20 ] || fail "took $((end - start)) s: the failure was not noticed before the grace ran out"
[ "$(shm_leftovers "$out")" -eq 0 ] || fail "a tern segment was left in /dev/shm"
rm -f "$out"
