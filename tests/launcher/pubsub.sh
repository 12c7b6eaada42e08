#!/bin/sh
# Publish / lookup (PMIX_WAIT, deferred until rank 0 publishes) / unpublish /
# lookup -> PMIX_ERR_NOT_FOUND; a duplicate publish is refused; a waiting
# lookup with PMIX_TIMEOUT ends with PMIX_ERR_TIMEOUT.
. "$(dirname "$0")/lib.sh"

run -n 3 "$PROBE" pubsub
expect_rc 0 "pubsub -n 3"
[ "$(grep -c '^ok pubsub' "$OUT")" -eq 3 ] || fail "pubsub: expected 3 ok lines"

finish
