# Shared by the engine test scripts (sourced).  Tests run from the top build
# directory; every launcher call is bounded by `timeout` ($ENGINE_TIMEOUT s,
# 300 by default; it exits 124 when the bound is hit).
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
    # stdin from /dev/null: ternrun forwards its stdin to rank 0, and a
    # caller's stdin may be a loop's input (thresholds.sh's while read)
    timeout -k 5 "${ENGINE_TIMEOUT:-300}" "$TERNRUN" -n "$np" $opts "$ENGINE_TESTS" "$@" </dev/null
}
# Segments a job left in /dev/shm, by its namespace (other jobs may run at
# the same time), counting those ternrun had to remove after the job: the
# engine unlinks its segment once every rank is attached, ternrun's cleanup
# is only the safety net.  $1: the output of `ternrun -v`, which names the
# namespace and says "removed leftover PATH" for each segment it removed.
shm_leftovers() {
    ns=$(sed -n 's/.*namespace \([A-Za-z0-9._-]*\).*/\1/p' "$1" | head -1)
    [ -n "$ns" ] || { echo "no namespace in ternrun -v output" >&2; echo 1; return; }
    echo $(($(find /dev/shm -maxdepth 1 -name "tern-$ns-*" 2>/dev/null | wc -l) +
        $(grep -c "removed leftover /dev/shm/tern-$ns-" "$1")))
}

# verbs_only: every VC over the verbs netmod, with its test settings
# (netmods/verbs/test.env: tests/ibloop unless TERN_TEST_REAL_VERBS=1);
# SKIP (77) without a verbs netmod; sets ibloop=yes|no
verbs_only() {
    "${TERN_INFO:-./tern_info}" --netmods | grep -Eq '^netmods:.* verbs( |$)' ||
        { echo "SKIP: no verbs netmod in this build"; exit 77; }
    ibloop=yes
    [ -n "${TERN_TEST_REAL_VERBS:-}" ] && ibloop=no
    [ "$ibloop" = no ] || [ -e tests/ibloop/.libs/libibverbs.so.1 ] ||
        fail "tests/ibloop/.libs/libibverbs.so.1 not built"
    set -a
    . "${srcdir:-.}/netmods/verbs/test.env"
    set +a
    TERN_NETMODS=verbs
    TERN_TEST_NETMOD=verbs
    export TERN_NETMODS TERN_TEST_NETMOD
}

# test_netns PREFIX: a network namespace of this test ($ns, PREFIX-<pid>)
# with its loopback up, removed at exit (cleanup; a later EXIT trap of the
# caller calls cleanup itself); inns CMD... runs CMD in it
test_netns() {
    ns=$1-$$
    cleanup() { ip netns del "$ns" 2>/dev/null; }
    trap cleanup EXIT
    trap 'exit 1' INT TERM
    ip netns add "$ns" || fail "ip netns add $ns"
    inns ip link set lo up
}
inns() { ip netns exec "$ns" "$@"; }
