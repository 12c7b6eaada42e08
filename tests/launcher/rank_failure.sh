#!/bin/sh
# A rank killed by a signal (or failing, or exiting without finalizing) ends
# the job after the kill grace: exit 128+signal (or its status, or 1), a line
# naming the rank and the cause; the grace period comes from --kill-grace or
# TERN_KILL_GRACE.
. "$(dirname "$0")/lib.sh"

T=30 run -n 3 --kill-grace 1 "$PROBE" fail 1
expect_rc 137 "rank killed by SIGKILL"
expect_err '^ternrun: rank 1 .*signal 9' "signal line names the rank"

# plain programs too: the survivor would sleep 60 s
T=30 run -n 2 --kill-grace 1 sh -c 'if [ "$PMIX_RANK" = 1 ]; then kill -9 $$; fi; sleep 60'
expect_rc 137 "non-PMIx rank killed by SIGKILL"

TERN_KILL_GRACE=1 T=30 run -v -n 2 sh -c 'if [ "$PMIX_RANK" = 0 ]; then exit 3; fi; sleep 60'
expect_rc 3 "failing rank status"
expect_err 'giving the other 1 rank\(s\) 1\.000 s' "TERN_KILL_GRACE sets the grace"

TERN_KILL_GRACE=1 T=30 run -v --kill-grace 0.5 -n 2 sh -c 'if [ "$PMIX_RANK" = 0 ]; then exit 4; fi; sleep 60'
expect_rc 4 "failing rank status"
expect_err 'giving the other 1 rank\(s\) 0\.500 s' "--kill-grace overrides TERN_KILL_GRACE"

# survivors that finish by themselves within the grace are not killed
T=30 run -n 2 --kill-grace 20 sh -c 'if [ "$PMIX_RANK" = 0 ]; then exit 2; fi; exit 0'
expect_rc 2 "survivor exits by itself"

# a PMIx client that exits 0 without PMIx_Finalize while others still run
# fails the job, as under mpirun (they may be waiting for it); the others are
# told (tests/launcher/proc_events.sh) and end by themselves
T=30 run -n 3 --kill-grace 20 "$PROBE" death 1 nofinalize
expect_rc 1 "rank exiting 0 without finalizing"
expect_err '^ternrun: rank 1 exited without finalizing' "line names the rank that did not finalize"

# ranks that never call PMIx_Init (plain programs) may end with 0 at any time
T=30 run -n 2 sh -c 'if [ "$PMIX_RANK" = 1 ]; then sleep 1; fi; exit 0'
expect_rc 0 "plain ranks ending 0 one after the other"

finish
