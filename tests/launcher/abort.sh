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

# Not run here: the same with the others waiting in a fence the aborting
# rank never joins (pmix_probe abort 1 7 fence) ends with status 7, but
# ternrun then crashed in PMIx_server_finalize (SIGSEGV, or a glibc mutex
# assertion) in about 1 run in 20-40: a known bug (docs/ternrun.md), to be
# fixed before this case comes back.

# abort(0) must not look like success
T=30 run -n 2 "$PROBE" abort 0 0
expect_rc 1 "abort with status 0"

finish
