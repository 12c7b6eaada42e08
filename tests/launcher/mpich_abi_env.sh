#!/bin/sh
# ternrun --mpich-abi (issue 24; docs/mpi.md, "Running MPICH-built
# programs"): the directory of tern's libmpich.so.12 comes first on the
# ranks' LD_LIBRARY_PATH, before an inherited or -x value and with no empty
# element; TERN_MPICH_ABI_DIR chooses it (made absolute); without it an
# uninstalled ternrun takes the build tree's mpich-abi/ beside itself, and a
# copy of ternrun elsewhere the installed directory.  A directory without
# the library stops ternrun, naming it, before any rank runs.  Needs no
# MPICH: tests/mpi/mpich_abi.sh runs MPICH-built programs this way.
. "$(dirname "$0")/lib.sh"

build=$(pwd -P)
abi=$build/mpich-abi
[ -e "$abi/libmpich.so.12" ] || { echo "FAIL: $abi/libmpich.so.12 not built"; exit 1; }
show='echo "path=${LD_LIBRARY_PATH-unset}"'

run -n 1 sh -c "$show"
expect_rc 0 "no --mpich-abi"
[ "$(cat "$OUT")" = "path=${LD_LIBRARY_PATH-unset}" ] || fail "no --mpich-abi: LD_LIBRARY_PATH changed"

(unset LD_LIBRARY_PATH
 run --mpich-abi -n 2 sh -c "$show"
 expect_rc 0 "--mpich-abi"
 [ "$(sort -u "$OUT")" = "path=$abi" ] || fail "--mpich-abi, nothing inherited: not exactly $abi"
 exit "$failures") || failures=$((failures + 1))

LD_LIBRARY_PATH=/inherited run --mpich-abi -n 1 sh -c "$show"
expect_rc 0 "--mpich-abi with an inherited LD_LIBRARY_PATH"
[ "$(cat "$OUT")" = "path=$abi:/inherited" ] || fail "--mpich-abi: not first before the inherited path"

LD_LIBRARY_PATH=/inherited run -x LD_LIBRARY_PATH=/exported --mpich-abi -n 1 sh -c "$show"
expect_rc 0 "--mpich-abi with -x LD_LIBRARY_PATH"
[ "$(cat "$OUT")" = "path=$abi:/exported" ] || fail "--mpich-abi: not first before -x's path"

# TERN_MPICH_ABI_DIR, relative: the ranks get it absolute
mkdir "$WORK/abi" && ln -s "$abi/libmpich.so.12" "$WORK/abi/libmpich.so.12" || exit 99
(cd "$WORK" && TERN_MPICH_ABI_DIR=abi timeout -k 5 "$T" "$build/ternrun" --mpich-abi -n 1 \
    sh -c "$show" >"$OUT" 2>"$ERR" </dev/null)
RC=$?
expect_rc 0 "TERN_MPICH_ABI_DIR=abi"
[ "$(cat "$OUT")" = "path=$(cd "$WORK/abi" && pwd -P)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ] ||
    fail "TERN_MPICH_ABI_DIR=abi (relative) is not the ranks' first directory, absolute"

# a directory without the library: exit 2 naming it, no rank started
mkdir "$WORK/empty" || exit 99
TERN_MPICH_ABI_DIR=$WORK/empty run --mpich-abi -n 1 sh -c 'echo ran'
expect_rc 2 "TERN_MPICH_ABI_DIR without libmpich.so.12"
expect_err "TERN_MPICH_ABI_DIR=$WORK/empty holds no readable libmpich.so.12" \
    "TERN_MPICH_ABI_DIR without libmpich.so.12"
! grep -q ran "$OUT" || fail "a rank ran although the ABI directory has no library"

# ternrun away from the build tree: the installed directory (there or not),
# never the build tree's
cp "$TERNRUN" "$WORK/ternrun" || exit 99
TERNRUN=$WORK/ternrun run --mpich-abi -n 1 sh -c "$show"
case $RC in
0) grep -q "^path=/.*/tern/mpich-abi" "$OUT" || fail "a copied ternrun: not the installed directory" ;;
2) expect_err "no readable libmpich.so.12 in /.*/tern/mpich-abi .*TERN_MPICH_ABI_DIR" \
       "a copied ternrun, nothing installed" ;;
*) fail "a copied ternrun --mpich-abi: exit $RC" ;;
esac
! grep -q "$build" "$OUT" || fail "a copied ternrun took the build tree's directory"

run --help
expect_out '--mpich-abi' "--help lists --mpich-abi"
finish
