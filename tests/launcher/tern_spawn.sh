#!/bin/sh
# tern_spawn: a tern program starts another tern job (tests/launcher/tern_spawn.c);
# the children run their own wire-up and exchange messages among themselves,
# with the environment the parent gave them; a missing program is
# TERN_ERR_NOT_FOUND naming it, 0 ranks TERN_ERR_INVALID_PARAM.
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

finish
