#!/bin/sh
# Ranks see the job keys the tern library reads (JOB_SIZE, LOCAL_SIZE,
# LOCAL_PEERS, LOCAL_RANK, NODE_RANK, NODEID, HOSTNAME) and exchange keys
# through Put/Commit/Fence(collect)/Get.
. "$(dirname "$0")/lib.sh"

for n in 1 2 4; do
    run -n "$n" "$PROBE" keys
    expect_rc 0 "keys -n $n"
    [ "$(grep -c '^ok keys' "$OUT")" -eq "$n" ] || fail "keys -n $n: expected $n ok lines"
    grep -q FAIL "$OUT" && fail "keys -n $n: a rank reported a failure"
done

finish
