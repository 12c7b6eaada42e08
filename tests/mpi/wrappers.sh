#!/bin/sh
# The build tree's ternmpicc and ternmpicxx work uninstalled, as libtool's
# wrappers do (issue 21, 9): with nothing set in the environment they take
# mpi.h from the source tree and libtern-mpi / libtern from the build tree's
# .libs, with an rpath there, so the program runs from the build tree;
# -show and -showme print the command without running it; TERN_MPI_*DIR
# and TERN_MPICC_CC / TERN_MPICXX_CXX still override.  Runs from the top
# build directory; CC, TERN_TEST_CFLAGS and TERN_TEST_CXXFLAGS come from
# make check.
set -u
fail() { echo "FAIL: $*"; exit 1; }
srcdir=${srcdir:-.}
work=$(mktemp -d "${TMPDIR:-/tmp}/tern-wrappers-test.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT
unset TERN_MPI_INCLUDEDIR TERN_MPI_LIBDIR TERN_MPICC_CC TERN_MPICXX_CXX
for w in ternmpicc ternmpicxx mpi/ternmpicc; do
    [ -x "./$w" ] || fail "./$w not built"
done
# the directories as the wrappers must find them, symlinks resolved
want_inc=$(cd "$srcdir/include" && pwd -P) && want_lib=$(cd .libs && pwd -P) ||
    fail "no $srcdir/include or .libs"
same_dir() { [ -d "$1" ] && [ "$(cd "$1" && pwd -P)" = "$2" ]; }
src=$srcdir/tests/mpi/mpi_hello.c

# -show: the command, with the user's arguments in place, not run
line=$(./ternmpicc -show -o "$work/never" "$src") || fail "ternmpicc -show exited $?"
echo "ternmpicc -show: $line"
[ ! -e "$work/never" ] || fail "ternmpicc -show ran the compiler"
inc='' lib='' rpath=''
for w in $line; do
    case $w in
    -I*) [ -z "$inc" ] && inc=${w#-I} ;;
    -L*) lib=${w#-L} ;;
    -Wl,-rpath,*) rpath=${w#-Wl,-rpath,} ;;
    esac
done
same_dir "$inc" "$want_inc" || fail "ternmpicc -show: mpi.h from '$inc', not the source tree's $want_inc"
same_dir "$lib" "$want_lib" || fail "ternmpicc -show: libraries from '$lib', not the build tree's $want_lib"
[ "$rpath" = "$lib" ] || fail "ternmpicc -show: rpath '$rpath', not $lib"
want="${CC:-cc} -I$inc -o $work/never $src -L$lib -Wl,-rpath,$lib -ltern-mpi -ltern -lm"
[ "$line" = "$want" ] || fail "ternmpicc -show printed
  $line
instead of
  $want"
[ "$(./ternmpicc -showme -o "$work/never" "$src")" = "$line" ] || fail "-showme differs from -show"
# no link: no libraries
line=$(./ternmpicc -show -c "$src") || fail "ternmpicc -show -c"
[ "$line" = "${CC:-cc} -I$inc -c $src" ] || fail "ternmpicc -show -c printed: $line"
# an argument the shell would split is printed quoted
line=$(./ternmpicc -show -c '-DGREETING="hi there"' "$src") || fail "ternmpicc -show -D"
case $line in
*" '-DGREETING=\"hi there\"' "*) ;;
*) fail "ternmpicc -show does not quote an argument with a space: $line" ;;
esac
# the environment still overrides
line=$(TERN_MPI_INCLUDEDIR=/nonexistent/inc TERN_MPI_LIBDIR=/nonexistent/lib \
    TERN_MPICC_CC="mycc -O1" ./ternmpicc -show x.c) || fail "ternmpicc -show with overrides"
want="mycc -O1 -I/nonexistent/inc x.c -L/nonexistent/lib -Wl,-rpath,/nonexistent/lib -ltern-mpi -ltern -lm"
[ "$line" = "$want" ] || fail "overridden ternmpicc -show printed: $line"
line=$(TERN_MPICXX_CXX=myc++ ./ternmpicxx -show -c x.cc) || fail "ternmpicxx -show -c"
[ "$line" = "myc++ -I$inc -c x.cc" ] || fail "overridden ternmpicxx -show -c printed: $line"
# the copy make install installs names the installed paths, not the build tree
line=$(./mpi/ternmpicc -show x.c) || fail "mpi/ternmpicc -show"
echo "installed ternmpicc -show: $line"
case $line in
*/.libs* | *"-I$inc "*) fail "the ternmpicc to install names the build tree: $line" ;;
esac
echo "ok -show"

# build with each wrapper (the project's warnings, and its sanitizers in
# that build) and run under ternrun from the build tree
# shellcheck disable=SC2086
./ternmpicc ${TERN_TEST_CFLAGS:--Wall -Werror} -o "$work/hello_c" "$src" ||
    fail "the build tree's ternmpicc does not build an MPI program"
cp "$src" "$work/hello.cc" || fail "cp"
# shellcheck disable=SC2086
./ternmpicxx ${TERN_TEST_CXXFLAGS:--Wall -Werror} -I"$srcdir/tests/mpi" -o "$work/hello_cxx" \
    "$work/hello.cc" || fail "the build tree's ternmpicxx does not build an MPI program"
for prog in hello_c hello_cxx; do
    # the libraries the program loads are the build tree's, by its rpath
    # alone (not an installed tern, not LD_LIBRARY_PATH)
    deps=$(env -u LD_LIBRARY_PATH ldd "$work/$prog") || fail "ldd $prog"
    for l in libtern-mpi.so.0 libtern.so.0; do
        p=$(echo "$deps" | sed -n "s|^[[:space:]]*$l => \(.*\) (0x.*|\1|p")
        same_dir "$(dirname "${p:-/nonexistent/x}")" "$want_lib" ||
            fail "$prog loads $l from '$p', not from $want_lib: $deps"
    done
    echo "+ TERN_NETMODS=shm ternrun -n 2 --bind-to none $prog"
    TERN_NETMODS=shm timeout -k 5 120 ./ternrun -n 2 --bind-to none "$work/$prog" \
        </dev/null >"$work/out" 2>&1
    rc=$?
    cat "$work/out"
    [ "$rc" -eq 0 ] || fail "$prog under ternrun -n 2 exited $rc"
    [ "$(grep -c '^ok rank' "$work/out")" -eq 2 ] || fail "$prog: not every rank said ok"
done
echo "ok wrappers"
