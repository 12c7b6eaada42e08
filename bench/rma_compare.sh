#!/usr/bin/env bash
# rma_compare.sh — tern's one-sided engine API against UCX's (issue 25), two
# processes on cores 0 and 1 of this host, interleaved: every round runs each
# test under both (which goes first alternates), and the table gives the
# medians and the median of the per-round tern / UCX ratios (this VM's
# absolute figures swing up to 3x between runs).
#
#   test      tern                                   UCX
#   get_lat   tern_rma -t get_lat (8 B, wait)        ucx_perftest -t ucp_get -s 8
#   fadd_lat  tern_rma -t fadd_lat (8 B, wait)       ucx_perftest -t ucp_fadd -s 8
#   put_bw    tern_rma -t put_bw (64 puts + flush)   ucx_perftest -t ucp_put_bw
#
# Only the tests whose semantics match: ucx_perftest's ucp_put_lat is a
# ping-pong of puts polled in memory, tern_rma's put_lat a put made remotely
# complete by a flush, so neither is compared with the other.  tern's region
# is allocated (--region alloc: the peer maps it, the direct path) unless
# --region create.  Prints every command, writes
# bench-results/rma_compare-<date>.json; asserts nothing about speed.
#
# --verbs: both sides are tern_rma over the verbs netmod on tests/ibloop (the
# build's loopback device, netmods/verbs/test.env; region created; for
# fadd_lat with --amo device: one RDMA fetch-and-add each), its puts, gets
# and atomics as RDMA writes, reads and atomics of its own ("tern") against the
# same with TERN_VERBS_RMA=0 ("packets": the target's progress applies
# them); put_lat and get_lat join the tests, and the table adds the device
# calls per iteration (verbs.post_send).  UCX cannot run on ibloop (issue 26).
#
# --cma: both sides are tern_rma over shm on a created region, its puts and
# gets by the same-host copy ("tern": one process_vm_writev / _readv each)
# against the same with TERN_CMA=off ("packets": the target's progress
# applies them); put_lat joins the tests (fadd_lat takes the same path in
# both: a control).

set -u -o pipefail
# shellcheck source=bench/compare_lib.sh
. "$(dirname "$0")/compare_lib.sh"

usage() {
    cat <<EOF
usage: $0 [--builddir DIR] [--rounds N] [--region alloc|create] [--verbs | --cma] [--outdir DIR] [--keep]
EOF
}

CMDLINE="$0 $*"
BUILDDIR=${TERN_BUILDDIR:-$PWD}
ROUNDS=3
REGION=alloc
OUTDIR=bench-results
KEEP=0
VERBS=0
CMA=0
CMD_TIMEOUT=120
CORE_A=0
CORE_B=1
BW_SIZES="8 4096 65536 1048576 4194304"
LAT_ITERS=20000
BW_ITERS=200

is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) BUILDDIR=${2:?--builddir needs a directory}; shift ;;
    --rounds) ROUNDS=${2:-}; is_count "$ROUNDS" || { echo "$0: bad --rounds" >&2; exit 2; }; shift ;;
    --region) REGION=${2:-}; [[ $REGION == alloc || $REGION == create ]] ||
        { echo "$0: --region alloc or create" >&2; exit 2; }; shift ;;
    --outdir|--out) OUTDIR=${2:?$1 needs a directory}; shift ;;
    --keep) KEEP=1 ;;
    --verbs) VERBS=1; REGION=create ;;
    --cma) CMA=1; REGION=create ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$0: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done

missing=0
TERNRUN=$(find_prog ternrun) || { echo "$0: ternrun not found under $BUILDDIR or on PATH" >&2; missing=1; }
TERN_RMA=$(find_prog tern_rma) || { echo "$0: tern_rma not found under $BUILDDIR or on PATH" >&2; missing=1; }
PEER=ucx
if [ "$VERBS" = 1 ]; then
    PEER=packets
    VERBS_ENV=$(cd "$(dirname "$0")/.." && pwd)/netmods/verbs/test.env
    [ -e "$BUILDDIR/tests/ibloop/.libs/libibverbs.so.1" ] ||
        { echo "$0: --verbs: $BUILDDIR/tests/ibloop/.libs/libibverbs.so.1 not built (make check builds it)" >&2; missing=1; }
elif [ "$CMA" = 1 ]; then
    PEER=packets
else
    UCX=$(command -v ucx_perftest) || { echo "$0: ucx_perftest not found (Debian: ucx-utils)" >&2; missing=1; }
fi
for p in timeout awk ss; do
    command -v $p >/dev/null || { echo "$0: $p not found" >&2; missing=1; }
done
[ "$missing" = 0 ] || exit 2

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-rma-compare.XXXXXX") || exit 1
SERVER_PID=
cleanup() {
    stop_server
    if [ "$KEEP" = 1 ]; then echo "# logs kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
SAMPLES=$WORK/samples.tsv # tool <TAB> test <TAB> size <TAB> round <TAB> value
COMMANDS=$WORK/commands.txt
: >"$SAMPLES"
: >"$COMMANDS"
FAILURES=0
NRUN=0
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$SAMPLES"; }

# tern_one TEST SIZES ITERS ROUND [TOOL]: one launch, a row per size (TOOL
# tern, or packets: over verbs with TERN_VERBS_RMA=0); with --verbs the
# device calls per iteration too (TOOL-posts)
tern_one() {
    local test=$1 sizes=$2 iters=$3 round=$4 tool=${5:-tern} log s
    log=$WORK/$tool-$test-$round.log
    local lo=${sizes%% *} hi=${sizes##* }
    local envs=()
    [ "$tool" = packets ] && envs=(TERN_VERBS_RMA=0)
    [ "$tool" = packets ] && [ "$CMA" = 1 ] && envs=(TERN_CMA=off)
    if [ "$VERBS" = 1 ]; then
        # shellcheck disable=SC1090
        # fetch-and-add on a device-atomics region: one RDMA atomic each
        # (packets: TERN_VERBS_RMA=0 registers nothing, the target's CPU adds)
        local amo=
        [ "$test" = fadd_lat ] && amo=device
        run "$log" env "${envs[@]}" sh -c 'cd "$1" && set -a && . "$2" && set +a &&
            TERN_NETMODS=verbs exec "$3" -n 2 --bind-to core "$4" --region create -t "$5" \
            -m "$6" -i "$7" ${8:+--amo "$8"}' sh "$BUILDDIR" "$VERBS_ENV" "$TERNRUN" "$TERN_RMA" \
            "$test" "$lo:$hi" "$iters" "$amo" || return 1
    else
        run "$log" env "${envs[@]}" TERN_NETMODS=shm "$TERNRUN" -n 2 --bind-to core "$TERN_RMA" \
            --region "$REGION" -t "$test" -m "$lo:$hi" -i "$iters" || return 1
    fi
    for s in $sizes; do
        local v p
        v=$(awk -v s="$s" '$1 == s { print $2 }' "$log")
        [[ $v =~ ^[0-9.]+$ ]] || { fail "tern_rma $test printed no figure for $s"; return 1; }
        record "$tool" "$test" "$s" "$round" "$v"
        p=$(awk -v s="$s" '$1 == s { print $6 }' "$log")
        [ "$VERBS" = 1 ] && [[ $p =~ ^[0-9.]+$ ]] && record "$tool-posts" "$test" "$s" "$round" "$p"
    done
}

# ucx_one TEST UCXTEST SIZE ITERS ROUND: one server and client (the client
# connects to 127.0.0.1; the server exits after its one client)
ucx_one() {
    local test=$1 utest=$2 size=$3 iters=$4 round=$5 port log final v i
    port=$(free_port) || { fail "no free TCP port for ucx_perftest"; return 1; }
    log=$WORK/ucx-$test-$size-$round.log
    echo "+ $UCX -c $CORE_B -p $port &"
    echo "$UCX -c $CORE_B -p $port &" >>"$COMMANDS"
    timeout "$CMD_TIMEOUT" "$UCX" -c "$CORE_B" -p "$port" >"$WORK/ucx-server.log" 2>&1 &
    SERVER_PID=$!
    for i in $(seq 1 100); do
        [ -n "$(ss -Htln "sport = :$port" 2>/dev/null)" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    run "$log" "$UCX" 127.0.0.1 -p "$port" -c "$CORE_A" -t "$utest" -s "$size" -n "$iters" \
        -w $((iters / 10))
    local rc=$?
    for i in $(seq 1 40); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.05; done
    stop_server
    [ $rc -eq 0 ] || return 1
    # Final: iters lat50 lat_avg lat_overall bw_avg bw_overall rate_avg rate_overall
    final=$(grep '^Final:' "$log" | tail -n 1)
    case $test in
    put_bw) v=$(awk '{ printf "%.2f\n", $7 * 1.048576 }' <<<"$final") ;; # MiB/s -> MB/s
    *) v=$(awk '{ print $5 }' <<<"$final") ;;
    esac
    [[ $v =~ ^[0-9.]+$ ]] || { fail "unreadable Final: line from ucx_perftest $utest: $final"; return 1; }
    record ucx "$test" "$size" "$round" "$v"
}

run_tool() {
    local tool=$1 round=$2 s
    if [ "$VERBS" = 1 ] || [ "$CMA" = 1 ]; then
        tern_one put_lat 8 "$LAT_ITERS" "$round" "$tool"
        tern_one get_lat 8 "$LAT_ITERS" "$round" "$tool"
        tern_one fadd_lat 8 "$LAT_ITERS" "$round" "$tool"
        tern_one put_bw "$BW_SIZES" "$BW_ITERS" "$round" "$tool"
    elif [ "$tool" = tern ]; then
        tern_one get_lat 8 "$LAT_ITERS" "$round"
        tern_one fadd_lat 8 "$LAT_ITERS" "$round"
        tern_one put_bw "$BW_SIZES" "$BW_ITERS" "$round"
    else
        ucx_one get_lat ucp_get 8 "$LAT_ITERS" "$round"
        ucx_one fadd_lat ucp_fadd 8 "$LAT_ITERS" "$round"
        for s in $BW_SIZES; do ucx_one put_bw ucp_put_bw "$s" "$BW_ITERS" "$round"; done
    fi
}

DATE=$(date +%Y-%m-%dT%H:%M:%S%z)
STAMP=$(date +%Y%m%d-%H%M%S)
if [ "$VERBS" = 1 ]; then
    echo "# tern rma_compare --verbs: $ROUNDS interleaved rounds, tern_rma over verbs on ibloop, RDMA (tern) vs packets (TERN_VERBS_RMA=0), $(hostname), $DATE"
elif [ "$CMA" = 1 ]; then
    echo "# tern rma_compare --cma: $ROUNDS interleaved rounds, tern_rma over shm on a created region, the same-host copy (tern) vs packets (TERN_CMA=off), $(hostname), $DATE"
else
    echo "# tern rma_compare: $ROUNDS interleaved rounds, tern_rma (--region $REGION) vs ucx_perftest, $(hostname), $DATE"
fi
busy_before
for r in $(seq 1 "$ROUNDS"); do
    echo "# ---- round $r of $ROUNDS"
    order="tern $PEER"
    [ $((r % 2)) = 1 ] || order="$PEER tern"
    for tool in $order; do run_tool "$tool" "$r"; done
done
echo "# CPU busy after the runs: $(cpu_busy)%"

TESTS="get_lat fadd_lat put_bw"
[ "$VERBS" = 1 ] || [ "$CMA" = 1 ] && TESTS="put_lat $TESTS"
SIZE_LIST=$(cut -f3 "$SAMPLES" | sort -n | uniq | tr '\n' ' ')
STATS=$WORK/stats.txt
sweep_stats "$SAMPLES" "tern $PEER tern-posts $PEER-posts" "$TESTS" "$SIZE_LIST" "tern:$PEER" >"$STATS"
declare -A MED RR
sweep_read "$STATS"
fmt() { awk -v v="$1" 'BEGIN { if (v == "nan" || v == "") print "-"; else printf "%.3f\n", v }'; }
echo
echo "# Medians of $ROUNDS rounds; ratio = median of the per-round tern / $PEER ratios"
echo "# (latency in us: < 1 favours tern; bandwidth in MB/s: > 1 favours tern)"
if [ "$VERBS" = 1 ]; then
    echo "# posts: ibv_post_send calls per iteration at the origin (put_bw: 64 puts per iteration)"
    printf '# %-9s %-9s %14s %14s %9s %11s %13s\n' test size tern packets ratio tern-posts packets-posts
else
    printf '# %-9s %-9s %14s %14s %9s\n' test size tern "$PEER" ratio
fi
for t in $TESTS; do
    for s in $SIZE_LIST; do
        [ "${MED[tern.$t.$s]:-nan}${MED[$PEER.$t.$s]:-nan}" != nannan ] || continue
        if [ "$VERBS" = 1 ]; then
            printf '  %-9s %-9s %14s %14s %9s %11s %13s\n' "$t" "$s" "$(fmt "${MED[tern.$t.$s]}")" \
                "$(fmt "${MED[$PEER.$t.$s]}")" "$(ratio_fmt "${RR[tern.$PEER.$t.$s]}")" \
                "$(fmt "${MED[tern-posts.$t.$s]:-}")" "$(fmt "${MED[$PEER-posts.$t.$s]:-}")"
        else
            printf '  %-9s %-9s %14s %14s %9s\n' "$t" "$s" "$(fmt "${MED[tern.$t.$s]}")" \
                "$(fmt "${MED[$PEER.$t.$s]}")" "$(ratio_fmt "${RR[tern.$PEER.$t.$s]}")"
        fi
    done
done

mkdir -p "$OUTDIR" || exit 1
OUT=$OUTDIR/rma_compare-$STAMP.json
{
    echo "{"
    echo "  \"tool\": \"rma_compare.sh\","
    echo "  \"date\": $(json_str "$DATE"),"
    echo "  \"hostname\": $(json_str "$(hostname)"),"
    echo "  \"command_line\": $(json_str "$CMDLINE"),"
    echo "  \"rounds\": $ROUNDS,"
    echo "  \"region\": $(json_str "$REGION"),"
    echo "  \"peer\": $(json_str "$PEER"),"
    echo "  \"results\": ["
    rows=()
    for t in $TESTS; do
        for s in $SIZE_LIST; do
            [ "${MED[tern.$t.$s]:-nan}${MED[$PEER.$t.$s]:-nan}" != nannan ] || continue
            rows+=("    {\"test\": \"$t\", \"size\": $s, \"median\": {\"tern\": $(json_num "${MED[tern.$t.$s]}"), \"$PEER\": $(json_num "${MED[$PEER.$t.$s]}"), \"tern_posts\": $(json_num "${MED[tern-posts.$t.$s]:-}"), \"${PEER}_posts\": $(json_num "${MED[$PEER-posts.$t.$s]:-}")}, \"round_ratio_median_tern_over_$PEER\": $(json_num "${RR[tern.$PEER.$t.$s]}")}")
        done
    done
    for ((i = 0; i < ${#rows[@]}; i++)); do
        printf '%s%s\n' "${rows[i]}" "$([ $((i + 1)) -lt ${#rows[@]} ] && echo ,)"
    done
    echo "  ],"
    json_commands
    echo "}"
} >"$OUT"
echo "# wrote $OUT"
echo "# $NRUN launches, $FAILURES failure(s)"
[ "$FAILURES" = 0 ]
