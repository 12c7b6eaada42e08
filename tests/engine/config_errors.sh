#!/bin/sh
# Every threshold: minimum, default, maximum work; out of range, not a power
# of two and garbage are rejected by tern_info and tern_init with a message
# naming the variable.
. "${srcdir:-.}/tests/engine/lib.sh"
INFO=${TERN_INFO:-./tern_info}
"$INFO" >/dev/null || fail "tern_info with defaults"
"$INFO" | grep -q "TERN_EAGER_LIMIT" || fail "tern_info does not list TERN_EAGER_LIMIT"
for bad in "TERN_EAGER_LIMIT=abc" "TERN_EAGER_LIMIT=-1" "TERN_EAGER_LIMIT=99999999" \
           "TERN_SHM_NUM_CELLS=3" "TERN_SHM_CELL_SIZE=64" "TERN_WAIT_MODE=sleepy" \
           "TERN_SHM_FBOX_SIZE=65536"; do
    var=${bad%%=*}
    msg=$(env "$bad" "$INFO" 2>&1 >/dev/null) && fail "tern_info accepted $bad"
    echo "$msg" | grep -q "$var" || fail "message for $bad does not name $var: $msg"
    out=$(env "$bad" timeout 60 "$TERNRUN" -n 2 "$ENGINE_TESTS" self 2>&1) && fail "tern_init accepted $bad"
    echo "$out" | grep -q "$var" || fail "tern_init message for $bad does not name $var: $out"
done
for good in "TERN_EAGER_LIMIT=0" "TERN_EAGER_LIMIT=1M" "TERN_SHM_NUM_CELLS=4096" \
            "TERN_WAIT_MODE=BLOCK" "TERN_SHM_COPY_CHUNK=16M" "TERN_HEALTH_MS=1"; do
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
