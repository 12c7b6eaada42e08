#!/bin/sh
# The profiling interface (issue 24): include/mpi_pmpi.h declares a PMPI_
# twin of every MPI_ function of include/mpi.h, mpi_rma.h and mpi_t.h with the same
# parameters (its generated block is what mpi/pmpi.awk makes of their prototypes now), libtern-mpi.so exports
# each PMPI_ name at its MPI_ function's address, and a program that wraps
# MPI calls through their PMPI_ names (tests/mpi/mpi_pmpi.c) runs at 1, 2
# and 4 ranks.
set -u
fail() { echo "FAIL: $*"; exit 1; }
srcdir=${srcdir:-.}
work=$(mktemp -d "${TMPDIR:-/tmp}/tern-pmpi-test.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT
hdrs="$srcdir/include/mpi.h $srcdir/include/mpi_rma.h $srcdir/include/mpi_t.h"
lib=.libs/libtern-mpi.so
[ -f "$lib" ] || fail "$lib not built"
command -v nm >/dev/null || fail "nm not found (binutils)"

awk -v mode=header -f "$srcdir/mpi/pmpi.awk" $hdrs >"$work/want"
sed -n '/^\/\* ---- PMPI_/,/^\/\* ---- end of PMPI_/p' "$srcdir/include/mpi_pmpi.h" |
    sed -e '1,/\*\/$/d' -e '$d' >"$work/have"
[ -s "$work/want" ] || fail "mpi/pmpi.awk found no prototype in $hdrs"
diff -u "$work/want" "$work/have" >"$work/diff" ||
    { cat "$work/diff"; fail "include/mpi_pmpi.h's PMPI_ block is not what mpi/pmpi.awk makes of its prototypes (regenerate it)"; }
echo "ok: $(wc -l <"$work/want") lines of PMPI_ prototypes match"

n=0
nm -D --defined-only "$lib" >"$work/syms" || fail "nm $lib"
for f in $(awk -v mode=names -f "$srcdir/mpi/pmpi.awk" $hdrs); do
    a=$(awk -v s="$f" '$3 == s { print $1 }' "$work/syms")
    b=$(awk -v s="P$f" '$3 == s { print $1 }' "$work/syms")
    [ -n "$a" ] || fail "$lib does not export $f"
    [ "$a" = "$b" ] || fail "$lib: P$f is at '${b:-nowhere}', $f at $a"
    n=$((n + 1))
done
echo "ok: $n PMPI_ names exported at their MPI_ functions' addresses"

# shellcheck disable=SC2086
./ternmpicc ${TERN_TEST_CFLAGS:--Wall -Werror} -O2 "$srcdir/tests/mpi/mpi_pmpi.c" \
    -o "$work/mpi_pmpi" || fail "ternmpicc mpi_pmpi.c"
for np in 1 2 4; do
    echo "+ TERN_NETMODS=shm ternrun -n $np mpi_pmpi"
    TERN_NETMODS=shm timeout -k 5 120 ./ternrun -n "$np" --bind-to none "$work/mpi_pmpi" \
        </dev/null >"$work/out" 2>&1
    rc=$?
    cat "$work/out"
    [ "$rc" -eq 0 ] || fail "mpi_pmpi at $np ranks exited $rc"
    [ "$(grep -c '^ok rank' "$work/out")" -eq "$np" ] || fail "mpi_pmpi at $np ranks"
done
echo "ok pmpi"
