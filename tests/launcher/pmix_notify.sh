#!/bin/sh
# A plain PMIx client's PMIx_Notify_event through ternrun (docs/ternrun.md):
# 4 ranks register for a user event code; rank 0 notifies it first to
# rank 2 alone (PMIX_RANGE_CUSTOM, PMIX_EVENT_CUSTOM_RANGE), then to the
# namespace: every rank gets the namespace one, only rank 2 the custom
# one (the server handles them in order, so a rank that got the second
# would have had the first), and rank 0's calls succeed.
. "$(dirname "$0")/lib.sh"

run -n 4 -v "$CALLS" notify
expect_rc 0 "notify -n 4"
for r in 0 1 3; do
    expect_out "^notify rank $r: custom 0 namespace 1\$" "rank $r: the namespace event only"
done
expect_out '^notify rank 2: custom 1 namespace 1$' "rank 2: both events"
grep -q 'notify_event.*not supported' "$ERR" && fail "ternrun called a notification unsupported"

finish
