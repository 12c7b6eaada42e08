# What bench/compare.sh and bench/mpi_compare.sh share, sourced by both
# (installed beside them).  The callers set BUILDDIR, COMMANDS,
# CMD_TIMEOUT and WORK (a scratch directory), and count NRUN and FAILURES.
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

# The CPU time other processes took while ours ran, in % of one CPU: the
# busy time of all CPUs (/proc/stat) minus what our children used (bash's
# `times`, once they are reaped), over the wall time.  On a shared machine
# it tells a round that measured the neighbours from one that measured the
# tools.  others_mark VAR keeps the starting point in VAR; others_since
# "$VAR" sets LAST_OTHERS to the percentage since then.  `times` runs in
# this shell (in a $(...) it would see the subshell's children only),
# into a file in the caller's WORK directory.
others_now() {   # sets OTHERS_NOW="busy_ticks children_seconds wall_seconds"
    local kids busy
    times >"$WORK/others.times"
    kids=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] } printf "%.3f", n }' "$WORK/others.times")
    busy=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat)
    OTHERS_NOW="$busy $kids $(date +%s.%N)"
}
others_mark() { others_now; printf -v "$1" '%s' "$OTHERS_NOW"; }
others_since() {
    others_now
    LAST_OTHERS=$(awk -v a="$1" -v b="$OTHERS_NOW" -v hz="${OTHERS_HZ:=$(getconf CLK_TCK 2>/dev/null || echo 100)}" '
        BEGIN { split(a, x, " "); split(b, y, " ");
                t = y[3] - x[3]; o = (y[1] - x[1]) / hz - (y[2] - x[2]);
                printf "%.0f\n", (t > 0 && o > 0 ? 100 * o / t : 0) }')
}

# run LOG CMD...: CMD under timeout, its output in LOG, recorded in
# COMMANDS; a failure is counted and its last lines shown.  LAST_OTHERS:
# the others' CPU share while it ran (others_since).
run() {
    local log=$1 rc mark
    shift
    NRUN=$((NRUN + 1))
    echo "+ $*"
    echo "$*" >>"$COMMANDS"
    others_mark mark
    timeout "$CMD_TIMEOUT" "$@" </dev/null >"$log" 2>&1
    rc=$?
    others_since "$mark"
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
