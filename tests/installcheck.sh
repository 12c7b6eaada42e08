#!/bin/sh
# make installcheck (and so make distcheck): the installed tern is usable.
#  - tern.pc gives the flags to build a program that includes only
#    <tern/tern.h>, the program links against the installed libtern and runs;
#  - the installed tern_info lists every netmod tern.pc says is built;
#  - tern-mpi.pc and the installed ternmpicc / ternmpicxx build an MPI program.
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

# the MPI layer: tern-mpi.pc builds an MPI program (linked, not run: no
# launcher here), and so does the installed ternmpicc (given the DESTDIR
# paths, as a relocated install would)
cat >"$tmp/mpi_hello.c" <<'EOF2'
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int (*volatile init)(int *, char ***) = MPI_Init;
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(MPI_ERR_TRUNCATE, s, &n);
    printf("%s (%d)\n", s, init != NULL && argc > 0 && argv != NULL);
    return n > 0 ? 0 : 1;
}
EOF2
mflags=$($PKG_CONFIG --cflags --libs tern-mpi) || fail "$PKG_CONFIG --cflags --libs tern-mpi"
# shellcheck disable=SC2086
${CC:-cc} ${CFLAGS:-} -o "$tmp/mpi_hello" "$tmp/mpi_hello.c" $mflags ${LDFLAGS:-} ||
    fail "an MPI program does not build with tern-mpi.pc's flags"
LD_LIBRARY_PATH=$DESTDIR$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/mpi_hello" ||
    fail "the MPI program linked against the installed libtern-mpi did not run"
TERN_MPI_INCLUDEDIR=$PKG_CONFIG_SYSROOT_DIR$($PKG_CONFIG --variable=includedir tern-mpi) \
    TERN_MPI_LIBDIR=$DESTDIR$libdir TERN_MPICC_CC="${CC:-cc} ${CFLAGS:-}" \
    "$DESTDIR$bindir/ternmpicc" -o "$tmp/mpi_hello2" "$tmp/mpi_hello.c" ${LDFLAGS:-} ||
    fail "the installed ternmpicc does not build an MPI program"
"$tmp/mpi_hello2" || fail "the program ternmpicc built did not run"
# the same program as C++ through the installed ternmpicxx
cp "$tmp/mpi_hello.c" "$tmp/mpi_hello.cc"
TERN_MPI_INCLUDEDIR=$PKG_CONFIG_SYSROOT_DIR$($PKG_CONFIG --variable=includedir tern-mpi) \
    TERN_MPI_LIBDIR=$DESTDIR$libdir TERN_MPICXX_CXX="${CXX:-c++} ${CXXFLAGS:-}" \
    "$DESTDIR$bindir/ternmpicxx" -o "$tmp/mpi_hello3" "$tmp/mpi_hello.cc" ${LDFLAGS:-} ||
    fail "the installed ternmpicxx does not build a C++ MPI program"
"$tmp/mpi_hello3" || fail "the program ternmpicxx built did not run"
echo "tern-mpi.pc, ternmpicc and ternmpicxx build MPI programs"
