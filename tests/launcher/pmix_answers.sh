#!/bin/sh
# PMIx_Query_info answers in the form PMIx 4.2 clients read (docs/ternrun.md):
# one info per key answered, keyed by the query key, in the order asked.
# pmix_clients asks what OpenPMIx's hello, debugger and tool examples ask and
# reads the answers as they do (hello crashed, debugger counted 1 result,
# and tool's PMIX_QUERY_NAMESPACE_INFO crashed ternrun itself before); odd
# queries (unknown keys, qualifiers of the wrong type, unknown namespace or
# host, 64 keys) get a status and leave ternrun running.
. "$(dirname "$0")/lib.sh"
CLIENTS=${PMIX_CLIENTS:-./tests/launcher/pmix_clients}

for what in hello debugger tool odd; do
    run -n 2 "$CLIENTS" "$what"
    expect_rc 0 "pmix_clients $what"
    for r in 0 1; do
        expect_out "^ok $what rank $r\$" "pmix_clients $what, rank $r"
    done
done

finish
