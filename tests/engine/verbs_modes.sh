#!/bin/sh
# The verbs netmod on the two behaviours tests/ibloop follows where
# providers differ (IBLOOP_MODE: mlx5, the default everywhere else, and
# rxe), and on a device with small limits:
#  - rxe: error numbers of its own (EINVAL where mlx5 says ENOMEM), inline
#    and SGEs granted otherwise, active MTU 1024, 32767 CQEs: the engine
#    cases at 3 ranks, one-sided puts / gets / device atomics counted one
#    post each, a put refused among others in flight, a peer killed;
#  - in both modes, ibv_post_send refusing a work request with room in the
#    queue (IBLOOP_FAULT_POST_REFUSE_AFTER): mlx5 answers ENOMEM, which is
#    not "full" there; the VC fails naming the refusal instead of retrying
#    forever;
#  - small limits (64 work requests per queue, 2 SGEs, 600 CQEs, no inline
#    data, MTU 256): what the netmod
#    assumes of the device is read back from it (send queue depth, shared
#    receives and CQ sizes cut to fit, with a warning each; inline data as
#    granted, path MTU 256), and the engine cases pass.
. "${srcdir:-.}/tests/engine/lib.sh"
verbs_only
[ "$ibloop" = yes ] || { echo "SKIP: the modes and limits are tests/ibloop's (TERN_TEST_REAL_VERBS)"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# ---- rxe -------------------------------------------------------------------------
export IBLOOP_MODE=rxe IBLOOP_FABRIC=$IBLOOP_FABRIC-rxe
run_engine 3 "--bind-to none" sizes large iov truncate >"$out" 2>&1 ||
    { cat "$out"; fail "engine cases over verbs following rxe, 3 ranks"; }
TERN_TEST_RMA_NATIVE=1 run_engine 2 "--bind-to none" rma_native >"$out" 2>&1 ||
    { cat "$out"; fail "rxe: puts and gets not one post each"; }
TERN_TEST_AMO_DEVICE=1 run_engine 2 "--bind-to none" rma_amo_device >"$out" 2>&1 ||
    { cat "$out"; fail "rxe: device atomics"; }
run_engine 2 "--bind-to none" rma_replay >"$out" 2>&1 ||
    { cat "$out"; fail "rxe: rma_replay"; }
grep -Eq '^rma_replay: rank [0-9]: [1-9][0-9]* operations replayed' "$out" ||
    { cat "$out"; fail "rxe: no operation came back from the failed RMA QP"; }
TERN_LMT_MODE=get run_engine 2 "-v --kill-grace 20" peer_killed >"$out" 2>&1 &&
    fail "rxe: ternrun exited 0 although rank 1 was killed"
grep -q "^ok peer_killed (rank 0)" "$out" || { cat "$out"; fail "rxe: rank 0 did not see its peer fail"; }
echo "ok rxe mode"

# ---- a post refused with room in the queue, in both modes --------------------------
for mode in mlx5 rxe; do
    IBLOOP_MODE=$mode timeout 120 "$TERNRUN" -n 2 --bind-to none sh -c \
        'if [ "$PMIX_RANK" = 0 ]; then IBLOOP_FAULT_POST_REFUSE_AFTER=100; export IBLOOP_FAULT_POST_REFUSE_AFTER; fi
         exec "$0" link_down' "$ENGINE_TESTS" </dev/null >"$out" 2>&1
    grep -q "^link_down: rank 0: peer process failed after [0-9]* rounds: .*rank 1.*ibv_post_send refused a work request" "$out" ||
        { cat "$out"; fail "$mode: a refused post did not fail the VC naming the refusal"; }
    grep -q "^ok link_down (rank 0)" "$out" || { cat "$out"; fail "$mode: link_down's checks failed"; }
done
# the loop's last run was rxe's
grep -q "Invalid argument" "$out" || fail "rxe's refusal is not EINVAL"
echo "ok refused posts (mlx5 ENOMEM, rxe EINVAL) fail the VC"

# ---- small limits (mlx5) -----------------------------------------------------------
# 64 work requests per queue (TERN_VERBS_TX_DEPTH=256 is cut to 64; the
# connection manager's UD QP takes 64), 2 SGEs,
# 600 CQEs (TERN_VERBS_SRQ_MAX=4096 is cut to fit one CQ with the UD
# receives), no inline data, MTU 256
export IBLOOP_MODE=mlx5 IBLOOP_FABRIC=$IBLOOP_FABRIC-small
IBLOOP_MAX_QP_WR=64 IBLOOP_MAX_SGE=2 IBLOOP_MAX_CQE=600 IBLOOP_MAX_INLINE=0 IBLOOP_MTU=256 \
    TERN_VERBS_TX_DEPTH=256 TERN_VERBS_SRQ_MAX=4096 \
    run_engine 2 "--bind-to none" sizes large iov truncate rma_native rma_amo_device \
    >"$out" 2>&1 || { tail -40 "$out"; fail "engine cases on a device with small limits"; }
grep -q "send queues of 64 work requests (TERN_VERBS_TX_DEPTH=256 is more than max_qp_wr 64)" "$out" ||
    { grep verbs "$out" | head; fail "small limits: the send queue was not cut to max_qp_wr"; }
grep -q "shared receives (TERN_VERBS_SRQ_MAX=4096 is more than" "$out" ||
    fail "small limits: the shared receive queue was not cut to fit"
echo "verbs_modes: all checks passed"
