#!/bin/sh
# tern-iof attached to a running ternrun: it gets exactly the bytes ternrun
# forwarded for the ranks and streams it asked for (and none of the others)
# from the moment it attached; a tool that stops reading (SIGSTOP) does not
# stall the job: ternrun drops it with a note, and the tool, once it runs
# again, tells that it was dropped (exit 1) from a job's end (exit 0).
. "$(dirname "$0")/lib.sh"

TOOL=./tern-iof
[ -x "$TOOL" ] || { echo "SKIP: $TOOL not built"; exit 77; }
GO=$WORK/go
export GO

# each rank waits for $GO (created once the tool is attached), then writes
# 200 known lines to stdout and 50 to stderr
cat >"$WORK/rank.sh" <<'EOS'
#!/bin/sh
while [ ! -e "$GO" ]; do sleep 0.05; done
seq 1 200 | sed "s/^/line of rank $PMIX_RANK: /"
seq 1 50 | sed "s/^/error of rank $PMIX_RANK: /" >&2
EOS
chmod +x "$WORK/rank.sh"

# start_tool ARGS...: tern-iof in the background (pid in $TOOLPID: no
# timeout wrapper, it is SIGSTOPped; the end of the job ends it), returns
# once it says it is attached.  Each tool writes to files of its own
# ($TOOLOUT, $TOOLERR): the redirections of a background command happen in
# the child, so a reused name could still show the previous tool's
# "attached" line when the wait below looks at it.
ntool=0
start_tool() {
    ntool=$((ntool + 1))
    TOOLOUT=$WORK/tool.$ntool.out
    TOOLERR=$WORK/tool.$ntool.err
    "$TOOL" --socket "$SOCK" "$@" >"$TOOLOUT" 2>"$TOOLERR" </dev/null &
    TOOLPID=$!
    i=0
    while ! grep -qs "attached" "$TOOLERR" && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
    grep -qs "attached" "$TOOLERR" ||
        fail "tern-iof did not attach in $((i / 20)) s: $(cat "$TOOLERR" 2>&1)"
}

# 1. tagged copies of ranks 0 and 2, stdout and stderr, vs ternrun's stdout
rm -f "$GO"
start_job -x GO -n 3 --tag-output --merge-stderr-to-stdout "$WORK/rank.sh"
start_tool --ranks 0,2 --streams stdout,stderr --tag
touch "$GO"
wait $JOB || fail "job 1: exit status $?"
wait $TOOLPID || fail "tern-iof: exit status $? ($(cat "$TOOLERR"))"
for r in 0 2; do
    for s in stdout stderr; do
        grep "^\[$r,$s\] " "$OUT" >"$WORK/want"
        grep "^\[$r,$s\] " "$TOOLOUT" >"$WORK/got"
        [ "$(wc -l <"$WORK/want")" -gt 0 ] || fail "ternrun forwarded nothing for [$r,$s]"
        expect_same "$WORK/got" "$WORK/want" "the tool's copy of [$r,$s]"
    done
done
grep -q '^\[1,' "$TOOLOUT" && fail "the tool got rank 1's output"
[ "$(grep -vc '^\[[02],std\(out\|err\)\] ' "$TOOLOUT")" -eq 0 ] ||
    fail "the tool got lines it did not ask for"

# 2. raw copy of rank 1's stdout vs DIR/1/stdout
rm -f "$GO"
start_job -x GO -n 3 --output-filename "$WORK/dir" "$WORK/rank.sh"
start_tool --ranks 1 --streams stdout
touch "$GO"
wait $JOB || fail "job 2: exit status $?"
wait $TOOLPID || fail "tern-iof (raw): exit status $?"
expect_same "$TOOLOUT" "$WORK/dir/1/stdout" "the tool's raw copy of rank 1's stdout"

# 3. a stopped tool: 20 MiB of output still go through, the tool is dropped
cat >"$WORK/big.sh" <<'EOS'
#!/bin/sh
while [ ! -e "$GO" ]; do sleep 0.05; done
yes 0123456789012345678901234567890123456789012345678901234567890123456789 | head -c 20971520
EOS
chmod +x "$WORK/big.sh"
rm -f "$GO"
start_job -x GO -n 1 "$WORK/big.sh"
start_tool
kill -STOP $TOOLPID
start=$(date +%s)
touch "$GO"
# the tool stays stopped until the job has ended: a ternrun that waited for
# it would never end (start_job's timeout, T, catches that); no time bound
wait $JOB || fail "job 3 (stopped tool): exit status $? (124: it waited for the stopped tool)"
echo "job 3 ended $(($(date +%s) - start)) s after its output began, the tool stopped"
size=$(wc -c <"$OUT")
: >"$OUT" # not 20 MiB in a failure report
[ "$size" -eq 20971520 ] || fail "job 3: ternrun forwarded $size bytes"
grep -q "dropping attached tool" "$ERR" || fail "ternrun did not note the dropped tool"
kill -CONT $TOOLPID
wait $TOOLPID
trc=$?
[ "$trc" -eq 1 ] || fail "the dropped tool: exit status $trc, expected 1"
grep -q "dropped" "$TOOLERR" || fail "the dropped tool did not say so: $(cat "$TOOLERR")"

finish
