# Shared by the engine test scripts (sourced).  Tests run from the top build
# directory; every launcher call is bounded by `timeout`.
set -u
TERNRUN=${TERNRUN:-./ternrun}
ENGINE_TESTS=${ENGINE_TESTS:-./tests/engine_tests}
NETMOD=${TERN_TEST_NETMOD:-shm}
export TERN_TEST_NETMOD=$NETMOD
fail() { echo "FAIL: $*" >&2; exit 1; }
# run_engine NP "ternrun options" CASES...
run_engine() {
    np=$1; opts=$2; shift 2
    echo "+ $TERNRUN -n $np $opts $ENGINE_TESTS $*"
    # shellcheck disable=SC2086
    timeout 300 "$TERNRUN" -n "$np" $opts "$ENGINE_TESTS" "$@"
}
# tern segments created since `shm_mark` (other jobs may run concurrently)
shm_mark() { SHM_MARK=$(mktemp); sleep 1; }
shm_leftovers() { find /dev/shm -maxdepth 1 -name 'tern-*' -newer "$SHM_MARK" 2>/dev/null | wc -l; }
