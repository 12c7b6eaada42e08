#!/bin/sh
# The one-sided soak: 10^6 random puts, gets and fetching atomics per run
# (4 ranks x RMA_SOAK_OPS, 250000 by default), every one checked against a
# shadow copy of the origin's lanes (tests/engine/cases_rma.c, rma_soak),
# over every built netmod: shm (puts and gets by the same-host copy, at
# every size: TERN_RMA_CMA_THRESHOLD=0; then with TERN_CMA=off through the
# target), tcp on loopback, verbs on tests/ibloop (its RDMA writes and
# reads, then with TERN_VERBS_RMA=0 packets only, then on regions whose
# atomics go through the device: TERN_REGION_ATOMIC_DEVICE), dpdk on memif,
# and dpdk with its fault shim dropping, holding back, duplicating and
# corrupting 1 % of the frames (which must show it acted); then on
# allocated regions (rma_soak_alloc), which the peers on this host map
# (direct) and, with TERN_RMA_MAP=0, reach by the same-host copy (the
# target's progress serves both kinds alike: the TERN_CMA=off run above).
# Every rank must report 0 lost, 0 corrupt.  The seed is random
# unless RMA_SOAK_SEED is set; every run prints it.
. "${srcdir:-.}/tests/engine/lib.sh"
INFO=${TERN_INFO:-./tern_info}
OPS=${RMA_SOAK_OPS:-250000}
SEED=${RMA_SOAK_SEED:-$(($(date +%s) % 1000000))}
TERN_TEST_RMA_OPS=$OPS TERN_TEST_RMA_SEED=$SEED
export TERN_TEST_RMA_OPS TERN_TEST_RMA_SEED
echo "# rma soak seed $SEED (re-run: RMA_SOAK_SEED=$SEED), $OPS operations per rank"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# soak LABEL CASE: 4 ranks in the caller's environment; every rank clean
soak() {
    ENGINE_TIMEOUT=600 run_engine 4 "--bind-to none" "$2" >"$out" 2>&1
    rc=$?
    cat "$out"
    [ "$rc" -eq 0 ] || fail "$1: exit status $rc"
    n=$(grep -c "^rma_soak: rank [0-9]: $OPS operations .*: 0 lost, 0 corrupt$" "$out")
    [ "$n" -eq 4 ] || fail "$1: $n of 4 ranks reported a clean soak"
    echo "ok: $1"
}
has() { "$INFO" --netmods | grep -Eq "^netmods: (.* )?$1( |$)"; }

TERN_RMA_CMA_THRESHOLD=0 TERN_NETMODS=shm TERN_TEST_NETMOD=shm soak "shm" rma_soak
# puts and gets by the same-host copy (rma.cma), atomics through the target
[ "$(grep -Ec '^rma_soak: rank [0-9]: rma\.cma=[1-9]' "$out")" -eq 4 ] ||
    fail "shm: not every rank copied its puts and gets (rma.cma)"
TERN_CMA=off TERN_NETMODS=shm TERN_TEST_NETMOD=shm soak "shm, through the target (TERN_CMA=off)" rma_soak
[ "$(grep -Ec '^rma_soak: rank [0-9]: rma\.cma=0$' "$out")" -eq 4 ] ||
    fail "shm with TERN_CMA=off: puts or gets were copied"
TERN_NETMODS=shm TERN_TEST_NETMOD=shm soak "shm, allocated regions (direct)" rma_soak_alloc
TERN_RMA_MAP=0 TERN_RMA_CMA_THRESHOLD=0 TERN_NETMODS=shm TERN_TEST_NETMOD=shm \
    soak "shm, allocated regions not mapped: by the copy (TERN_RMA_MAP=0)" rma_soak_alloc
[ "$(grep -Ec '^rma_soak: rank [0-9]: rma\.cma=[1-9]' "$out")" -eq 4 ] ||
    fail "shm, allocated regions not mapped: not every rank copied (rma.cma)"
for nm in tcp verbs dpdk; do
    has $nm || { echo "skip: $nm (not built)"; continue; }
    (set -a && . "${srcdir:-.}/netmods/$nm/test.env" && set +a &&
        export TERN_NETMODS=$nm TERN_TEST_NETMOD=$nm && soak "$nm" rma_soak) || exit 1
    # verbs: puts and gets were RDMA writes and reads of its own (the
    # netmod's rma table), atomics packets; then all of it as packets
    if [ "$nm" = verbs ]; then
        [ "$(grep -Ec '^rma_soak: rank [0-9]: rma\.native=[1-9]' "$out")" -eq 4 ] ||
            fail "verbs: not every rank posted puts and gets by RDMA (rma.native)"
        (set -a && . "${srcdir:-.}/netmods/verbs/test.env" && set +a &&
            export TERN_NETMODS=verbs TERN_TEST_NETMOD=verbs TERN_VERBS_RMA=0 &&
            soak "verbs, one-sided as packets (TERN_VERBS_RMA=0)" rma_soak &&
            [ "$(grep -Ec '^rma_soak: rank [0-9]: rma\.native=0$' "$out")" -eq 4 ]) ||
            fail "verbs with TERN_VERBS_RMA=0"
        # regions whose atomics go through the device: every fetch-add one
        # RDMA atomic (or one loopback atomic on the rank's own region)
        (set -a && . "${srcdir:-.}/netmods/verbs/test.env" && set +a &&
            export TERN_NETMODS=verbs TERN_TEST_NETMOD=verbs &&
            soak "verbs, device atomics (TERN_REGION_ATOMIC_DEVICE)" rma_soak_device &&
            [ "$(grep -Ec '^rma_soak: rank [0-9]: verbs\.amo_posts=[1-9]' "$out")" -eq 4 ]) ||
            fail "verbs, device atomics: not every rank posted RDMA atomics"
    fi
done
if has dpdk; then
    (set -a && . "${srcdir:-.}/netmods/dpdk/test.env" && set +a &&
        export TERN_NETMODS=dpdk TERN_TEST_NETMOD=dpdk TERN_DPDK_CSUM=1 \
            TERN_DPDK_FAULTS="drop=0.01,hold=0.01,dup=0.01,corrupt=0.01,seed=$SEED" &&
        soak "dpdk, 1 % of frames dropped, held, duplicated, corrupted" rma_soak &&
        for f in dropped held duplicated corrupted; do
            grep -Eq "^rma_soak: rank [0-9]: dpdk\.fault_$f=[1-9]" "$out" ||
                fail "dpdk: the fault shim $f no frame"
        done) || exit 1
fi
