#!/bin/sh
# 4 ranks on 2 cores, unpinned: the engine must not livelock when ranks
# share cores (the idle path yields).
. "${srcdir:-.}/tests/engine/lib.sh"
run_engine 4 "--bind-to none" all || fail "engine suite on 4 oversubscribed ranks"
