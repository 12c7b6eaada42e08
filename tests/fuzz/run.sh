#!/bin/sh
# tests/fuzz/run.sh SECONDS [NAME...]: run each libFuzzer harness of a
# --enable-fuzzers build (tests/fuzz/Makefile.inc) for SECONDS seconds,
# from the top build directory.  Each starts from a copy of its seed corpus
# tests/fuzz/corpus/NAME in a temporary directory (the checked-in corpus is
# never modified).  Prints one line per harness,
#   PASS: NAME (execs, exec/s, cov, ft, corpus)    or    FAIL: NAME ...
# and exits 1 if any crashed, leaked, timed out or broke an invariant; its
# crashing inputs are kept in $FUZZ_CRASH_DIR (./tests/fuzz/crashes).
# FUZZ_BIN_DIR: where the harnesses are (./tests/fuzz).
set -u
secs=${1:?usage: tests/fuzz/run.sh SECONDS [NAME...]}
shift
src=$(cd "$(dirname "$0")" && pwd)
bindir=${FUZZ_BIN_DIR:-./tests/fuzz}
keep=${FUZZ_CRASH_DIR:-$bindir/crashes}
names=${*:-fuzz_pkt fuzz_shm_header fuzz_tcp_card}
# third-party leaks only (libpmix is linked, never called): see tests/lsan.supp
LSAN_OPTIONS=suppressions=$src/../lsan.supp:print_suppressions=0
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS UBSAN_OPTIONS
failed=0
for name in $names; do
    bin=$bindir/$name
    if [ ! -x "$bin" ]; then
        echo "SKIP: $name (not built: configure --enable-fuzzers)"
        continue
    fi
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/tern-fuzz.XXXXXX") || exit 1
    mkdir "$tmp/corpus" "$tmp/crash"
    [ -d "$src/corpus/$name" ] && cp "$src/corpus/$name"/* "$tmp/corpus/" 2>/dev/null
    seeds=$(ls "$tmp/corpus" | wc -l)
    "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$tmp/crash/" "$tmp/corpus" >"$tmp/log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$tmp/log")
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*' "$tmp/log" | tail -1)
    figures="${execs:-?} execs, ${rate:-?} exec/s, ${cov:-no coverage line}, $seeds seeds, ${secs}s"
    if [ "$rc" -eq 0 ] && [ -z "$(ls "$tmp/crash")" ]; then
        echo "PASS: $name ($figures)"
    else
        failed=1
        mkdir -p "$keep"
        cp "$tmp/crash"/* "$keep/" 2>/dev/null
        echo "FAIL: $name (exit $rc; $figures)"
        echo "---- $name: end of its log; crashing inputs in $keep:"
        ls "$tmp/crash"
        grep -v '^#[0-9]' "$tmp/log" | tail -40
    fi
    rm -rf "$tmp"
done
exit "$failed"
