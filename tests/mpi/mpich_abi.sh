#!/bin/sh
# MPICH's ABI (issue 24): programs built by MPICH's own mpicc.mpich, never
# rebuilt, run on tern's MPI layer through tern's libmpich.so.12 with
# `ternrun --mpich-abi`.  Skipped (77) where mpicc.mpich is not installed
# (Debian: libmpich-dev).  In order:
#  1. the libraries: mpich-abi/libmpich.so.12 and libmpi.so.12 carry exactly
#     those sonames and need libtern-mpi.so.0 alone; libtern-mpi exports
#     MPICH's data objects with the sizes of MPICH's own library (a program
#     holds copy relocations of them);
#  2. tests/mpi/mpich_abi_probe.c (MPI_Init, MPI_Get_library_version,
#     MPI_Finalize: no handle), at 1, 2 and 4 ranks: the version names tern,
#     /proc/self/maps shows libtern-mpi and the build tree's libmpich, the
#     dynamic linker says nothing; TERN_MPICH_ABI_DIR chooses the directory,
#     and one without the library stops ternrun before any rank runs;
#  3. bench/osu's programs built with ternmpicc run natively once;
#  4. the tests/mpi programs (those tests/mpi/mpi.sh builds with ternmpicc,
#     and mpi_hello) built with mpicc.mpich, at 1, 2 and 4 ranks over shm,
#     mpi_p2p and mpi_coll also at 2 over tcp;
#  5. bench/osu's programs built with mpicc.mpich, once each at small sizes:
#     they finish and print a row for every size.
# No timing is asserted anywhere (the benchmarks' figures are not read).
set -u
fail() { echo "FAIL: $*"; exit 1; }
srcdir=${srcdir:-.}
MPICC_MPICH=${MPICC_MPICH:-mpicc.mpich}
if ! command -v "$MPICC_MPICH" >/dev/null 2>&1; then
    echo "SKIP: $MPICC_MPICH not installed (Debian: libmpich-dev)"
    exit 77
fi
for t in readelf nm ldd; do
    command -v $t >/dev/null 2>&1 || fail "$t not found (binutils, libc-bin)"
done
[ -x ./ternrun ] || fail "./ternrun not built"
[ -x ./ternmpicc ] || fail "./ternmpicc not built"
work=$(mktemp -d "${TMPDIR:-/tmp}/tern-mpich-abi-test.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT
build=$(pwd -P)

# Under ASan + UBSan the libraries are instrumented: the program must load
# the sanitizers' runtime first, so it takes the sanitizer flags (not the
# project's warnings: MPICH's header does not pass them).
san=""
for f in ${TERN_TEST_CFLAGS:-}; do
    case $f in -fsanitize*|-fno-sanitize*|-fno-omit-frame-pointer) san="$san $f" ;; esac
done
# mpicc_mpich SRC... -o OUT: build with MPICH's wrapper, check that the
# program needs MPICH's soname and nothing of tern
mpicc_mpich() {
    out=$1
    shift
    # shellcheck disable=SC2086
    "$MPICC_MPICH" -O2 $san "$@" -o "$out" >"$work/cc.log" 2>&1 ||
        { cat "$work/cc.log"; fail "$MPICC_MPICH $*"; }
    readelf -d "$out" >"$work/dyn" || fail "readelf -d $out"
    grep -q 'NEEDED.*\[libmpich\.so\.12\]' "$work/dyn" ||
        { cat "$work/dyn"; fail "$out does not need libmpich.so.12"; }
    ! grep -q 'NEEDED.*libtern' "$work/dyn" || { cat "$work/dyn"; fail "$out needs a tern library"; }
}

# ---- 1. the libraries ------------------------------------------------------
for lib in libmpich.so.12 libmpi.so.12; do
    [ -e "mpich-abi/$lib" ] || fail "mpich-abi/$lib not built"
    readelf -d "mpich-abi/$lib" >"$work/dyn" || fail "readelf -d mpich-abi/$lib"
    grep -q "SONAME.*\[$lib\]" "$work/dyn" || { cat "$work/dyn"; fail "$lib: soname is not $lib"; }
    # libtern-mpi.so.0, and nothing but the C library and the sanitizers'
    # runtimes of a --enable-sanitizers / --enable-tsan build besides
    needed=$(sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' "$work/dyn" |
        grep -Ev '^(libc\.so\.6|lib[atu]san\.so\.[0-9]+|libubsan\.so\.[0-9]+)$' | tr '\n' ' ')
    [ "$needed" = "libtern-mpi.so.0 " ] ||
        fail "$lib needs '$needed', expected libtern-mpi.so.0 alone (besides libc, sanitizers)"
done
echo "ok: mpich-abi/libmpich.so.12 and libmpi.so.12: sonames, libtern-mpi.so.0 their one dependency"

mpicc_mpich "$work/probe" "$srcdir/tests/mpi/mpich_abi_probe.c"
# MPICH's library, as the probe finds it without tern: the reference sizes
mpich_lib=$(ldd "$work/probe" | awk '$1 == "libmpich.so.12" { print $3 }')
[ -f "$mpich_lib" ] || fail "MPICH's libmpich.so.12 not found by ldd $work/probe"
nm -DS --defined-only "$mpich_lib" >"$work/nm.mpich" || fail "nm -DS $mpich_lib"
nm -DS --defined-only .libs/libtern-mpi.so.0 >"$work/nm.tern" || fail "nm -DS libtern-mpi.so.0"
for sym in MPI_UNWEIGHTED MPI_WEIGHTS_EMPTY MPI_F_STATUS_IGNORE MPI_F_STATUSES_IGNORE \
           MPI_F08_STATUS_IGNORE MPI_F08_STATUSES_IGNORE MPIR_F08_MPI_STATUS_IGNORE_OBJ \
           MPIR_F08_MPI_STATUSES_IGNORE_OBJ MPIR_F08_MPI_IN_PLACE MPIR_F08_MPI_BOTTOM \
           MPI_T_PVAR_ALL_HANDLES; do
    want=$(awk -v s="$sym" 'NF == 4 && $4 == s { print $2 }' "$work/nm.mpich")
    have=$(awk -v s="$sym" 'NF == 4 && $4 == s { print $2 }' "$work/nm.tern")
    [ -n "$want" ] || fail "$sym: not in MPICH's $mpich_lib (is it MPICH 4.0?)"
    [ -n "$have" ] ||
        fail "$sym: libtern-mpi.so.0 does not define it (MPICH's library has it, $((0x$want)) bytes)"
    [ "$((0x$have))" -eq "$((0x$want))" ] ||
        fail "$sym: $((0x$have)) bytes in libtern-mpi.so.0, $((0x$want)) in MPICH's library"
done
echo "ok: libtern-mpi.so.0 defines MPICH's data objects with MPICH's sizes"

# ---- 2. the probe ------------------------------------------------------------
for np in 1 2 4; do
    echo "+ ternrun --mpich-abi -n $np --bind-to none mpich_abi_probe"
    TERN_NETMODS=shm timeout -k 5 120 ./ternrun --mpich-abi -n "$np" --bind-to none \
        "$work/probe" </dev/null >"$work/out" 2>&1
    rc=$?
    cat "$work/out"
    [ "$rc" -eq 0 ] || fail "mpich_abi_probe at $np ranks exited $rc"
    [ "$(grep -c '^abi-probe ok$' "$work/out")" -eq "$np" ] || fail "mpich_abi_probe at $np ranks"
    [ "$(grep -c '^abi-probe version: tern MPI' "$work/out")" -eq "$np" ] ||
        fail "MPI_Get_library_version does not name tern: MPICH's library ran"
    [ "$(grep -c "^abi-probe maps: $build/.libs/libtern-mpi\.so" "$work/out")" -eq "$np" ] ||
        fail "the probe did not map the build tree's libtern-mpi"
    [ "$(grep -c "^abi-probe maps: $build/.libs/libmpich\.so\.12" "$work/out")" -eq "$np" ] ||
        fail "the probe did not map the build tree's libmpich.so.12"
    [ "$(grep -c '^abi-probe maps: .*libmpich' "$work/out")" -eq "$np" ] ||
        fail "another libmpich was mapped too"
    # a size mismatch of a copied object, a missing version ...
    ! grep -qi 'different size\|version information\|symbol lookup error' "$work/out" ||
        fail "the dynamic linker complained"
done
echo "+ TERN_MPICH_ABI_DIR=$build/mpich-abi ternrun --mpich-abi -n 1 mpich_abi_probe"
TERN_MPICH_ABI_DIR=$build/mpich-abi timeout -k 5 60 ./ternrun --mpich-abi -n 1 "$work/probe" \
    </dev/null >"$work/out" 2>&1 || { cat "$work/out"; fail "with TERN_MPICH_ABI_DIR"; }
grep -q '^abi-probe ok$' "$work/out" || { cat "$work/out"; fail "with TERN_MPICH_ABI_DIR"; }
mkdir "$work/empty"
echo "+ TERN_MPICH_ABI_DIR=<empty directory> ternrun --mpich-abi -n 1 mpich_abi_probe"
TERN_MPICH_ABI_DIR=$work/empty timeout -k 5 60 ./ternrun --mpich-abi -n 1 "$work/probe" \
    </dev/null >"$work/out" 2>&1
rc=$?
cat "$work/out"
[ "$rc" -eq 2 ] || fail "TERN_MPICH_ABI_DIR without the library: exit $rc, expected 2"
grep -q "TERN_MPICH_ABI_DIR=$work/empty holds no readable libmpich.so.12" "$work/out" ||
    fail "TERN_MPICH_ABI_DIR without the library: no message naming it"
! grep -q '^abi-probe' "$work/out" || fail "a rank ran with no ABI library"
./ternrun --help | grep -q -- '--mpich-abi' || fail "ternrun --help does not list --mpich-abi"
echo "ok: mpich_abi_probe (built by $MPICC_MPICH) ran on tern"

# ---- 3. and 5.: the OSU-style benchmarks ----------------------------------------
osu_progs="latency bw bibw mbw_mr allreduce ialltoall iallreduce put_latency get_latency
acc_latency get_acc_latency fop_latency cas_latency put_bw get_bw put_bibw"
osu_src() { echo "$srcdir/bench/osu/osu_$1.c $srcdir/bench/osu/osu_common.c $srcdir/bench/osu/osu_nbc.c"; }
# osu_run LABEL PROG BINARY TERNRUN-OPTION...: once at sizes up to 4 KiB;
# every size row, in order, and the library line naming tern
osu_run() {
    label=$1 prog=$2 bin=$3
    shift 3
    # OSU_ARGS: the one-sided programs' -w / -s (one word each)
    case $prog in
    allreduce|iallreduce) want="4 8 16 32 64 128 256 512 1024 2048 4096" ;; # one float and up
    fop_latency|cas_latency) want="8" ;; # one 8-byte element
    ialltoall) want="1 2 4 8 16 32 64 128 256 512 1024 2048 4096" ;;
    *) want="0 1 2 4 8 16 32 64 128 256 512 1024 2048 4096" ;;
    esac
    echo "+ TERN_NETMODS=shm ternrun $* -n 2 --bind-to none osu_$prog -m 0:4096 -i 3 -x 1 ${OSU_ARGS:-}"
    # shellcheck disable=SC2086
    TERN_NETMODS=shm timeout -k 5 120 ./ternrun "$@" -n 2 --bind-to none "$bin" -m 0:4096 -i 3 -x 1 \
        ${OSU_ARGS:-} </dev/null >"$work/out" 2>&1
    rc=$?
    cat "$work/out"
    [ "$rc" -eq 0 ] || fail "osu_$prog ($label) exited $rc"
    grep -q '^# Library: tern MPI' "$work/out" || fail "osu_$prog ($label) did not run tern"
    got=$(awk '/^[0-9]/ { printf "%s%s", sep, $1; sep = " " }' "$work/out")
    [ "$got" = "$want" ] || fail "osu_$prog ($label): sizes '$got', expected '$want'"
}
for p in $osu_progs; do
    # shellcheck disable=SC2046,SC2086
    ./ternmpicc ${TERN_TEST_CFLAGS:--Wall -Werror} -O2 $(osu_src "$p") -o "$work/tern_osu_$p" ||
        fail "ternmpicc osu_$p.c"
    osu_run ternmpicc "$p" "$work/tern_osu_$p"
done
# the one-sided ones with every window flavor and synchronisation
for args in "-w create -s lock" "-w dynamic -s flush_local" "-w create -s lock_all" \
            "-w allocate -s fence" "-w dynamic -s pscw"; do
    OSU_ARGS=$args osu_run ternmpicc put_latency "$work/tern_osu_put_latency"
    OSU_ARGS=$args osu_run ternmpicc get_bw "$work/tern_osu_get_bw"
done
OSU_ARGS="-s pscw" osu_run ternmpicc put_bibw "$work/tern_osu_put_bibw"
echo "ok: bench/osu built with ternmpicc"

# ---- 4. the MPI test programs, built by MPICH's wrapper -------------------------
progs="mpi_hello mpi_p2p mpi_p2p2 mpi_coll mpi_comm mpi_group mpi_dtype mpi_nbc mpi_nbc2 \
mpi_thread mpi_errh mpi_attr mpi_greq mpi_dtype2 mpi_topo mpi_misc mpi_win"
for prog in $progs; do
    mpicc_mpich "$work/$prog" -I"$srcdir" "$srcdir/tests/mpi/$prog.c"
done
for run in $(for np in 1 2 4; do for p in $progs; do echo "shm:$np:$p"; done; done) \
           tcp:2:mpi_p2p tcp:2:mpi_coll; do
    nm=${run%%:*} rest=${run#*:}
    np=${rest%%:*} prog=${rest#*:}
    (if [ -f "$srcdir/netmods/$nm/test.env" ]; then
         set -a; . "$srcdir/netmods/$nm/test.env"; set +a
     fi
     TERN_NETMODS=$nm; export TERN_NETMODS
     echo "+ TERN_NETMODS=$nm ternrun --mpich-abi -n $np --bind-to none $prog"
     # 120 s only catches a hang (tests/mpi/mpi.sh says why it is enough)
     timeout -k 5 120 ./ternrun --mpich-abi -n "$np" --bind-to none "$work/$prog" </dev/null \
         >"$work/out" 2>&1
     rc=$?
     cat "$work/out"
     [ "$rc" -eq 0 ] || exit 1
     [ "$(grep -c '^ok rank' "$work/out")" -eq "$np" ] || exit 1
    ) || fail "$prog (built by $MPICC_MPICH), $np ranks over $nm"
done
echo "ok: the tests/mpi programs built by $MPICC_MPICH"

for p in $osu_progs; do
    # shellcheck disable=SC2046
    mpicc_mpich "$work/osu_$p" $(osu_src "$p")
    osu_run "$MPICC_MPICH" "$p" "$work/osu_$p" --mpich-abi
done
echo "ok: bench/osu built with $MPICC_MPICH, on tern"
echo "ok mpich_abi"
