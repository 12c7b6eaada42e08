#!/bin/sh
# The suite's data cases under extreme thresholds: everything rendezvous
# (eager limit 0), the smallest fastbox / cells / copy chunks (every message
# cut into many units, the ring full all the time), and the blocking wait mode.
. "${srcdir:-.}/tests/engine/lib.sh"
TERN_EAGER_LIMIT=0 run_engine 2 "" sizes sizes_unexpected iov wildcard_order \
    || fail "eager limit 0"
TERN_SHM_FBOX_SIZE=128 TERN_SHM_NUM_FBOX=1 TERN_SHM_CELL_SIZE=256 TERN_SHM_NUM_CELLS=2 TERN_SHM_COPY_CHUNK=4096 \
TERN_SHM_COPY_CHUNKS=2 TERN_EAGER_LIMIT=65536 \
    run_engine 2 "" sizes sizes_unexpected iov truncate wildcard_order \
    || fail "minimum shm geometry"
TERN_WAIT_MODE=block TERN_SPIN_COUNT=1 run_engine 3 "--bind-to none" stress wildcard_order wakeup \
    || fail "block wait mode"
TERN_WAIT_MODE=spin run_engine 2 "" tag_select truncate || fail "spin wait mode"
