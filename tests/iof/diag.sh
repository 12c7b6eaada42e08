#!/bin/sh
# The INTERNAL stream: tern's own diagnostics (tern_warn) reach ternrun
# through the pipe named in TERN_IOF_INTERNAL_FD and are shown apart from
# the job's output: "[rank,diag]" lines on ternrun's stderr, DIR/<rank>/diag
# with --output-filename, never in the rank's stdout or stderr stream.
. "$(dirname "$0")/lib.sh"

ENGINE=./tests/engine_tests
[ -x "$ENGINE" ] || { echo "SKIP: $ENGINE not built"; exit 77; }
WARN='connection to rank 1 failed'

# rank 1 is SIGKILLed while rank 0 waits on it
TERN_TEST_NETMOD=shm run -n 2 --kill-grace 20 "$ENGINE" peer_killed
grep -q "^\[0,diag\] tern\[[0-9]*\]: warning: $WARN" "$ERR" ||
    fail "rank 0's warning is not a [0,diag] line on stderr"
grep -v '^\[0,diag\]' "$ERR" | grep -q "$WARN" && fail "the warning is also outside [0,diag]"
grep -q "$WARN" "$OUT" && fail "the warning is in stdout"

TERN_TEST_NETMOD=shm run -n 2 --kill-grace 20 --output-filename "$WORK/dir" "$ENGINE" peer_killed
grep -q "^tern\[[0-9]*\]: warning: $WARN" "$WORK/dir/0/diag" || fail "DIR/0/diag lacks the warning"
grep -q "$WARN" "$WORK/dir/0/stderr" && fail "DIR/0/stderr has the warning"
grep -q "$WARN" "$WORK/dir/0/stdout" && fail "DIR/0/stdout has the warning"
grep -q "$WARN" "$ERR" && fail "the warning is on ternrun's stderr with --output-filename"

# the variable names an open, non-blocking write end that survives exec
run -n 1 sh -c 'fd=$TERN_IOF_INTERNAL_FD; [ -n "$fd" ] && echo "note from the rank" >"/proc/self/fd/$fd"'
expect_rc 0 "a rank writing to TERN_IOF_INTERNAL_FD"
grep -qx '\[0,diag\] note from the rank' "$ERR" || fail "a line written to the INTERNAL fd"

finish
