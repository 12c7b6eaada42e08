#!/bin/sh
# The whole engine suite, 2 ranks pinned to cores, over $TERN_TEST_NETMOD (shm).
. "${srcdir:-.}/tests/engine/lib.sh"
shm_mark
run_engine 2 "--bind-to core" all || fail "engine suite on 2 pinned ranks"
[ "$(shm_leftovers)" -eq 0 ] || fail "a tern segment was left in /dev/shm"
