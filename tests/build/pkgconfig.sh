#!/bin/sh
# tern.pc gives a program tern's own flags and nothing else (issue 21, 5):
#  - `pkg-config --cflags tern` (and tern-mpi) is tern's include dir alone:
#    tern's public headers need none of its dependencies' flags, and DPDK's
#    (-include rte_config.h -march=...) must not reach every tern program;
#  - relocated with --define-variable=prefix=STAGE, as a packager or a user
#    of a staged install does, the flags point into STAGE and nothing else
#    moves with them: a program that includes <tern/tern.h> and <mpi.h>
#    builds from STAGE and runs;
#  - with a static libtern (configure --enable-static), `pkg-config --static
#    --libs tern` links a program against libtern.a.
# STAGE here is the build tree seen through symlinks laid out as tern.pc
# places its files (make installcheck does the same on a real DESTDIR
# install; a make install from inside make check would relink the build
# tree's libraries while other tests use them).  Runs from the top build
# directory; CC, PKG_CONFIG and TERN_TEST_CFLAGS come from make check.
set -u
srcdir=${srcdir:-.}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tern-pkgconfig.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
builddir=$(pwd)
abs_srcdir=$(cd "$srcdir" && pwd)
[ -f tern.pc ] && [ -f tern-mpi.pc ] || fail "./tern.pc or ./tern-mpi.pc missing"
# this build tree's .pc files only, no sysroot
unset PKG_CONFIG_SYSROOT_DIR
PKG_CONFIG_PATH=$builddir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH

# only_includes WHAT FLAGS DIR...: every word of FLAGS is -IDIR for one of
# the DIRs (pkg-config may drop a system include dir altogether)
only_includes() {
    what=$1 flags=$2
    shift 2
    for w in $flags; do
        ok=0
        for d in "$@"; do
            [ "$w" = "-I$d" ] && ok=1
        done
        [ "$ok" = 1 ] || fail "$what carries '$w', not tern's include dir ($*): $flags"
    done
}

# as configured
inc=$($PKG_CONFIG --variable=includedir tern) || fail "$PKG_CONFIG --variable=includedir tern"
for m in tern tern-mpi; do
    f=$($PKG_CONFIG --cflags $m) || fail "$PKG_CONFIG --cflags $m"
    echo "pkg-config --cflags $m: $f"
    only_includes "pkg-config --cflags $m" "$f" "$inc"
done

# relocated to a stage
stage=$tmp/stage
pc() { $PKG_CONFIG --define-variable=prefix="$stage" "$@"; }
sinc=$(pc --variable=includedir tern) && slib=$(pc --variable=libdir tern) ||
    fail "$PKG_CONFIG --define-variable=prefix=... --variable tern"
case $sinc:$slib in
"$stage"/*:"$stage"/*) ;;
*)
    echo "SKIP: configure's includedir or libdir is not under the prefix ($sinc, $slib):" \
        "--define-variable=prefix does not move them"
    exit 77
    ;;
esac
for m in tern tern-mpi; do
    f=$(pc --cflags $m) || fail "$PKG_CONFIG --define-variable=prefix=STAGE --cflags $m"
    echo "pkg-config --define-variable=prefix=STAGE --cflags $m: $f"
    [ -n "$f" ] || fail "pkg-config --cflags $m is empty for STAGE ($sinc)"
    only_includes "relocated pkg-config --cflags $m" "$f" "$sinc"
done
mkdir -p "$sinc" "$slib" || fail "mkdir $sinc $slib"
ln -s "$abs_srcdir/include/tern" "$sinc/tern" && ln -s "$abs_srcdir/include/mpi.h" "$sinc/mpi.h" &&
    ln -s "$abs_srcdir/include/mpi_rma.h" "$sinc/mpi_rma.h" &&
    ln -s "$abs_srcdir/include/mpi_t.h" "$sinc/mpi_t.h" &&
    ln -s "$abs_srcdir/include/mpi_pmpi.h" "$sinc/mpi_pmpi.h" ||
    fail "ln -s headers"
for l in "$builddir"/.libs/libtern.so* "$builddir"/.libs/libtern-mpi.so*; do
    [ -e "$l" ] || fail "$l missing (libtern not built?)"
    ln -s "$l" "$slib/" || fail "ln -s $l"
done

# HELLO_MPI: the MPI layer's header and library too
cat >"$tmp/hello.c" <<'EOF'
#include <stdio.h>
#include <string.h>

#include <tern/tern.h>
#ifdef HELLO_MPI
#include <mpi.h>
#endif

int main(void)
{
    /* links tern_init (and MPI_Init) without calling it: no launcher here */
    tern_status_t (*volatile init)(tern_context_t **) = tern_init;
#ifdef HELLO_MPI
    int (*volatile mpi_init)(int *, char ***) = MPI_Init;
    if (mpi_init == NULL)
        return 1;
#endif
    if (init == NULL || strcmp(tern_strerror(TERN_OK), tern_strerror(TERN_ERR_LAST)) == 0)
        return 1;
    printf("%s\n", tern_strerror(TERN_ERR_PEER_FAILED));
    return 0;
}
EOF
for m in tern tern-mpi; do
    def=
    [ "$m" = tern-mpi ] && def=-DHELLO_MPI
    flags=$(pc --cflags --libs $m) || fail "$PKG_CONFIG --cflags --libs $m"
    echo "+ ${CC:-cc} ${TERN_TEST_CFLAGS:-} $def -o hello hello.c $flags"
    # shellcheck disable=SC2086
    ${CC:-cc} ${TERN_TEST_CFLAGS:-} $def -o "$tmp/hello-$m" "$tmp/hello.c" $flags ||
        fail "a program does not build with the relocated $m.pc"
    LD_LIBRARY_PATH=$slib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/hello-$m" ||
        fail "the program built with the relocated $m.pc did not run"
done

# a static libtern: -ltern finds only libtern.a in a directory searched first
if [ -f .libs/libtern.a ]; then
    mkdir "$tmp/static" && ln -s "$builddir/.libs/libtern.a" "$tmp/static/" || fail "ln -s libtern.a"
    flags=$(pc --cflags tern) && libs=$(pc --static --libs tern) ||
        fail "$PKG_CONFIG --static --libs tern"
    echo "+ ${CC:-cc} ${TERN_TEST_CFLAGS:-} -o hello hello.c $flags -L$tmp/static $libs"
    # shellcheck disable=SC2086
    ${CC:-cc} ${TERN_TEST_CFLAGS:-} -o "$tmp/hello-static" "$tmp/hello.c" $flags \
        -L"$tmp/static" $libs ||
        fail "a program does not link against libtern.a with pkg-config --static --libs tern"
    "$tmp/hello-static" || fail "the program linked against libtern.a did not run"
    echo "linked against libtern.a with pkg-config --static --libs tern"
else
    echo "no static libtern (configure --enable-static builds one): static link not tried"
fi
echo "ok pkgconfig"
