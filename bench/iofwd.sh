#!/usr/bin/env bash
# iofwd.sh — the I/O-forwarding daemon against writing directly (issue 12),
# in interleaved rounds: every round runs, in this order,
#   1 rank, records of SIZE into STORAGE (a disk-backed directory):
#       write() + fsync() | write() (page cache) | tern_io_write
#   2 ranks into tmpfs:  direct write() | tern_io_write
#   8 ranks into tmpfs:  direct write() | tern_io_write
#   the CMA get's own bandwidth: tern_bench -t bw -m SIZE, TERN_LMT_MODE=get
# and reports per-round ratios and their medians:
#   call time   time inside tern_io_write / inside write()+fsync() / write(),
#               over all records and for the first (the daemon's staging
#               pool empty: the pull alone; later ones wait for the writer)
#   aggregate   (bytes of all ranks / time to everything written), daemon vs
#               direct (the issue's target: >= 0.9)
#   pull rate   SIZE / time inside the first tern_io_write (1 rank, tmpfs) against the
#               CMA get bandwidth (shm, 2 ranks)
# Ranks sleep while they wait (TERN_WAIT_MODE=block) and are not bound, so
# the daemon's two threads (pulls, writer) get the cores.  Prints the
# commands, a table, and writes bench-results/iofwd-<date>.json (and .png
# when gnuplot exists).  Asserts nothing about speed.
set -u -o pipefail

ROUNDS=5
SIZE=$((64 << 20))
COUNT=4
STORAGE=/var/tmp
BUILDDIR=${TERN_BUILDDIR:-.}
OUTDIR=bench-results
usage() {
    cat <<EOF
usage: $0 [--builddir DIR] [--rounds R] [--size BYTES] [--count N] [--storage DIR]
  --builddir DIR  where ternrun, tern-iofwd, iofwd_bench, tern_bench are (default .)
  --rounds R      interleaved rounds (default $ROUNDS)
  --size BYTES    one record (default $SIZE)
  --count N       records per rank (default $COUNT)
  --storage DIR   disk-backed directory for the call-time comparison (default $STORAGE)
EOF
}
while [ $# -gt 0 ]; do
    case $1 in
    --builddir) BUILDDIR=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --count) COUNT=$2; shift 2 ;;
    --storage) STORAGE=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
TERNRUN=$BUILDDIR/ternrun
BENCH=$BUILDDIR/iofwd_bench
TERN_BENCH=$BUILDDIR/tern_bench
for p in "$TERNRUN" "$BENCH" "$TERN_BENCH" "$BUILDDIR/tern-iofwd"; do
    [ -x "$p" ] || { echo "$0: $p not built" >&2; exit 1; }
done
work=$(mktemp -d /dev/shm/tern-iofwd-bench.XXXXXX) || exit 1
disk=$(mktemp -d "$STORAGE/tern-iofwd-bench.XXXXXX") || exit 1
trap 'rm -rf "$work" "$disk"' EXIT
mkdir -m 700 "$work/run"
export XDG_RUNTIME_DIR=$work/run TERN_IOFWD=$BUILDDIR/tern-iofwd TERN_WAIT_MODE=block
mkdir -p "$OUTDIR"
stamp=$(date -u +%Y%m%d-%H%M%S)
json=$OUTDIR/iofwd-$stamp.json
raw=$work/raw.jsonl

# run NAME NP MODE DIR: one iofwd_bench launch, its JSON tagged with NAME
run() {
    local name=$1 np=$2 mode=$3 dir=$4 line
    rm -rf "${dir:?}"/*
    local cmd=("$TERNRUN" -n "$np" --bind-to none "$BENCH" "$mode" "$SIZE" "$COUNT" "$dir")
    echo "+ ${cmd[*]}" >&2
    line=$("${cmd[@]}" </dev/null | grep '^{') || { echo "$0: $name failed" >&2; exit 1; }
    echo "{\"round\": $r, \"case\": \"$name\", \"result\": $line}" >>"$raw"
    rm -rf "${dir:?}"/*
}
cma_bw() {
    local cmd=("$TERNRUN" -n 2 --bind-to core "$TERN_BENCH" -t bw -m "$SIZE:$SIZE")
    echo "+ TERN_LMT_MODE=get ${cmd[*]}" >&2
    local bw
    bw=$(TERN_LMT_MODE=get TERN_WAIT_MODE=yield "${cmd[@]}" </dev/null | awk '!/^#/ && NF == 2 {print $2}' | tail -1)
    [ -n "$bw" ] || { echo "$0: tern_bench failed" >&2; exit 1; }
    echo "{\"round\": $r, \"case\": \"cma_get\", \"result\": {\"MBps\": $bw}}" >>"$raw"
}
mkdir "$work/fs"
for r in $(seq 1 "$ROUNDS"); do
    run disk_fsync 1 fsync "$disk"
    run disk_write 1 direct "$disk"
    run disk_iofwd 1 iofwd "$disk"
    run tmpfs1_iofwd 1 iofwd "$work/fs"
    run tmpfs2_direct 2 direct "$work/fs"
    run tmpfs2_iofwd 2 iofwd "$work/fs"
    run tmpfs8_direct 8 direct "$work/fs"
    run tmpfs8_iofwd 8 iofwd "$work/fs"
    cma_bw
done

python3 - "$raw" "$json" "$SIZE" "$COUNT" "$STORAGE" <<'EOF'
import json, statistics, sys
raw, out, size, count, storage = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rows = [json.loads(l) for l in open(raw)]
by = {}
for x in rows:
    by.setdefault(x["round"], {})[x["case"]] = x["result"]
def med(f):
    v = [f(c) for c in by.values()]
    return statistics.median(v), min(v), max(v)
ratios = {
    "call: iofwd / (write+fsync), disk": lambda c: c["disk_iofwd"]["call_s"] / c["disk_fsync"]["call_s"],
    "call: iofwd / write (page cache), disk": lambda c: c["disk_iofwd"]["call_s"] / c["disk_write"]["call_s"],
    "first call: iofwd / (write+fsync), disk": lambda c: c["disk_iofwd"]["first_call_s"] / c["disk_fsync"]["first_call_s"],
    "first call: iofwd / write, disk": lambda c: c["disk_iofwd"]["first_call_s"] / c["disk_write"]["first_call_s"],
    "aggregate 2 ranks, tmpfs: iofwd / direct": lambda c: c["tmpfs2_iofwd"]["agg_MBps"] / c["tmpfs2_direct"]["agg_MBps"],
    "aggregate 8 ranks, tmpfs: iofwd / direct": lambda c: c["tmpfs8_iofwd"]["agg_MBps"] / c["tmpfs8_direct"]["agg_MBps"],
    "pull rate / CMA get bandwidth": lambda c: (size / c["tmpfs1_iofwd"]["first_call_s"] / 1e6) / c["cma_get"]["MBps"],
}
print(f"# iofwd.sh: {len(by)} interleaved rounds, records of {size} bytes, {count} per rank; "
      f"call times on {storage}, aggregates into tmpfs")
print(f"{'ratio (per round, then median)':44s} {'median':>8s} {'min':>8s} {'max':>8s}")
W = 44
summary = {}
for name, f in ratios.items():
    m, lo, hi = med(f)
    summary[name] = {"median": m, "min": lo, "max": hi}
    print(f"{name:44s} {m:8.3f} {lo:8.3f} {hi:8.3f}")
print("# medians of the figures behind them (absolute values swing between runs: compare ratios)")
for case in ["disk_fsync", "disk_write", "disk_iofwd", "tmpfs1_iofwd", "tmpfs2_direct",
             "tmpfs2_iofwd", "tmpfs8_direct", "tmpfs8_iofwd"]:
    m_call = statistics.median(c[case]["call_s"] for c in by.values()) * 1e3
    m_first = statistics.median(c[case]["first_call_s"] for c in by.values()) * 1e3
    m_agg = statistics.median(c[case]["agg_MBps"] for c in by.values())
    print(f"  {case:14s} call {m_call:9.2f} ms  first {m_first:9.2f} ms  aggregate {m_agg:9.1f} MB/s")
print(f"  cma_get        {statistics.median(c['cma_get']['MBps'] for c in by.values()):9.1f} MB/s")
json.dump({"size": size, "count": count, "storage": storage, "ratios": summary, "rounds": rows},
          open(out, "w"), indent=1)
print(f"# wrote {out}")
EOF
if command -v gnuplot >/dev/null 2>&1; then
    python3 - "$json" >"$work/plot.dat" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for i, (k, v) in enumerate(d["ratios"].items()):
    print(f'{i} "{k}" {v["median"]} {v["min"]} {v["max"]}')
EOF
    gnuplot <<EOF
set terminal png size 1000,500
set output "$OUTDIR/iofwd-$stamp.png"
set title "iofwd: ratios, medians of $ROUNDS interleaved rounds (bars: min..max)"
set style fill solid 0.5
set boxwidth 0.6
set yrange [0:*]
set xtics rotate by -20 font ",8"
plot "$work/plot.dat" using 1:3:xtic(2) with boxes notitle, \
     "" using 1:3:4:5 with yerrorbars notitle, 0.9 with lines title "0.9"
EOF
    echo "# wrote $OUTDIR/iofwd-$stamp.png"
fi
