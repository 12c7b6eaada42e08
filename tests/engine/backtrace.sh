#!/bin/sh
# A rank that faults (engine_tests peer_crash): with TERN_BACKTRACE=1 (the
# default) tern writes the signal, the address and a backtrace on stderr,
# and the process still dies of SIGSEGV (ternrun says so); with
# TERN_BACKTRACE=0 nothing is written.  Skipped in ASan builds, whose own
# handler reports the fault.
. "${srcdir:-.}/tests/engine/lib.sh"
[ -z "${TERN_TEST_SANITIZED:-}" ] || { echo "SKIP: sanitizer build (its own report)"; exit 77; }
out=$(mktemp)
run_engine 1 "" peer_crash >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -ne 0 ] || fail "ternrun exited 0 although rank 0 faulted"
grep -q "rank 0 (pid [0-9]*) was killed by signal 11" "$out" || fail "rank 0 did not die of SIGSEGV"
grep -q "^tern\[[0-9]*\]: fatal signal 11 (SIGSEGV) at address 0x10 in thread [0-9]*; backtrace:" "$out" ||
    fail "no backtrace header"
grep -q "engine_tests" "$out" || fail "the backtrace names no frame of engine_tests"
(export TERN_BACKTRACE=0; run_engine 1 "" peer_crash) >"$out" 2>&1
cat "$out"
grep -q "rank 0 (pid [0-9]*) was killed by signal 11" "$out" || fail "TERN_BACKTRACE=0: rank 0 did not die of SIGSEGV"
! grep -q "fatal signal" "$out" || fail "TERN_BACKTRACE=0 still wrote a backtrace"
rm -f "$out"
