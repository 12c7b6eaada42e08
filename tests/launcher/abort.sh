#!/bin/sh
# A rank calling PMIx_Abort(5) ends the whole job at once with status 5,
# although the other ranks would sleep for 60 s, or wait in a fence it
# never joins; the abort is reported.
. "$(dirname "$0")/lib.sh"

start=$(date +%s)
T=30 run -n 4 "$PROBE" abort 2 5
took=$(($(date +%s) - start))
expect_rc 5 "abort status"
expect_err '^ternrun: rank 2 .*PMIx_Abort.*status 5.*probe abort test' "abort line"
# the others sleep 60 s: only killing them ends the job this soon (a
# functional bound, far above the kill grace, not a speed target)
[ "$took" -lt 15 ] || fail "the job took $took s to end after the abort"

# the others waiting in a fence the aborting rank never joins: the same
start=$(date +%s)
T=30 run -n 4 "$PROBE" abort 1 7 fence
took=$(($(date +%s) - start))
expect_rc 7 "abort status, the others in a fence"
expect_err '^ternrun: rank 1 .*PMIx_Abort.*status 7' "abort line, the others in a fence"
# (a waiting rank's fence may also end, with an error such as
# PMIX_ERR_PARTIAL_SUCCESS, when the PMIx library sees the aborted rank
# gone, before ternrun kills it: no hang either way)
[ "$took" -lt 15 ] || fail "the job took $took s to end after the abort (the others in a fence)"

# abort(0) must not look like success
T=30 run -n 2 "$PROBE" abort 0 0
expect_rc 1 "abort with status 0"

finish
