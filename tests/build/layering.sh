#!/bin/sh
# Layers call only what lies below them, checked on what the built objects
# leave undefined (nm -u), so a shortcut fails here even when it links:
#  - the dpdk netmod's reliability layer (dpdk_rel.c) hands frames up
#    through the handler table its upper layers register
#    (tern_dpdk_handler_t): it calls neither dpdk_lmt.c (tern_dpdk_lmt_*)
#    nor the engine's parser (tern_handle_pkt) itself;
#  - libtern takes no tern_* symbol from outside itself: nothing of
#    ternrun's PMIx server (pmix/server/, tern_srv_*) or stdio forwarding
#    (launcher/iof/, tern_iof_*);
#  - the libfabric provider calls only libtern's public API and exports
#    fi_prov_ini alone.
# Runs from the top build directory; NM comes from make check.
set -u
NM=${NM:-nm}
fail() { echo "FAIL: $*" >&2; exit 1; }
rc=0

# The object a libtool .lo names (PIC, or the only one built).
lo_object() {
    dir=$(dirname "$1")
    obj=$(sed -n "s/^pic_object='\(.*\)'\$/\1/p" "$1")
    [ -z "$obj" ] || [ "$obj" = none ] && obj=$(sed -n "s/^non_pic_object='\(.*\)'\$/\1/p" "$1")
    [ -n "$obj" ] && [ "$obj" != none ] && echo "$dir/$obj"
}

# forbid OBJECT REGEX WHY: OBJECT must leave no symbol matching REGEX undefined.
forbid() {
    # shellcheck disable=SC2086
    undef=$($NM -u "$1" | awk '{ print $NF }' | grep -E "$2")
    if [ -n "$undef" ]; then
        echo "FAIL: $1 calls $(echo "$undef" | tr '\n' ' ')($3)" >&2
        rc=1
    else
        echo "ok: $1 calls nothing matching $2"
    fi
}

rel=netmods/dpdk/libtern_dpdk_la-dpdk_rel.lo
if [ -f "$rel" ]; then
    obj=$(lo_object "$rel") && [ -f "$obj" ] || fail "no object for $rel"
    forbid "$obj" '^tern_dpdk_lmt_|^tern_handle_pkt$' \
        "dpdk_rel.c hands frames up through tern_dpdk_handler_t"
else
    echo "dpdk netmod not built: its check skipped"
fi

dlname=$(sed -n "s/^dlname='\(.*\)'\$/\1/p" libtern.la 2>/dev/null)
[ -n "$dlname" ] && [ -f ".libs/$dlname" ] || fail "no shared library named in ./libtern.la"
forbid ".libs/$dlname" '^tern_' "libtern must not depend on ternrun's code or any other tern object"

# The libfabric provider (when built) is written on tern's public API only:
# every tern symbol it takes is of libtern's public version node (TERN_0.1,
# engine/libtern.map), none of TERN_PRIVATE_0.0; it exports fi_prov_ini
# alone (libfabric's entry point).
if [ -f .libs/libtern-fi.so ]; then
    # shellcheck disable=SC2086
    undef=$($NM -D -u .libs/libtern-fi.so | awk '{ print $NF }' | grep '^tern_')
    [ -n "$undef" ] || fail "libtern-fi.so takes no tern_ symbol: nm -D shows no versions?"
    bad=$(echo "$undef" | grep -v '@TERN_0\.1$')
    if [ -n "$bad" ]; then
        echo "FAIL: libtern-fi.so calls tern beyond its public API: $(echo "$bad" | tr '\n' ' ')" >&2
        rc=1
    else
        echo "ok: libtern-fi.so calls only tern's public API ($(echo "$undef" | wc -l) functions)"
    fi
    # shellcheck disable=SC2086
    defined=$($NM -D --defined-only .libs/libtern-fi.so | awk '{ print $NF }' | grep -v '^_')
    if [ "$defined" != fi_prov_ini ]; then
        echo "FAIL: libtern-fi.so exports $(echo "$defined" | tr '\n' ' ')(fi_prov_ini only)" >&2
        rc=1
    else
        echo "ok: libtern-fi.so exports fi_prov_ini only"
    fi
else
    echo "libfabric provider not built: its check skipped"
fi

exit "$rc"
