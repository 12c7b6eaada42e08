#!/bin/sh
# -x VAR=value and -x VAR reach the ranks; the rest of the environment is
# inherited; inherited PMIX_* variables are scrubbed unless given with -x.
. "$(dirname "$0")/lib.sh"

export TERN_TEST_INHERITED=inh PMIX_FOO=bar PMIX_KEEP=kept TERN_TEST_X=fromenv
prog='echo "$PMIX_RANK x=${TERN_TEST_SET-unset} y=${TERN_TEST_X-unset} i=${TERN_TEST_INHERITED-unset} foo=${PMIX_FOO-unset} keep=${PMIX_KEEP-unset}"'
run -n 2 -x TERN_TEST_SET=hello -x TERN_TEST_X -x PMIX_KEEP sh -c "$prog"
expect_rc 0 "-x run"
for r in 0 1; do
    expect_out "^$r x=hello y=fromenv i=inh foo=unset keep=kept\$" "rank $r environment"
done

# a PMIx client must not be steered to another server by inherited variables
PMIX_SERVER_URI41="pmix-server.1;tcp4://127.0.0.1:1" PMIX_NAMESPACE=bogus run -n 2 "$PROBE" keys
expect_rc 0 "keys with a stale PMIX_SERVER_URI41 in the environment"

# ternrun inside a ternrun job: the inner one serves its own ranks
run -n 1 "$TERNRUN" -n 2 "$PROBE" keys
expect_rc 0 "nested ternrun"
[ "$(grep -c '^ok keys' "$OUT")" -eq 2 ] || fail "nested ternrun: expected 2 ok lines"

run -n 1 -x 1BAD=x true
[ "$RC" -ne 0 ] || fail "-x with an invalid name accepted"

finish
