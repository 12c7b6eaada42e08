#!/bin/sh
# Every threshold: minimum, default, maximum work; out of range, not a power
# of two and garbage are rejected by tern_info and tern_init with a message
# naming the variable.
. "${srcdir:-.}/tests/engine/lib.sh"
INFO=${TERN_INFO:-./tern_info}
"$INFO" >/dev/null || fail "tern_info with defaults"
"$INFO" | grep -q "TERN_EAGER_LIMIT" || fail "tern_info does not list TERN_EAGER_LIMIT"
# every variable the code reads is listed (the engine's, each netmod's, and
# the other components' of the settings registry: iofwd's, the MPI layer's)
for var in TERN_EAGER_LIMIT TERN_WAIT_MODE TERN_SPIN_COUNT TERN_HEALTH_MS TERN_LOG \
           TERN_NETMODS TERN_CMA TERN_CMA_THRESHOLD TERN_RMA_CMA_THRESHOLD TERN_TCP_ADDRS TERN_PORT_RANGE TERN_RCACHE \
           TERN_IOFWD_LINGER_MS TERN_IOFWD_REPORT TERN_MPI_BCAST_LONG \
           TERN_MPI_BCAST_MIN_PROCS TERN_MPI_ALLREDUCE_LONG; do
    "$INFO" --params | grep -q "^$var " || fail "tern_info does not list $var"
done
# the copy chunk an unset TERN_SHM_COPY_CHUNK becomes here, and why (shm_chunk.c)
"$INFO" --params | grep -Eq '^# TERN_SHM_COPY_CHUNK=0 here: [0-9]+ bytes: .*(L2|64 KiB)' ||
    fail "tern_info does not say what TERN_SHM_COPY_CHUNK=0 is: $("$INFO" --params | grep COPY_CHUNK)"
TERN_SHM_COPY_CHUNK=65536 "$INFO" --params | grep -q "COPY_CHUNK=0 here" &&
    fail "tern_info explains the chunk default when TERN_SHM_COPY_CHUNK is set"
for bad in "TERN_EAGER_LIMIT=abc" "TERN_EAGER_LIMIT=-1" "TERN_EAGER_LIMIT=99999999" \
           "TERN_SHM_NUM_CELLS=3" "TERN_SHM_CELL_SIZE=64" "TERN_WAIT_MODE=sleepy" \
           "TERN_SHM_FBOX_SIZE=65536" "TERN_SHM_COPY_CHUNK=1024" "TERN_LOG=4" \
           "TERN_NETMODS=shm,nosuch" "TERN_TCP_ADDRS=127.0.0.1,notanaddress" \
           "TERN_PORT_RANGE=9000-8000" "TERN_PORT_RANGE=http" "TERN_IOFWD_REPORT=2" \
           "TERN_IOFWD_REPORT=yes" "TERN_CMA=sometimes" "TERN_CMA_THRESHOLD=big" \
           "TERN_FAULT_CMA_EPERM_AFTER=-1" "TERN_RMA_CMA_THRESHOLD=small"; do
    var=${bad%%=*}
    msg=$(env "$bad" "$INFO" 2>&1 >/dev/null) && fail "tern_info accepted $bad"
    echo "$msg" | grep -q "$var" || fail "message for $bad does not name $var: $msg"
    out=$(env "$bad" timeout 60 "$TERNRUN" -n 2 "$ENGINE_TESTS" self 2>&1) && fail "tern_init accepted $bad"
    echo "$out" | grep -q "$var" || fail "tern_init message for $bad does not name $var: $out"
done
for good in "TERN_EAGER_LIMIT=0" "TERN_EAGER_LIMIT=1M" "TERN_SHM_NUM_CELLS=4096" \
            "TERN_WAIT_MODE=BLOCK" "TERN_SHM_COPY_CHUNK=16M" "TERN_HEALTH_MS=1" \
            "TERN_CMA=outside" "TERN_CMA_THRESHOLD=64k" "TERN_CMA_THRESHOLD=auto" \
            "TERN_RMA_CMA_THRESHOLD=0" "TERN_RMA_CMA_THRESHOLD=4k"; do
    env "$good" "$INFO" >/dev/null || fail "tern_info rejected $good"
done
TERN_SHM_COPY_CHUNK=16M TERN_SHM_COPY_CHUNKS=2 TERN_SHM_NUM_CELLS=4096 \
    run_engine 2 "" sizes || fail "maximum geometry"
# a rank whose TERN_WAIT_MODE differs from its node's (the shm segment's)
# takes the node's mode, with a warning naming the variable: senders ring
# doorbells by the segment's mode, so a lone blocking rank would oversleep
out=$(timeout 60 "$TERNRUN" -n 2 sh -c \
    'if [ "$PMIX_RANK" = 1 ]; then TERN_WAIT_MODE=block; export TERN_WAIT_MODE; fi; exec "$0" sizes' \
    "$ENGINE_TESTS" 2>&1) || fail "mixed wait modes: $out"
echo "$out" | grep -q "TERN_WAIT_MODE differs" || fail "no warning for mixed wait modes: $out"
# one rank with a bad setting: every rank of the node fails tern_init naming
# the cause, and the engine itself removes the segment (ternrun's clean-up of
# leftovers counts as a leak here: under other launchers nobody does it)
out=$(mktemp)
timeout 60 "$TERNRUN" -v -n 2 sh -c \
    'if [ "$PMIX_RANK" = 1 ]; then TERN_WAIT_MODE=sleepy; export TERN_WAIT_MODE; fi; exec "$0" self' \
    "$ENGINE_TESTS" >"$out" 2>&1 && { cat "$out"; fail "a rank with TERN_WAIT_MODE=sleepy started"; }
grep -q 'rank 1 on this node failed tern_init: TERN_WAIT_MODE="sleepy"' "$out" ||
    { cat "$out"; fail "rank 0 does not name rank 1's bad setting"; }
[ "$(shm_leftovers "$out")" -eq 0 ] || { cat "$out"; fail "the segment was left behind"; }
rm -f "$out"
