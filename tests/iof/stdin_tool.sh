#!/bin/sh
# stdin fed by an attached tool (ternrun --stdin-tool, tern-iof --stdin):
# 10 MiB of binary input reach the chosen ranks byte-exact and once; a job
# not started for it refuses the tool with the reason; one stdin tool at a
# time; the tool's end (EOF or death) is the ranks' EOF; a rank that never
# reads does not keep the job or the tool from ending, even on endless input.
. "$(dirname "$0")/lib.sh"

TOOL=./tern-iof
[ -x "$TOOL" ] || { echo "SKIP: $TOOL not built"; exit 77; }

head -c 10M /dev/urandom >"$WORK/in.bin"
want=$(sha256sum <"$WORK/in.bin")

# tool ARGS... (stdin as given): tern-iof bounded by a timeout, status in $TRC
tool() {
    timeout -k 5 "$T" "$TOOL" --socket "$SOCK" "$@" >"$WORK/tool.out" 2>"$WORK/tool.err"
    TRC=$?
}

# wait_attached FILE: until the background tool writing FILE says attached
wait_attached() {
    i=0
    while ! grep -qs attached "$1" && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
    grep -qs attached "$1" || fail "tern-iof did not attach: $(cat "$1" 2>&1)"
}

GO=$WORK/go
export GO

# 1. rank 0 (the default) gets the tool's 10 MiB; rank 1 reads /dev/null
start_job --stdin-tool -n 2 sh -c 'cat >"$0/got.$PMIX_RANK"' "$WORK"
tool --stdin <"$WORK/in.bin"
[ "$TRC" -eq 0 ] || fail "tern-iof --stdin: exit status $TRC ($(cat "$WORK/tool.err"))"
wait $JOB || fail "job 1: exit status $?"
[ "$(sha256sum <"$WORK/got.0")" = "$want" ] ||
    fail "rank 0 did not get the tool's 10 MiB byte-exact ($(wc -c <"$WORK/got.0") bytes)"
[ -s "$WORK/got.1" ] && fail "rank 1 got stdin bytes without --stdin all"
rm -f "$WORK"/got.*

# 2. --stdin all: every rank gets the same bytes, and the tool still gets
# the ranks' output
start_job --stdin-tool --stdin all -n 3 sh -c 'cat >"$0/got.$PMIX_RANK"; echo "rank $PMIX_RANK done"' "$WORK"
tool --stdin --streams stdout <"$WORK/in.bin"
[ "$TRC" -eq 0 ] || fail "tern-iof --stdin (all): exit status $TRC"
wait $JOB || fail "job 2: exit status $?"
for r in 0 1 2; do
    [ "$(sha256sum <"$WORK/got.$r")" = "$want" ] || fail "--stdin all: rank $r did not get the 10 MiB"
    grep -q "^rank $r done$" "$WORK/tool.out" || fail "the stdin tool did not get rank $r's output"
done
rm -f "$WORK"/got.*

# 3. a job not started with --stdin-tool refuses a stdin tool, and says why
# (the job waits for $GO: a loaded machine must not end it before the tool asks)
rm -f "$GO"
start_job -x GO -n 1 sh -c 'while [ ! -e "$GO" ]; do sleep 0.05; done'
tool --stdin </dev/null
touch "$GO"
[ "$TRC" -eq 1 ] || fail "a refused stdin tool: exit status $TRC, expected 1"
grep -q "refused.*--stdin-tool" "$WORK/tool.err" || fail "no reason for the refusal: $(cat "$WORK/tool.err")"
wait $JOB || fail "job 3: exit status $?"

# 4. one stdin tool at a time; the first one's EOF is the rank's EOF
mkfifo "$WORK/fifo"
start_job --stdin-tool -n 1 sh -c 'cat >"$0/got.0"' "$WORK"
"$TOOL" --socket "$SOCK" --stdin <"$WORK/fifo" >/dev/null 2>"$WORK/first.err" &
first=$!
exec 3>"$WORK/fifo" # the first tool's input, held open
wait_attached "$WORK/first.err"
tool --stdin </dev/null
[ "$TRC" -eq 1 ] && grep -q "another attached tool" "$WORK/tool.err" ||
    fail "a second stdin tool was not refused: status $TRC, $(cat "$WORK/tool.err")"
printf 'one line\n' >&3
exec 3>&-
wait $first || fail "the first stdin tool: exit status $?"
wait $JOB || fail "job 4: exit status $?"
[ "$(cat "$WORK/got.0")" = "one line" ] || fail "job 4: rank 0 got '$(cat "$WORK/got.0")'"
rm -f "$WORK"/got.*

# 5. the tool killed while feeding: the rank gets EOF and the job ends
mkfifo "$WORK/fifo2"
start_job --stdin-tool -n 1 sh -c 'cat >"$0/got.0"; echo ended' "$WORK"
"$TOOL" --socket "$SOCK" --stdin <"$WORK/fifo2" >/dev/null 2>"$WORK/killed.err" &
victim=$!
exec 4>"$WORK/fifo2"
wait_attached "$WORK/killed.err"
printf 'partial' >&4
kill -KILL $victim
wait $victim 2>/dev/null
exec 4>&-
wait $JOB || fail "job 5: exit status $?"
grep -q '^ended$' "$OUT" || fail "job 5: the rank did not see EOF when its stdin tool died"

# 6. endless input, a rank that never reads: the job and the tool end
# (yes through a fifo: in "yes | tool" the tool function would run in a
# subshell and $TRC would not come back)
mkfifo "$WORK/fifo3"
start_job --stdin-tool -n 2 sh -c 'sleep 0.5; echo done'
yes >"$WORK/fifo3" 2>/dev/null &
yes_pid=$!
tool --stdin <"$WORK/fifo3"
kill $yes_pid 2>/dev/null # it ends by SIGPIPE; unless the tool never opened the fifo
[ "$TRC" -eq 0 ] || fail "endless input: tern-iof exit status $TRC ($(cat "$WORK/tool.err"))"
wait $JOB || fail "job 6: exit status $?"
[ "$(grep -c '^done$' "$OUT")" -eq 2 ] || fail "job 6: output of the ranks missing"

# 7. the stdin tool killed while ternrun does not read its socket (rank 0's
# stdin buffer is full: the rank reads only later) and the rank's output
# is what reveals the death: the rank still gets EOF after the bytes that
# were read, and the job ends
start_job --stdin-tool -n 1 sh -c \
    'sleep 1; echo out; sleep 1; cat >"$0/got.0"; echo ended' "$WORK"
"$TOOL" --socket "$SOCK" --stdin <"$WORK/in.bin" >/dev/null 2>"$WORK/killed2.err" &
victim=$!
wait_attached "$WORK/killed2.err"
sleep 0.3
kill -KILL $victim
wait $victim 2>/dev/null
wait $JOB || fail "job 7: exit status $?"
grep -q '^ended$' "$OUT" ||
    fail "job 7: the rank did not see EOF when its stdin tool died unread"
cmp -s -n "$(wc -c <"$WORK/got.0")" "$WORK/got.0" "$WORK/in.bin" ||
    fail "job 7: the bytes the rank got are not a prefix of the input"
rm -f "$WORK"/got.*

# 8. usage: --stdin-tool with --stdin none is refused at once
run --stdin-tool --stdin none -n 1 true
expect_rc 2 "--stdin-tool --stdin none"
expect_err "no rank would read" "--stdin-tool --stdin none"

finish
