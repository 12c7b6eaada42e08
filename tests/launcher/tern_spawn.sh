#!/bin/sh
# tern_spawn: a tern program starts another tern job (tests/launcher/tern_spawn.c);
# the children run their own wire-up and exchange messages among themselves,
# with the environment the parent gave them; a missing program is
# TERN_ERR_NOT_FOUND naming it, 0 ranks TERN_ERR_INVALID_PARAM.
# tern_spawn_apps: two programs as one job of 3 ranks, each with its argv,
# environment and working directory; a missing second one starts nothing.  A spawned
# job that fails at once leaves ternrun idle while the first job runs on:
# no escalation of a job with no rank left ("still running ... terminating
# them"), and no busy poll (ternrun's CPU time over the 4 s the ranks wait:
# a busy poll took 48 % of it on a loaded 2-core machine, the whole
# core on an idle one; idle, it takes a few ms).  And the other way round:
# a spawner that fails with its spawned job still running (/bin/sleep 600)
# gets the kill grace, then its spawned job is terminated: ternrun ends.
. "$(dirname "$0")/lib.sh"

PROG=./tests/launcher/tern_spawn

T=60 run -n 2 "$PROG" parent 3
expect_rc 0 "tern_spawn"
expect_out '^spawned ternrun-[0-9]+\.1$' "the new job's name"
for r in 0 1 2; do
    expect_out "^child $r of 3 got $(( (r + 2) % 3 )) var from-parent\$" "child $r's ring"
done
expect_out '^ok missing: tern_spawn of 1 x /nonexistent/tern-no-such-program: ' \
    "a missing program named"
expect_out '^ok zero$' "0 ranks refused"
expect_err "cannot run '/nonexistent/tern-no-such-program': command not found" \
    "ternrun names the missing program"
if grep -q FAIL "$OUT"; then fail "a check failed"; fi

# two programs as one job (tern_spawn_apps): one wire-up (a ring over the 3
# ranks), each program its argv, environment and working directory
T=60 run -n 2 "$PROG" apps
expect_rc 0 "tern_spawn_apps"
expect_out '^spawned ternrun-[0-9]+\.1$' "the new job's name"
expect_out '^child 0 of 3 got 2 var first app a cwd ' "the first program's rank"
expect_out '^child 1 of 3 got 0 var second app b cwd /$' "the second program's first rank"
expect_out '^child 2 of 3 got 1 var second app b cwd /$' "the second program's second rank"
expect_out '^ok apps none$' "no program refused"
expect_out '^ok apps missing: tern_spawn of 1 x .* and 1 more program' \
    "a missing second program: all or nothing"
if grep -q FAIL "$OUT"; then fail "apps: a check failed"; fi

T=60 run -n 2 --kill-grace 1 "$PROG" failed-child 4
expect_rc 1 "a spawned job of /bin/false: ternrun's status is its worst rank's"
expect_out '^launcher cpu [0-9]+ ms of [0-9]+ ms \(rank 0\)$' "ternrun's CPU time read"
if grep -q FAIL "$OUT"; then fail "failed-child: a check failed"; fi
if grep -q 'still running' "$ERR"; then
    fail "ternrun escalated against a job with no rank left"
fi
# a busy poll competes for a core whatever the load; an idle ternrun never
# comes near a quarter of the wait
awk '/^launcher cpu/ { if ($3 * 4 > $6) bad = 1 } END { exit bad }' "$OUT" ||
    fail "ternrun spun while a failed spawned job left nothing to wait for"

# the grace of a failed job covers the jobs it spawned, whose ranks alone
# still run: it must fire (the message) and end them (SIGTERM, which
# ternrun does not report: its own kill), else ternrun would wait for the
# 600 s sleep: run's timeout (60 s) says so
T=60 run -n 1 --kill-grace 1 "$PROG" failing-parent
expect_rc 1 "a failing spawner: ternrun's status is its rank's"
expect_out '^spawned ternrun-[0-9]+\.1$' "the sleeper's job spawned"
expect_err 'still running 1000 ms after the failure: terminating them' \
    "the grace covered the spawned job and ran out"

finish
