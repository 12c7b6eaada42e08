#!/bin/sh
# The MPI layer's settings (TERN_MPI_*, mpi/config.c) are in tern's settings
# registry: tern_info lists each with its range; a value outside the range
# or not a number makes MPI_Init fail, naming the variable and the range
# (such values used to be ignored in silence); the range's ends work
# (mpi_coll at 3 ranks: both broadcast and both allreduce algorithms are
# then chosen at some sizes).  Runs from the top build directory.
set -u
fail() { echo "FAIL: $*"; exit 1; }
srcdir=${srcdir:-.}
INFO=${TERN_INFO:-./tern_info}
work=$(mktemp -d "${TMPDIR:-/tmp}/tern-mpi-settings.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT
for prog in mpi_hello mpi_coll; do
    # shellcheck disable=SC2086
    ./ternmpicc ${TERN_TEST_CFLAGS:--Wall -Werror} -O2 -I"$srcdir" "$srcdir/tests/mpi/$prog.c" \
        -o "$work/$prog" || fail "ternmpicc $prog.c"
done
"$INFO" --params >"$work/params" || fail "tern_info --params"
# run NP PROG VAR=value: bounded, output in $work/out
run() {
    echo "+ $3 ternrun -n $1 $2"
    (export "$3"; timeout -k 5 120 ./ternrun -n "$1" --bind-to none "$work/$2" </dev/null \
        >"$work/out" 2>&1)
}
n=0
for var in TERN_MPI_BCAST_LONG TERN_MPI_BCAST_MIN_PROCS TERN_MPI_ALLREDUCE_LONG; do
    range=$(awk -v v="$var" '$1 == v { print $4 }' "$work/params")
    [ -n "$range" ] || fail "tern_info --params does not list $var"
    lo=${range%%..*} hi=${range##*..}
    for v in "$lo" "$hi"; do
        run 3 mpi_coll "$var=$v" || { cat "$work/out"; fail "mpi_coll with $var=$v"; }
        [ "$(grep -c '^ok rank' "$work/out")" -eq 3 ] || { cat "$work/out"; fail "$var=$v: not all ok"; }
    done
    bads="$(awk -v h="$hi" 'BEGIN { printf "%.0f", h + 1 }') 12abc"
    [ "$lo" -gt 0 ] && bads="$bads $((lo - 1))"
    for v in $bads; do
        env "$var=$v" "$INFO" >/dev/null 2>"$work/err" && fail "tern_info accepted $var=$v"
        grep -q "$var.*allowed $lo \.\. $hi" "$work/err" ||
            { cat "$work/err"; fail "tern_info's message for $var=$v does not name it and its range"; }
        run 2 mpi_hello "$var=$v" && { cat "$work/out"; fail "MPI_Init accepted $var=$v"; }
        grep -q "MPI_Init: .*$var.*allowed $lo \.\. $hi" "$work/out" ||
            { cat "$work/out"; fail "MPI_Init's message for $var=$v does not name it and its range"; }
        echo "ok: $var=$v refused: $(grep -m1 "MPI_Init: " "$work/out")"
    done
    n=$((n + 1))
done
[ "$n" -eq 3 ] || fail "checked $n of 3 settings"
echo "ok mpi settings"
