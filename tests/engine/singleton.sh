#!/bin/sh
# A tern program started without a launcher runs as a singleton: rank 0 of
# a job of one (the engine suite's one-rank cases pass, nothing touches
# PMIx), and says clearly what it cannot do (the name service: it has no
# server).  A program whose launcher's server cannot be reached still fails
# tern_init, naming the cause.
. "${srcdir:-.}/tests/engine/lib.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# no PMIX_* from the caller: this process was not started by a launcher
noenv() { env $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/-u \1/p') "$@"; }

TERN_TEST_NETMOD=none noenv timeout -k 5 60 "$ENGINE_TESTS" self invalid_args wakeup sizes \
    iov stress >"$out" 2>&1 || { cat "$out"; fail "singleton: the one-rank cases"; }
for c in self invalid_args wakeup sizes iov stress; do
    grep -q "^ok $c (rank 0)" "$out" || { cat "$out"; fail "singleton: case $c"; }
done

TERN_TEST_NETMOD=none noenv timeout -k 5 60 "$ENGINE_TESTS" pubsub >"$out" 2>&1
grep -q 'started without a launcher' "$out" || { cat "$out"; fail "singleton: pubsub refusal not named"; }

# started by a launcher whose server is gone: an error, not a singleton
TERN_TEST_NETMOD=none noenv env PMIX_NAMESPACE=tern-test-gone \
    timeout -k 5 60 "$ENGINE_TESTS" self >"$out" 2>&1 && { cat "$out"; fail "a lost server was ignored"; }
grep -q "the launcher's PMIx server cannot be reached" "$out" ||
    { cat "$out"; fail "a lost server is not named"; }
echo "singleton: ok"
