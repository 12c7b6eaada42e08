# Shared helpers for the IOF tests (sourced, not run): the launcher tests'
# helpers (run, fail, finish, $WORK, $OUT, $ERR, timeouts) plus the writer.
. "$(dirname "$0")/../launcher/lib.sh"

WRITER=${IOF_WRITER:-./tests/iof/iof_writer}
if [ ! -x "$WRITER" ]; then
    echo "SKIP: $WRITER not built"
    exit 77
fi

# expect_same A B WHAT: files A and B are byte-identical
expect_same() {
    cmp -s "$1" "$2" || fail "$3: $(cmp "$1" "$2" 2>&1 | head -n 1)"
}

# expected RANK ARGS...: what the writer prints as rank RANK (stdout)
expected() {
    r=$1
    shift
    PMIX_RANK=$r "$WRITER" "$@"
}


# start_job ARGS...: ternrun in the background (pid in $JOB, bounded by $T)
# announcing its tool socket, whose path is in $SOCK when this returns
start_job() {
    rm -f "$WORK/announce"
    timeout -k 5 "$T" "$TERNRUN" --iof-announce "$WORK/announce" "$@" \
        >"$OUT" 2>"$ERR" </dev/null &
    JOB=$!
    i=0
    while [ ! -s "$WORK/announce" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
    SOCK=$(cat "$WORK/announce" 2>/dev/null)
    [ -n "$SOCK" ] || fail "ternrun did not announce its socket"
}
