#!/bin/sh
# A PMIx tool attaches to a running ternrun (docs/ternrun.md): with
# PMIX_TOOL_ATTACHMENT_FILE (named by ternrun -v) it gets a name of its
# own, the job's namespace, its namespace info (with the command line: that
# query crashed ternrun before) and proc table (the pids the ranks print), and
# a refused PMIx_IOF_pull (output copies come from tern-iof); a tool that
# stops itself once attached does not hold the job up: it ends on time,
# status 0.
. "$(dirname "$0")/lib.sh"
TOOL=${PMIX_TOOL:-./tests/launcher/pmix_tool}

timeout -k 5 60 "$TERNRUN" -n 2 -v "$PROBE" sleep 8 >"$OUT" 2>"$ERR" </dev/null &
job=$!
i=0
while [ $i -lt 200 ]; do
    [ "$(grep -c '^ready' "$OUT")" -eq 2 ] && break
    sleep 0.05
    i=$((i + 1))
done
file=$(sed -n 's/.*PMIX_TOOL_ATTACHMENT_FILE=//p' "$ERR" | head -1)
[ -n "$file" ] || fail "ternrun -v names no PMIX_TOOL_ATTACHMENT_FILE"
timeout -k 5 30 "$TOOL" "$file" >"$WORK/tool" 2>&1 || fail "the tool failed: $(cat "$WORK/tool")"
grep -Eq '^tool ternrun-[0-9]+\.tool\.[0-9]+:0$' "$WORK/tool" ||
    fail "the tool's name: $(head -1 "$WORK/tool")"
grep -Eq '^namespaces ternrun-[0-9]+$' "$WORK/tool" || fail "the tool saw no job namespace"
grep -Eq '^nsinfo ternrun-[0-9]+ .*pmix_probe sleep 8$' "$WORK/tool" ||
    fail "the tool's namespace info: $(cat "$WORK/tool")"
for r in 0 1; do
    pid=$(sed -n "s/^ready $r \([0-9]*\)$/\1/p" "$OUT")
    # PMIX_PROC_STATE_RUNNING 5, _CONNECTED 6
    grep -Eq "^proc $r pid $pid state [56] " "$WORK/tool" ||
        fail "rank $r (pid $pid) is not in the tool's proc table: $(cat "$WORK/tool")"
done
grep -q '^iof pull refused' "$WORK/tool" || fail "PMIx_IOF_pull was not refused"

# a second tool attaches and stops itself: the job goes on and ends
timeout -k 5 40 "$TOOL" "$file" stop >"$WORK/tool2" 2>&1 &
tool=$!
i=0
while [ $i -lt 200 ] && ! grep -q '^tool stopping' "$WORK/tool2"; do
    sleep 0.05
    i=$((i + 1))
done
grep -q '^tool stopping' "$WORK/tool2" || fail "the second tool did not attach: $(cat "$WORK/tool2")"
wait $job
RC=$?
expect_rc 0 "the job, with a stopped tool attached"
kill -KILL $tool 2>/dev/null
wait $tool 2>/dev/null

finish
