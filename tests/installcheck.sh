#!/bin/sh
# make installcheck (and so make distcheck): the installed tern is usable.
#  - tern.pc gives the flags to build a program that includes only
#    <tern/tern.h>, the program links against the installed libtern and runs;
#  - tern.pc's and tern-mpi.pc's cflags are tern's include dir alone; the
#    install relocated with --define-variable=prefix builds a program too;
#  - a static libtern, if installed, links with pkg-config --static;
#  - the installed tern_info lists every netmod tern.pc says is built;
#  - tern-mpi.pc and the installed ternmpicc / ternmpicxx build an MPI program;
#  - MPICH's ABI: libmpich.so.12 and libmpi.so.12 in $(pkglibdir)/mpich-abi,
#    which the installed ternrun --mpich-abi puts on the ranks' library path.
# Works on an install under DESTDIR too (make install installcheck
# DESTDIR=...): pkg-config then runs with PKG_CONFIG_SYSROOT_DIR=$DESTDIR.
# From the Makefile: DESTDIR, prefix, includedir, libdir, bindir, CC,
# CFLAGS, LDFLAGS, PKG_CONFIG, pkglibdir.
set -u
DESTDIR=${DESTDIR:-}
prefix=${prefix:-/usr/local}
includedir=${includedir:-$prefix/include}
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

# tern.pc's and tern-mpi.pc's cflags are tern's include dir and nothing of
# its dependencies (issue 21: DPDK's -include rte_config.h -march=...)
# only_includes WHAT FLAGS: every word of FLAGS is -I of the include dir
only_includes() {
    for w in $2; do
        case $w in
        "-I$DESTDIR$includedir" | "-I$includedir") ;;
        *) fail "$1 carries '$w', not tern's include dir ($DESTDIR$includedir): $2" ;;
        esac
    done
}
for m in tern tern-mpi; do
    f=$($PKG_CONFIG --cflags $m) || fail "$PKG_CONFIG --cflags $m"
    only_includes "pkg-config --cflags $m" "$f"
done
# The install relocated, as a staged (DESTDIR) install is used: no sysroot,
# --define-variable=prefix=$DESTDIR$prefix moves tern's paths and nothing
# else (pkg-config applies it to every .pc file it reads).
reloc() { env -u PKG_CONFIG_SYSROOT_DIR $PKG_CONFIG --define-variable=prefix="$DESTDIR$prefix" "$@"; }
if [ "$(reloc --variable=includedir tern)" = "$DESTDIR$includedir" ] &&
    [ "$(reloc --variable=libdir tern)" = "$DESTDIR$libdir" ]; then
    f=$(reloc --cflags tern) || fail "$PKG_CONFIG --define-variable=prefix=... --cflags tern"
    only_includes "pkg-config --define-variable=prefix=$DESTDIR$prefix --cflags tern" "$f"
    rflags=$(reloc --cflags --libs tern) || fail "$PKG_CONFIG --define-variable=prefix=... tern"
    echo "tern.pc relocated to $DESTDIR$prefix: $rflags"
    # shellcheck disable=SC2086
    ${CC:-cc} ${CFLAGS:-} -o "$tmp/hello-reloc" "$tmp/hello.c" $rflags ${LDFLAGS:-} ||
        fail "a program does not build with tern.pc relocated by --define-variable=prefix"
    LD_LIBRARY_PATH=$DESTDIR$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/hello-reloc" ||
        fail "the program built with the relocated tern.pc did not run"
else
    echo "includedir or libdir not under the prefix: tern.pc relocation not tried"
fi
# a static libtern (configure --enable-static): -ltern finds only libtern.a
# in a directory searched first, pkg-config --static adds what it links
if [ -f "$DESTDIR$libdir/libtern.a" ]; then
    mkdir "$tmp/static" && ln -s "$DESTDIR$libdir/libtern.a" "$tmp/static/" || fail "ln -s libtern.a"
    sflags=$($PKG_CONFIG --static --libs tern) || fail "$PKG_CONFIG --static --libs tern"
    echo "static: -L$tmp/static $sflags"
    # shellcheck disable=SC2086
    ${CC:-cc} ${CFLAGS:-} -o "$tmp/hello-static" "$tmp/hello.c" $($PKG_CONFIG --cflags tern) \
        -L"$tmp/static" $sflags ${LDFLAGS:-} ||
        fail "a program does not link against libtern.a with pkg-config --static --libs tern"
    "$tmp/hello-static" || fail "the program linked against libtern.a did not run"
else
    echo "no libtern.a installed: static link not tried"
fi

# tern_info links the installed libtern.so (its netmods are the library's):
# under DESTDIR that one, not another libtern the run path may name
info=$DESTDIR$bindir/tern_info
list=$(LD_LIBRARY_PATH=$DESTDIR$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$info" --netmods) ||
    fail "$info --netmods"
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
# LD_LIBRARY_PATH as for the others: the program's rpath finds
# libtern-mpi under DESTDIR, but libtern-mpi finds libtern through its own
# runpath, the final libdir (the linker's default --as-needed leaves
# libtern out of a program that calls only MPI)
LD_LIBRARY_PATH=$DESTDIR$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/mpi_hello2" ||
    fail "the program ternmpicc built did not run"
# the same program as C++ through the installed ternmpicxx
cp "$tmp/mpi_hello.c" "$tmp/mpi_hello.cc"
TERN_MPI_INCLUDEDIR=$PKG_CONFIG_SYSROOT_DIR$($PKG_CONFIG --variable=includedir tern-mpi) \
    TERN_MPI_LIBDIR=$DESTDIR$libdir TERN_MPICXX_CXX="${CXX:-c++} ${CXXFLAGS:-}" \
    "$DESTDIR$bindir/ternmpicxx" -o "$tmp/mpi_hello3" "$tmp/mpi_hello.cc" ${LDFLAGS:-} ||
    fail "the installed ternmpicxx does not build a C++ MPI program"
LD_LIBRARY_PATH=$DESTDIR$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/mpi_hello3" ||
    fail "the program ternmpicxx built did not run"
echo "tern-mpi.pc, ternmpicc and ternmpicxx build MPI programs"
# what is installed is the wrappers' installed copy: -show names the
# installed paths, not the build tree (tests/mpi/wrappers.sh checks the
# build tree's copy)
for w in ternmpicc ternmpicxx; do
    line=$(env -u TERN_MPI_INCLUDEDIR -u TERN_MPI_LIBDIR "$DESTDIR$bindir/$w" -show x.c) ||
        fail "the installed $w -show"
    echo "installed $w -show: $line"
    case " $line " in
    */.libs*) fail "the installed $w names a build tree: $line" ;;
    *" -I$includedir x.c -L$libdir -Wl,-rpath,$libdir -ltern-mpi -ltern "*) ;;
    *) fail "the installed $w -show does not name $includedir and $libdir: $line" ;;
    esac
done

# MPICH's ABI (issue 24): libmpich.so.12 and libmpi.so.12 in a directory of
# their own, with those sonames, finding the installed libtern-mpi; the
# installed ternrun --mpich-abi puts that directory first on the ranks'
# LD_LIBRARY_PATH (it names the final place, so under DESTDIR it is told
# where the staged copy is: TERN_MPICH_ABI_DIR)
abidir=${pkglibdir:-$libdir/tern}/mpich-abi
for lib in libmpich.so.12 libmpi.so.12; do
    [ -e "$DESTDIR$abidir/$lib" ] || fail "$abidir/$lib is not installed"
    readelf -d "$DESTDIR$abidir/$lib" | grep -q "SONAME.*\[$lib\]" ||
        fail "the installed $lib's soname is not $lib"
    LD_LIBRARY_PATH=$DESTDIR$libdir ldd "$DESTDIR$abidir/$lib" |
        grep -q "libtern-mpi\.so\.0 => $DESTDIR$libdir/" ||
        fail "the installed $lib does not find the installed libtern-mpi.so.0"
done
if [ -n "$DESTDIR" ]; then
    TERN_MPICH_ABI_DIR=$DESTDIR$abidir
    export TERN_MPICH_ABI_DIR
fi
path=$(env LD_LIBRARY_PATH=/x "$DESTDIR$bindir/ternrun" --mpich-abi -n 1 --bind-to none \
    sh -c 'echo "$LD_LIBRARY_PATH"') || fail "the installed ternrun --mpich-abi"
unset TERN_MPICH_ABI_DIR
[ "$path" = "$DESTDIR$abidir:/x" ] ||
    fail "the installed ternrun --mpich-abi gives the ranks LD_LIBRARY_PATH=$path, not $DESTDIR$abidir:/x"
echo "MPICH's ABI: $abidir holds libmpich.so.12 and libmpi.so.12; ternrun --mpich-abi uses it"
