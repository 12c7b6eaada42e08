# What bench/compare.sh and bench/mpi_compare.sh share, sourced by both
# (installed beside them).  The callers set BUILDDIR, COMMANDS,
# CMD_TIMEOUT, and count NRUN and FAILURES.
# shellcheck shell=bash

# find_prog NAME: NAME in the build tree (top, bench/, launcher/), else on PATH
find_prog() {
    local name=$1 d
    for d in "$BUILDDIR" "$BUILDDIR/bench" "$BUILDDIR/launcher"; do
        if [ -x "$d/$name" ] && [ ! -d "$d/$name" ]; then
            echo "$d/$name"
            return 0
        fi
    done
    command -v "$name" 2>/dev/null
}

fail() {
    echo "!! $*" >&2
    FAILURES=$((FAILURES + 1))
}

# run LOG CMD...: CMD under timeout, its output in LOG, recorded in
# COMMANDS; a failure is counted and its last lines shown
run() {
    local log=$1 rc
    shift
    NRUN=$((NRUN + 1))
    echo "+ $*"
    echo "$*" >>"$COMMANDS"
    timeout "$CMD_TIMEOUT" "$@" </dev/null >"$log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        fail "exit status $rc from: $*$([ $rc = 124 ] && echo " (timed out after $CMD_TIMEOUT s)") (last lines of output follow)"
        tail -n 5 "$log" >&2
    fi
    return $rc
}

# percent of all CPUs busy over one second (/proc/stat)
cpu_busy() {
    local a b
    a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat)
    sleep 1
    b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ");
        t = y[2] - x[2]; printf "%.0f\n", (t > 0 ? 100 * (y[1] - x[1]) / t : 0) }'
}

# BUSY_START, said, and a warning when others use the CPUs
busy_before() {
    BUSY_START=$(cpu_busy)
    echo "# CPU busy before the runs: ${BUSY_START}% of all CPUs (over 1 s)"
    if [ "$BUSY_START" -gt 10 ]; then
        echo "# WARNING: other processes are using the CPUs; latency figures will partly measure the scheduler" >&2
    fi
}

# a JSON string of $1
json_str() {
    local s=$1
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\t'/\\t}
    printf '"%s"' "$s"
}
