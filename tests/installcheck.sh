#!/bin/sh
# make installcheck (and so make distcheck): the installed tern is usable.
#  - tern.pc gives the flags to build a program that includes only
#    <tern/tern.h>, the program links against the installed libtern and runs;
#  - the installed tern_info lists every netmod tern.pc says is built.
# Works on an install under DESTDIR too (make install installcheck
# DESTDIR=...): pkg-config then runs with PKG_CONFIG_SYSROOT_DIR=$DESTDIR.
# From the Makefile: DESTDIR, libdir, bindir, CC, CFLAGS, LDFLAGS,
# PKG_CONFIG.
set -u
DESTDIR=${DESTDIR:-}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tern-installcheck.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

PKG_CONFIG_PATH=$DESTDIR$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
PKG_CONFIG_SYSROOT_DIR=$DESTDIR
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
flags=$($PKG_CONFIG --cflags --libs tern) || fail "$PKG_CONFIG --cflags --libs tern"
netmods=$($PKG_CONFIG --variable=netmods tern) || fail "$PKG_CONFIG --variable=netmods tern"
echo "tern.pc: $flags; netmods: $netmods"
[ -n "$netmods" ] || fail "tern.pc names no netmod"

cat >"$tmp/hello.c" <<'EOF'
#include <stdio.h>
#include <string.h>

#include <tern/tern.h>

int main(void)
{
    /* links tern_init without calling it (no PMIx server here) */
    tern_status_t (*volatile init)(tern_context_t **) = tern_init;
    if (init == NULL || strcmp(tern_strerror(TERN_OK), tern_strerror(TERN_ERR_LAST)) == 0)
        return 1;
    printf("%s / %s\n", tern_strerror(TERN_ERR_PEER_FAILED),
           tern_status_is_peer_error(TERN_ERR_PEER_FAILED) ? "peer error" : "?");
    return 0;
}
EOF
# shellcheck disable=SC2086
${CC:-cc} ${CFLAGS:-} -o "$tmp/hello" "$tmp/hello.c" $flags ${LDFLAGS:-} ||
    fail "a program using <tern/tern.h> does not build with tern.pc's flags"
LD_LIBRARY_PATH=$DESTDIR$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/hello" ||
    fail "the program linked against the installed libtern did not run"

info=$DESTDIR$bindir/tern_info
list=$("$info" --netmods) || fail "$info --netmods"
for nm in $netmods; do
    echo "$list" | grep -q "^  $nm " || fail "installed tern_info lists no netmod $nm: $list"
done
echo "installed tern_info lists: $netmods"
