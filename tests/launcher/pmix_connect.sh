#!/bin/sh
# PMIx_Connect / PMIx_Disconnect of the whole job and a process group of
# ranks 0 and 1 (PMIx_Group_construct with PMIX_GROUP_ASSIGN_CONTEXT_ID:
# both members get the same context id) through ternrun, from a plain PMIx
# client on 3 ranks; a connect naming a proc of another namespace fails at
# once (PMIX_ERR_NOT_SUPPORTED until spawn) with a line naming it.
. "$(dirname "$0")/lib.sh"

run -n 3 "$CALLS" connect
expect_rc 0 "connect -n 3"
[ "$(grep -c '^ok connect' "$OUT")" -eq 3 ] || fail "connect: expected 3 ok lines"
c0=$(sed -n 's/^group rank 0 context //p' "$OUT")
c1=$(sed -n 's/^group rank 1 context //p' "$OUT")
[ -n "$c0" ] && [ "$c0" -gt 0 ] && [ "$c0" = "$c1" ] ||
    fail "group context ids: rank 0 '$c0', rank 1 '$c1' (want the same, > 0)"
grep -q 'group rank 2' "$OUT" && fail "rank 2 joined a group it was not in"
expect_out '^foreign connect: ' "a connect with another namespace"
grep -q 'connect with tern-no-such-nspace:0: not a namespace of this launcher' "$ERR" ||
    fail "the foreign connect is not named on stderr"

finish
