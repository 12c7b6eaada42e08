#!/bin/sh
# PMIx_Log through ternrun (docs/ternrun.md): a plain PMIx client's
# stdout / stderr messages appear on ternrun's stdout / stderr as whole
# lines, PMIX_LOG_TAG_OUTPUT labels them, syslog is accepted, email is
# refused (PMIX_ERR_NOT_SUPPORTED and a line naming it), a mix gives
# PMIX_ERR_PARTIAL_SUCCESS, PMIX_LOG_ONCE stops at the first channel that
# takes it, a non-string message is PMIX_ERR_BAD_PARAM (pmix_calls log
# checks the statuses).
. "$(dirname "$0")/lib.sh"

run -n 2 "$CALLS" log
expect_rc 0 "log -n 2"
[ "$(grep -c '^ok log' "$OUT")" -eq 2 ] || fail "log: expected 2 ok lines"
for r in 0 1; do
    grep -qx "log-stdout rank $r" "$OUT" || fail "rank $r's stdout message is not a line of stdout"
    grep -qx "log-stderr rank $r" "$ERR" || fail "rank $r's stderr message is not a line of stderr"
    grep -q "log-stderr rank $r" "$OUT" && fail "rank $r's stderr message went to stdout"
    grep -qx "stdout: log-tagged rank $r" "$OUT" || fail "rank $r's tagged message"
done
[ "$(grep -cx 'log-partial' "$OUT")" -eq 2 ] || fail "stdout + email: the stdout part"
[ "$(grep -cx 'log-once' "$OUT")" -eq 2 ] || fail "email + stdout with PMIX_LOG_ONCE"
grep -q "pmix.log.email: not supported" "$ERR" || fail "the refused email channel is not named"

finish
