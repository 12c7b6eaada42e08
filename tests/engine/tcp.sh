#!/bin/sh
# tcp beyond the engine matrix (tests/engine/matrix.sh runs the whole suite
# over tcp): TERN_NETMODS=tcp keeps shm out, so every VC to another rank is
# a TCP connection over this host's loopback: 3 ranks (simultaneous
# connects from every side), large messages through the stream (TERN_CMA=off:
# the engine's same-host copy, tested over tcp by cma.sh, would take them), a
# rank killed mid-job, and TERN_NETMODS naming a netmod this build lacks.
. "${srcdir:-.}/tests/engine/lib.sh"
TERN_NETMODS=tcp
TERN_TEST_NETMOD=tcp
TERN_TCP_ADDRS=127.0.0.1   # one host: stay on loopback
export TERN_NETMODS TERN_TEST_NETMOD TERN_TCP_ADDRS
run_engine 3 "--bind-to none" sizes_unexpected wildcard_order stress iov truncate \
    || fail "engine suite over tcp, 3 ranks"
out=$(mktemp)
TERN_CMA=off TERN_TEST_CMA=none run_engine 2 "--bind-to none" cma large sizes iov truncate \
    >"$out" 2>&1 || { cat "$out"; fail "large messages through the tcp stream"; }
run_engine 2 "--kill-grace 20" peer_killed >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -ne 0 ] || fail "ternrun exited 0 although rank 1 was killed"
grep -q "^ok peer_killed (rank 0)" "$out" || fail "rank 0 did not see the tcp peer fail"
rm -f "$out"
TERN_NETMODS=nosuch run_engine 2 "" self >"$out" 2>&1 && fail "TERN_NETMODS=nosuch accepted"
grep -q 'tern_init: .*TERN_NETMODS="nosuch": no netmod "nosuch" in this build' "$out" \
    || { cat "$out"; fail "unknown netmod not named"; }
rm -f "$out"
