#!/bin/bash
# Open MPI's one-sided over tern's libfabric provider (issue 25): osc rdma
# on btl ofi, whose puts, gets and atomics are the provider's FI_RMA and
# FI_ATOMIC (osc sm takes the shared windows), p2p through mtl ofi as in
# ompi_local.sh:
#
#   mpirun.openmpi ... --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tern \
#       --mca btl self,ofi --mca btl_ofi_provider_include tern --mca osc rdma,sm PROG
#
# tests/mpi/mpi_win.c built with mpicc.openmpi (every window flavor and
# synchronisation, derived types, passive-target totals; its
# MPI_Compare_and_swap is left out under Open MPI: 4.1.4's btl ofi
# dereferences a NULL local handle in mca_btl_ofi_acswap before it reaches
# the provider) at 2 and 4 ranks over shm and tcp, and the OSU-style
# one-sided benchmarks (bench/osu/osu_rma.c) once each over tcp with a
# created or dynamic window, so that every operation goes through the
# provider.  Four tern workers a rank: btl ofi's endpoint and mtl ofi's.
# Skips (77) without Open MPI or the provider.
. "${srcdir:-.}/tests/ompi/lib.sh"
ompi_skip_unless_possible
ompi_setup
OMPI_TERN=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "$OMPI_PROV"
    --mca mtl_ofi_verbose 1 --mca btl self,ofi --mca btl_ofi_provider_include "$OMPI_PROV"
    --mca osc rdma,sm)
[ -z "$OMPI_FI_DIR" ] || OMPI_TERN+=(-x "FI_PROVIDER_PATH=$OMPI_FI_DIR")
TERN_NUM_WORKERS=4
export TERN_NUM_WORKERS
ompi_build "$OMPI_WORK" mpi_win
out=$OMPI_WORK/out
failures=0
runs=0
for nm in ${OMPI_NETMODS:-shm tcp}; do
    for np in ${OMPI_NPS:-2 4}; do
        ompi_netmod_env "$nm"
        ompi_mpirun "$np" "${OMPI_ENV[@]}" -- "$OMPI_WORK/mpi_win" >"$out" 2>&1
        rc=$?
        cat "$out"
        ompi_check "$out" "$np" "mpi_win, $np ranks over $nm" mpi_win "$rc" ||
            failures=$((failures + 1))
        runs=$((runs + 1))
    done
done
# the benchmarks: exit 0 and a row for every size
for spec in "put_latency -w create -s flush" "get_latency -w create -s lock" \
            "acc_latency -w dynamic -s fence" "fop_latency -w create -s flush" \
            "get_bw -w create -s lock_all" "put_bibw -w create -s pscw"; do
    prog=${spec%% *}
    args=${spec#* }
    # (the build's sanitizer flags too: the provider loaded into it is built so)
    # shellcheck disable=SC2086
    "$OMPI_MPICC" ${TERN_TEST_CFLAGS:--Wall -Werror} -O2 -o "$OMPI_WORK/osu_$prog" \
        "$OMPI_SRCDIR/bench/osu/osu_$prog.c" "$OMPI_SRCDIR/bench/osu/osu_common.c" ||
        ompi_fail "$OMPI_MPICC osu_$prog.c"
    ompi_netmod_env tcp
    # shellcheck disable=SC2086
    ompi_mpirun 2 "${OMPI_ENV[@]}" -- "$OMPI_WORK/osu_$prog" $args -m 0:4096 -i 10 -x 2 \
        >"$out" 2>&1
    rc=$?
    cat "$out"
    want=14
    [ "$prog" = fop_latency ] && want=1
    rows=$(grep -c '^[0-9]' "$out")
    if [ "$rc" -ne 0 ] || [ "$rows" -ne "$want" ] || [ "$(ompi_provider_lines "$out")" -ne 2 ]; then
        echo "FAIL: osu_$prog $args over tcp: exit $rc, $rows of $want rows"
        failures=$((failures + 1))
    fi
    runs=$((runs + 1))
done
[ "$failures" -eq 0 ] || ompi_fail "$failures of $runs runs failed"
echo "ok: $runs runs of Open MPI's one-sided over tern's provider passed"
