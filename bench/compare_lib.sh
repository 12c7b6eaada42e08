# What bench/compare.sh, bench/mpi_compare.sh and bench/ofi_compare.sh
# share, sourced by each (installed beside them).  The callers set BUILDDIR,
# COMMANDS, CMD_TIMEOUT and WORK (a scratch directory), and count NRUN and
# FAILURES.
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

# cmp_tern_env "VAR=value ...": --env's settings appended to TERN_ENV, each
# a TERN_* one (exit 2 naming one that is not)
cmp_tern_env() {
    local -a kv
    local x
    read -ra kv <<<"$1"
    for x in "${kv[@]}"; do
        [[ $x =~ ^TERN_[A-Za-z0-9_]*=.*$ ]] || { echo "$0: --env: '$x' is not TERN_VAR=value" >&2; exit 2; }
        TERN_ENV+=("$x")
    done
}

# cmp_hosts: --hosts' two namespace hosts (tests/multinode/lib.sh, from the
# source tree beside SCRIPT_DIR), a rankfile RANKFILE putting rank 0 on
# CORE_A in host 1 and rank 1 on CORE_B in host 2; MN_TIMEOUT=CMD_TIMEOUT.
# lib.sh's checks exit 77 with a SKIP line: here that is a failure to run
# (exit 2).  lib.sh is written without pipefail (`cmd | grep -q` there must
# succeed when grep does).  mn_setup's trap removes the hosts on every
# exit, also when it fails half-way (cmp_work chains it after the caller's
# cleanup).
cmp_hosts() {
    local lib=$SCRIPT_DIR/../tests/multinode/lib.sh
    [ -r "$lib" ] || { echo "$0: --hosts needs the source tree's tests/multinode/lib.sh ($lib)" >&2; exit 2; }
    # shellcheck source=tests/multinode/lib.sh
    srcdir=$SCRIPT_DIR/.. . "$lib"
    (mn_skip_unless_netns) || { echo "$0: --hosts: two namespace hosts cannot be made here" >&2; exit 2; }
    set +o pipefail
    mn_setup
    set -o pipefail
    MN_TIMEOUT=$CMD_TIMEOUT
    RANKFILE=$MN_DIR/rankfile
    printf 'rank 0=%s slot=%s\nrank 1=%s slot=%s\n' "$MN_NS1" "$CORE_A" "$MN_NS2" "$CORE_B" >"$RANKFILE"
}

# cmp_work NAME: the scratch directory WORK (tern-NAME.XXXXXX), the caller's
# cleanup function run on every exit (then, with HOSTS=1, mn_setup's, which
# exits with the status it is given), SAMPLES and COMMANDS empty, FAILURES
# and NRUN at 0
cmp_work() {
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-$1.XXXXXX") || exit 1
    if [ "${HOSTS:-0}" = 1 ]; then
        trap 'rc=$?; cleanup; (exit $rc); mn_cleanup' EXIT
    else
        trap cleanup EXIT
        trap 'exit 130' INT
        trap 'exit 143' TERM
    fi
    SAMPLES=$WORK/samples.tsv   # tool <TAB> test <TAB> size <TAB> round <TAB> value
    COMMANDS=$WORK/commands.txt # every command, in the order it ran
    : >"$SAMPLES"
    : >"$COMMANDS"
    FAILURES=0
    NRUN=0
}

# in_list ITEM LIST: ITEM is one of the comma list LIST
in_list() { [[ ",$2," == *",$1,"* ]]; }

# cmp_select FIRST: check --tests (TESTS) and --tools (TOOLS) against
# ALL_TESTS and ALL_TOOLS (exit 2 naming an unknown one), put FIRST among
# TOOLS (the tool the ratios divide), and set RUN_TESTS (in ALL_TESTS'
# order), FACTOR (2; 4 with QUICK=1), SIZES (1 .. MAX_SIZE by FACTOR) and
# EXTRA_LAT (1 when LAT_SIZE, the latency targets' size, is not among them:
# lat then runs it in a launch of its own).
cmp_select() {
    local t
    for t in ${TESTS//,/ }; do
        in_list "$t" "$(IFS=,; echo "${ALL_TESTS[*]}")" ||
            { echo "$0: unknown test '$t' in --tests" >&2; exit 2; }
    done
    for t in ${TOOLS//,/ }; do
        in_list "$t" "$(IFS=,; echo "${ALL_TOOLS[*]}")" ||
            { echo "$0: unknown tool '$t' in --tools (this script has ${ALL_TOOLS[*]})" >&2; exit 2; }
    done
    in_list "$1" "$TOOLS" || TOOLS="$1,$TOOLS"
    RUN_TESTS=()
    for t in "${ALL_TESTS[@]}"; do in_list "$t" "$TESTS" && RUN_TESTS+=("$t"); done
    FACTOR=2
    [ "${QUICK:-0}" = 1 ] && FACTOR=4
    SIZES=()
    local s
    for ((s = 1; s <= MAX_SIZE; s *= FACTOR)); do SIZES+=("$s"); done
    EXTRA_LAT=0
    if ! in_list "$LAT_SIZE" "$(IFS=,; echo "${SIZES[*]}")" && [ "$LAT_SIZE" -le "$MAX_SIZE" ]; then
        EXTRA_LAT=1
        mapfile -t SIZES < <(printf '%s\n' "${SIZES[@]}" "$LAT_SIZE" | sort -n)
    fi
}

# skip TOOL WHY: leave a peer out of this run, saying why (SKIPPED, TOOLS).
SKIPPED=()
skip() {
    echo "# skipping $1: $2" >&2
    SKIPPED+=("$1: $2")
    TOOLS=$(tr ',' '\n' <<<"$TOOLS" | grep -vx "$1" | paste -sd, -)
}

# json_commands: the end of a results object, every command the run ran
# (COMMANDS, one line each) as its "commands" array.
json_commands() {
    local n i=0 c
    echo "  \"commands\": ["
    n=$(wc -l <"$COMMANDS")
    while IFS= read -r c; do
        i=$((i + 1))
        printf '    %s%s\n' "$(json_str "$c")" "$([ $i -lt "$n" ] && echo ,)"
    done <"$COMMANDS"
    echo "  ]"
    echo "}"
}

# plot_png SCRIPT VARS WHERE: gnuplot SCRIPT with -e VARS (which name
# outfile); says what it wrote, or, without gnuplot, where the figures are
# (WHERE); a failed gnuplot is a failure, its messages shown.
plot_png() {
    if ! command -v gnuplot >/dev/null; then
        echo "# gnuplot not found: no plot (the figures are in $3)"
        return 0
    fi
    echo "+ gnuplot -e ... $1"
    if gnuplot -e "$2" "$1" 2>"$WORK/gnuplot.log"; then
        echo "# wrote $OUT.png"
    else
        cat "$WORK/gnuplot.log" >&2
        fail "gnuplot failed"
    fi
}

# json_pairs FILE: the "size value" lines of a bench program's --json file
# (nothing when it has no figure).
json_pairs() {
    grep -o '"size": [0-9]*, "value": [0-9.eE+-]*' "$1" 2>/dev/null |
        awk '{ gsub(/[",]/, ""); print $2, $4 }'
}

# record_json TOOL TEST ROUND FILE: the caller's record() for every figure
# of FILE; 1 (a failure counted) when it has none.
record_json() {
    local pairs size value
    pairs=$(json_pairs "$4")
    if [ -z "$pairs" ]; then
        fail "no figures in $4 from $1"
        return 1
    fi
    while read -r size value; do
        record "$1" "$2" "$size" "$3" "$value"
    done <<<"$pairs"
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

# ---- per-size sweeps: medians, per-round ratios, formatting -------------
# (bench/mpi_compare.sh and bench/ofi_compare.sh: one launch of a tool sweeps
# every size, samples are "tool <TAB> test <TAB> size <TAB> round <TAB> value")

# sweep_stats SAMPLES "TOOLS" "TESTS" "SIZES" "PAIRS": one awk pass printing,
# per tool, test and size, "med TOOL TEST SIZE V", the median of the rounds,
# and per pair A:B of PAIRS "rr A B TEST SIZE V", the median of the ratios
# A / B taken inside each round (V "nan" where there is no figure).  The
# ratios are taken inside a round because this VM's absolute figures swing
# up to 3x between runs.
sweep_stats() {
    awk -F'\t' -v tools="$2" -v tests="$3" -v sizes="$4" -v pairs="$5" '
        function median(arr, n,    i, j, t) {
            for (i = 2; i <= n; i++)   # insertion sort: a handful of rounds
                for (j = i; j > 1 && arr[j - 1] > arr[j]; j--) { t = arr[j]; arr[j] = arr[j - 1]; arr[j - 1] = t }
            if (n == 0) return "nan"
            return n % 2 ? sprintf("%.6g", arr[(n + 1) / 2]) : sprintf("%.6g", (arr[n / 2] + arr[n / 2 + 1]) / 2)
        }
        { v[$1, $2, $3, $4] = $5; rounds[$4] = 1 }
        END {
            nt = split(tools, T, " "); nx = split(tests, X, " "); ns = split(sizes, S, " ")
            np = split(pairs, P, " ")
            for (x = 1; x <= nx; x++) for (s = 1; s <= ns; s++) {
                for (t = 1; t <= nt; t++) {
                    n = 0; delete a
                    for (r in rounds) if ((T[t], X[x], S[s], r) in v) a[++n] = v[T[t], X[x], S[s], r]
                    print "med", T[t], X[x], S[s], median(a, n)
                }
                for (p = 1; p <= np; p++) {
                    split(P[p], ab, ":"); n = 0; delete a
                    for (r in rounds)
                        if (((ab[1], X[x], S[s], r) in v) && ((ab[2], X[x], S[s], r) in v) && v[ab[2], X[x], S[s], r] + 0 > 0)
                            a[++n] = v[ab[1], X[x], S[s], r] / v[ab[2], X[x], S[s], r]
                    print "rr", ab[1], ab[2], X[x], S[s], median(a, n)
                }
            }
        }' "$1"
}

# sweep_read STATS: sweep_stats's rows into the caller's associative arrays
# MED[TOOL.TEST.SIZE] and RR[A.B.TEST.SIZE] (declare -A MED RR first)
sweep_read() {
    local kind a b c d e
    while read -r kind a b c d e; do
        if [ "$kind" = med ]; then MED[$a.$b.$c]=$d; else RR[$a.$b.$c.$d]=$e; fi
    done <"$1"
}

# sweep_fmt TEST VALUE: a figure as the tables print it ("-" for none)
sweep_fmt() {
    awk -v m="$1" -v v="$2" 'BEGIN { if (v == "nan" || v == "") print "-";
        else if (m == "lat" || m == "allreduce") printf "%.3f\n", v;
        else if (m == "mr") printf "%.4g\n", v; else printf "%.1f\n", v }'
}

# ratio_fmt RATIO: three decimals, "-" for none
ratio_fmt() { if [ "$1" = nan ] || [ -z "$1" ]; then echo -; else awk -v v="$1" 'BEGIN { printf "%.3f\n", v }'; fi; }

# ratio_better TEST RATIO: is RATIO (A / B of the figures) in A's favour?
# Latency is better lower, everything else higher.
ratio_better() {
    awk -v m="$1" -v q="$2" 'BEGIN { if (q == "nan" || q == "") exit 1;
        exit !((m == "lat" || m == "allreduce") ? q < 1 : q > 1) }'
}

# json_num V: a JSON number, null for "nan" or nothing
json_num() { if [ "$1" = nan ] || [ -z "$1" ]; then printf null; else printf '%s' "$1"; fi; }

# json_list ITEM...: a JSON list of strings
json_list() {
    local first=1 x
    printf '['
    for x in "$@"; do [ $first = 1 ] || printf ', '; first=0; json_str "$x"; done
    printf ']'
}

# ucx_perftest's servers (compare.sh, rma_compare.sh): a TCP port nobody
# uses (the server has no bind-address option: it listens on 0.0.0.0 for the
# few hundred milliseconds of one test, and exits after one client), and
# the server of SERVER_PID stopped
free_port() {
    local p i
    for i in $(seq 1 50); do
        p=$((20000 + RANDOM % 40000))
        if [ -z "$(ss -Htan "sport = :$p" 2>/dev/null)" ]; then
            echo "$p"
            return 0
        fi
    done
    return 1
}
# await_listen PORT SLOG [PREFIX...]: wait (bounded: 20 s, a loaded box
# starts UCX slowly) until SERVER_PID listens on PORT, seen from the
# network namespace PREFIX enters (ip netns exec NS; none: this one); 1,
# with a message and the server's output, when it died or never listened
await_listen() {
    local port=$1 slog=$2 i
    shift 2
    for i in $(seq 1 400); do
        [ -n "$("$@" ss -Htln "sport = :$port" 2>/dev/null)" ] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    fail "ucx_perftest's server is not listening on port $port ($(kill -0 "$SERVER_PID" 2>/dev/null &&
        echo "still running after 20 s" || echo "it ended")): $(tail -n 3 "$slog" 2>/dev/null)"
    stop_server
    return 1
}
stop_server() {
    if [ -n "${SERVER_PID:-}" ]; then
        kill "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
        SERVER_PID=""
    fi
}
