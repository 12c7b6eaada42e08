#!/bin/sh
# PMIx_Job_control through ternrun (docs/ternrun.md), from a plain PMIx
# client on 3 ranks: rank 0 sends SIGUSR1 to rank 1 (which then prints,
# finalizes and exits 0) and PMIX_JOB_CTRL_KILL to rank 2, which ends "killed by
# command": not a failure, so the job exits 0; a checkpoint request is
# refused (NOT_SUPPORTED, named on stderr) and a foreign namespace is
# NOT_FOUND (pmix_calls jobctl checks the statuses).
. "$(dirname "$0")/lib.sh"

run -n 3 -v "$CALLS" jobctl
expect_rc 0 "jobctl -n 3 (rank 2 killed by job control is no failure)"
grep -q '^ok jobctl rank 0' "$OUT" || fail "rank 0's checks"
grep -q '^signal rank 1 got 10' "$OUT" || fail "rank 1 did not get SIGUSR1"
grep -Eq 'rank 2 \(pid [0-9]+\) terminated by SIGKILL' "$ERR" || fail "rank 2 was not killed"
grep -q 'pmix.jctrl.ckpt: not supported' "$ERR" || fail "the refused checkpoint is not named"

# rank 0 kills the 3 others at once while they wait in a fence it never
# joins: ternrun takes them out of the PMIx server before it signals them
# (OpenPMIx 4.2 completed such a fence twice when several of its
# participants died at once, see nspace.c); five runs, each clean
for i in 1 2 3 4 5; do
    run -n 4 "$CALLS" jobctl-fence
    expect_rc 0 "killing the ranks in a fence, run $i"
    grep -q '^ok jobctl-fence rank 0' "$OUT" || fail "rank 0's checks, run $i"
    if grep -q outlived "$OUT"; then fail "a rank outlived its kill, run $i"; fi
done

finish
