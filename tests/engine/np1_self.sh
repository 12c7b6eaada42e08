#!/bin/sh
# A single-rank job: only the self netmod; the suite's cases degrade to
# self traffic.
. "${srcdir:-.}/tests/engine/lib.sh"
TERN_TEST_NETMOD=none run_engine 1 "" self invalid_args wakeup pubsub sizes || fail "single rank"
