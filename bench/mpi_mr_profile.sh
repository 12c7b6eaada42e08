#!/bin/bash
# mpi_mr_profile.sh — where the receiving rank's time goes in the message
# rate test: tern's MPI layer (mpi_bench_tern) against tern's core
# (tern_bench), the same window of 64 messages, sampled by `perf record`.
#
# Both programs run `-t mr` at one size under `ternrun -n 2 --bind-to core`,
# each rank under its own perf record.  For each rank the script prints the
# share of the samples in each library (perf report --sort dso) and, for
# the MPI run, in the layer's own functions: the layer's share of the
# receiver's cycles is what the layer costs over the core, since the
# engine's work per message is the same under both.  A layer share of L
# bounds the layer's rate at about (1 - L) x the core's, whatever else is
# done: a 0.9 ratio needs L <= 0.1.  Shares, not times, so they can be
# quoted from one run; the rates printed beside them are this run's.
#
#   cd _build && ../bench/mpi_mr_profile.sh [--size BYTES] [--iters N] [--keep DIR]
#
# Needs perf (Debian: linux-perf) and perf_event_paranoid <= 1 or root.
# Asserts nothing; exits non-zero when a tool is missing or a run failed.
set -euo pipefail

SIZE=16
ITERS=300000
KEEP=
while [ $# -gt 0 ]; do
    case $1 in
    --size) SIZE=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "$0: unknown option $1" >&2; exit 2 ;;
    esac
done
for v in "$SIZE" "$ITERS"; do
    case $v in '' | *[!0-9]*) echo "$0: --size and --iters want numbers" >&2; exit 2 ;; esac
done
command -v perf >/dev/null || { echo "$0: perf not found (Debian: linux-perf)" >&2; exit 1; }
for f in ternrun tern_bench mpi_bench_tern; do
    [ -x "$f" ] || { echo "$0: ./$f not found: run from the build directory" >&2; exit 1; }
done

dir=${KEEP:-$(mktemp -d /tmp/tern-mr-profile.XXXXXX)}
mkdir -p "$dir"
[ -n "$KEEP" ] || trap 'rm -rf "$dir"' EXIT
# one perf record per rank, named by the rank ternrun gives it
cat >"$dir/rec.sh" <<'EOF'
#!/bin/sh
out=$1; shift
exec perf record -q -o "$out.$PMIX_RANK" -- "$@" 2>/dev/null
EOF
chmod +x "$dir/rec.sh"

run() { # label program
    local cmd=(./ternrun -n 2 --bind-to core "$dir/rec.sh" "$dir/$1" "./$2" -t mr
               -m "$SIZE:$SIZE" -q -i "$ITERS" -w 1000)
    echo "+ ${cmd[*]}"
    "${cmd[@]}" | tail -1 | awk -v l="$1" '{ printf "  %-5s %s B: %.4g msg/s\n", l, $1, $2 }'
}
run core tern_bench
run mpi mpi_bench_tern

share() { # perf file, sort key: "name percent" lines of the top entries
    perf report -i "$1" --no-children --sort "$2" --stdio 2>/dev/null |
        awk '/^ *[0-9.]+%/ { p = $1; sub("%", "", p); $1 = ""; sub(/^ +/, ""); print p "\t" $0 }'
}
for rank in 1 0; do
    role=receiver
    [ "$rank" = 1 ] || role=sender
    for l in core mpi; do
        f="$dir/$l.$rank"
        echo "# $l, rank $rank ($role): share of samples by library"
        share "$f" dso | head -6 | awk -F'\t' '{ printf "  %6.2f %%  %s\n", $1, $2 }'
        if [ "$l" = mpi ]; then
            layer=$(share "$f" dso,sym | awk -F'\t' '$2 ~ /libtern-mpi/ { s += $1 } END { printf "%.2f", s }')
            echo "  layer (libtern-mpi) total: $layer %; its largest functions:"
            share "$f" dso,sym | awk -F'\t' '$2 ~ /libtern-mpi/' | head -5 |
                awk -F'\t' '{ printf "  %6.2f %%  %s\n", $1, $2 }'
        fi
    done
done
[ -z "$KEEP" ] || echo "# perf data kept in $dir"
