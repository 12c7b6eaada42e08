#!/bin/sh
# PMIx_Query_info through ternrun (docs/ternrun.md): a plain PMIx client
# on 3 ranks asks for the namespaces, the proc table (host, program, pids -
# its own among them - and states), the job size and the number of psets,
# one answer each, keyed by the query key, in the order asked (the form
# PMIx 4.2 clients read; ternrun sent one PMIX_QUERY_RESULTS array per
# query before); a known key with an unknown one is
# PMIX_QUERY_PARTIAL_SUCCESS (pmix_calls query checks the values).
. "$(dirname "$0")/lib.sh"

run -n 3 "$CALLS" query
expect_rc 0 "query -n 3"
[ "$(grep -c '^ok query' "$OUT")" -eq 3 ] || fail "query: expected 3 ok lines"

finish
