#!/bin/sh
# ternrun launches any program like mpirun on one node, propagates exit
# statuses, and rejects bad command lines with clear messages.
. "$(dirname "$0")/lib.sh"

run -n 2 hostname
expect_rc 0 "-n 2 hostname"
[ "$(wc -l <"$OUT")" -eq 2 ] || fail "-n 2 hostname: expected 2 lines"
[ "$(sort -u "$OUT" | wc -l)" -eq 1 ] && [ "$(head -n 1 "$OUT")" = "$(hostname)" ] ||
    fail "-n 2 hostname: lines are not this host's name"

run -np 3 sh -c 'echo "rank $PMIX_RANK of $PMIX_NAMESPACE"'
expect_rc 0 "-np 3"
[ "$(sort -u "$OUT" | wc -l)" -eq 3 ] || fail "-np 3: expected 3 distinct ranks"
expect_out '^rank 2 of ternrun-[0-9]+$' "-np 3 namespace/rank in the environment"

run -n 3 sh -c 'exit 7'
expect_rc 7 "all ranks exit 7"

run -n 3 sh -c 'if [ "$PMIX_RANK" = 1 ]; then exit 9; fi; exit 0'
expect_rc 9 "one rank exits 9"
expect_err 'rank 1 .*exited with status 9' "failure line names the rank and status"

run -n 2 ternrun-no-such-program-xyz
[ "$RC" -ne 0 ] || fail "unknown program: exit status 0"
expect_rc 127 "unknown program"
expect_err "^ternrun: .*ternrun-no-such-program-xyz" "unknown program is named"

run -n x true
[ "$RC" -ne 0 ] || fail "-n x accepted"
expect_err "^ternrun: .*-n.*'x'" "-n x message"

run -n 0 true
[ "$RC" -ne 0 ] || fail "-n 0 accepted"
expect_err "^ternrun: .*at least 1" "-n 0 message"

run -n 2
[ "$RC" -ne 0 ] || fail "missing program accepted"
expect_err "^ternrun: missing program" "missing program message"

run --no-such-option -n 1 true
[ "$RC" -ne 0 ] || fail "unknown option accepted"
expect_err "^ternrun: unknown option '--no-such-option'" "unknown option message"

run --bind-to socket -n 1 true
[ "$RC" -ne 0 ] || fail "--bind-to socket accepted"

run --version
expect_rc 0 "--version"
expect_out '^ternrun ' "--version output"

run --help
expect_rc 0 "--help"
expect_out 'usage: ternrun' "--help output"
expect_out '--tag-output' "--help lists the stdio options"

# options end at the program: its own -n is not ternrun's
run -n 1 sh -c 'printf "%s\n" "$*"' sh -n 5 -x
expect_rc 0 "program arguments"
expect_out '^-n 5 -x$' "program arguments passed through untouched"

# stdin goes to rank 0 only, the others read /dev/null
echo "line-for-rank-0" >"$WORK/in"
IN=$WORK/in run -n 2 sh -c 'read x; echo "$PMIX_RANK:[$x]"'
IN=
expect_rc 0 "stdin"
expect_out '^0:\[line-for-rank-0\]$' "rank 0 reads ternrun's stdin"
expect_out '^1:\[\]$' "rank 1 reads /dev/null"

# closed stdin and stdout: ternrun puts /dev/null there, the ranks' stderr
# still arrives and nothing gets mixed up
timeout -k 5 "$T" "$TERNRUN" -n 2 sh -c 'echo out; echo "err $PMIX_RANK" >&2' >&- <&- 2>"$ERR"
RC=$?
expect_rc 0 "closed stdin and stdout"
[ "$(grep -c '^err [01]$' "$ERR")" -eq 2 ] || fail "closed stdout: the ranks' stderr lines are missing"
grep -q '^out' "$ERR" && fail "closed stdout: stdout lines went to stderr"

finish
