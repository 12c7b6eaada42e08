# Shared helpers for the ternrun tests (sourced, not run).
# Automake runs TESTS from the top build directory: ./ternrun is there.

TERNRUN=${TERNRUN:-./ternrun}
PROBE=${PMIX_PROBE:-./tests/launcher/pmix_probe}
CALLS=${PMIX_CALLS:-./tests/launcher/pmix_calls}   # PMIx calls beyond wire-up
T=${TERNRUN_TEST_TIMEOUT:-60}   # generous bound on every ternrun call

# sanitizer builds: libpmix's own leaks are not ours (see tests/lsan.supp);
# the ranks inherit this too.  Options set by the harness take precedence.
if [ -z "${LSAN_OPTIONS:-}" ]; then
    LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")/.." && pwd)/lsan.supp:print_suppressions=0"
    export LSAN_OPTIONS
fi

if [ ! -x "$TERNRUN" ]; then
    echo "SKIP: $TERNRUN not built"
    exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ternrun-test.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out
ERR=$WORK/err
failures=0

fail() {
    echo "FAIL: $*"
    echo "--- stdout:"; cat "$OUT" 2>/dev/null
    echo "--- stderr:"; cat "$ERR" 2>/dev/null
    failures=$((failures + 1))
}

# run ARGS...: ternrun with a timeout, output in $OUT/$ERR, status in $RC;
# stdin from $IN (default /dev/null)
STACKS="$(cd "$(dirname "$0")/.." && pwd)/stacks.sh"
# watched PID: wait for PID (a bounded command in the background) into RC;
# 10 s before the bound $T ends it, tests/stacks.sh prints the stacks of
# what still runs below it (to this script's stderr: the test's log)
watched() {
    sh "$STACKS" $((T > 20 ? T - 10 : T / 2)) "$1" &
    wpid=$!
    wait "$1"
    RC=$?
    kill "$wpid" 2>/dev/null
    wait "$wpid" 2>/dev/null
}

run() {
    timeout -k 5 "$T" "$TERNRUN" "$@" >"$OUT" 2>"$ERR" <"${IN:-/dev/null}" &
    watched $!
    if [ "$RC" -eq 124 ]; then
        fail "ternrun $* did not finish within $T s"
    fi
}

# run_shim KNOB=value ARGS...: as run, with tests/launcher/fault_shim
# preloaded into ternrun and KNOB (a TERN_SHIM_* variable: fault_shim.c)
# in its environment; a sanitizer build needs its runtimes loaded first
SHIM=${TERN_FAULT_SHIM:-./tests/launcher/.libs/fault_shim.so}
run_shim() {
    knob=$1
    shift
    pre=""
    for rt in $(ldd "$SHIM" | awk '/lib(asan|ubsan)\.so/ {print $3}'); do
        pre="$pre${pre:+:}$rt"
    done
    timeout -k 5 "$T" env "LD_PRELOAD=$pre${pre:+:}$(cd "$(dirname "$SHIM")" && pwd)/${SHIM##*/}" \
        "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" "$knob" \
        "$TERNRUN" "$@" >"$OUT" 2>"$ERR" <"${IN:-/dev/null}" &
    watched $!
    if [ "$RC" -eq 124 ]; then
        fail "ternrun $* ($knob, fault_shim) did not finish within $T s"
    fi
}

expect_rc() {   # expect_rc WANT WHAT
    if [ "$RC" -ne "$1" ]; then
        fail "$2: exit status $RC, expected $1"
    fi
}

expect_out() {  # expect_out PATTERN WHAT  (grep -E on stdout)
    grep -Eq -- "$1" "$OUT" || fail "$2: stdout does not match /$1/"
}

expect_err() {  # expect_err PATTERN WHAT  (grep -E on stderr)
    grep -Eq -- "$1" "$ERR" || fail "$2: stderr does not match /$1/"
}

finish() {
    if [ "$failures" -ne 0 ]; then
        echo "$failures check(s) failed"
        exit 1
    fi
    echo "all checks passed"
    exit 0
}
