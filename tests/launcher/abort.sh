#!/bin/sh
# A rank calling PMIx_Abort(5) ends the whole job at once with status 5,
# although the other ranks would sleep for 60 s; the abort is reported.
. "$(dirname "$0")/lib.sh"

start=$(date +%s)
T=30 run -n 4 "$PROBE" abort 2 5
took=$(($(date +%s) - start))
expect_rc 5 "abort status"
expect_err '^ternrun: rank 2 .*PMIx_Abort.*status 5.*probe abort test' "abort line"
# the others sleep 60 s: only killing them ends the job this soon (a
# functional bound, far above the kill grace, not a speed target)
[ "$took" -lt 15 ] || fail "the job took $took s to end after the abort"

# abort(0) must not look like success
T=30 run -n 2 "$PROBE" abort 0 0
expect_rc 1 "abort with status 0"

finish
