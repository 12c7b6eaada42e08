#!/bin/sh
# Every TERN_* setting that tern_info lists, at its minimum and its maximum
# (one at a time, the rest at their defaults; a netmod's settings over that
# netmod, with netmods/<name>/test.env): the engine's data cases
# either pass or tern_init rejects the combination with a message naming the
# variable.  Just outside the range and garbage are always rejected, by
# tern_info and by tern_init, naming the variable.  Built with ASan + UBSan
# (TERN_TEST_SANITIZED), the data case is `sizes` up to 1 MiB + 3 (each
# threshold's boundary of the defaults is below it), not all sizes and iov:
# the sweep is some 90 jobs.
. "${srcdir:-.}/tests/engine/lib.sh"
INFO=${TERN_INFO:-./tern_info}
out=$(mktemp)
params=$(mktemp)
"$INFO" --params >"$params" || fail "tern_info --params failed"
# numbers and enums (strings are checked by config_errors.sh); not the MPI
# layer's (tern_info's "## mpi" section): an engine test program does not
# load libtern-mpi, whose MPI_Init checks them (tests/mpi/settings.sh)
awk '/^## / { mpi = ($2 == "mpi") } !mpi' "$params" >"$params.nompi"
mv "$params.nompi" "$params"
nvars=$(awk '$1 ~ /^TERN_/ && $4 != "string"' "$params" | wc -l)
[ "$nvars" -ge 10 ] || fail "tern_info --params lists $nvars TERN_ settings"
done_vars=0
cases="sizes iov"
if [ -n "${TERN_TEST_SANITIZED:-}" ]; then
    cases=sizes
    TH_SIZES_MAX=1048579
    export TH_SIZES_MAX
fi
awk '$1 ~ /^TERN_/ && $4 != "string" {print $1, $4}' "$params" | while read -r var range; do
    lo=${range%%..*}
    hi=${range##*..}
    # a netmod's own settings run over that netmod (with its test.env)
    nm=
    case $var in TERN_VERBS_*) nm=verbs ;; TERN_TCP_*) nm=tcp ;; TERN_DPDK_*) nm=dpdk ;; esac
    for v in "$lo" "$hi"; do
        if (if [ -n "$nm" ]; then
                set -a; . "${srcdir:-.}/netmods/$nm/test.env"; set +a
                export TERN_NETMODS=$nm TERN_TEST_NETMOD=$nm
            fi
            export "$var=$v"; run_engine 2 "" $cases) >"$out" 2>&1; then
            echo "ok: $var=$v works"
        elif grep -q "tern_init: .*$var" "$out" &&
            ! grep -Eq "out of range|must be a power of two|not a non-negative" "$out"; then
            # a combination rule (fastbox larger than a cell), never the
            # single-value checks: min and max themselves are in range
            echo "ok: $var=$v rejected: $(grep -m1 "tern_init" "$out")"
        else
            cat "$out"; fail "$var=$v neither works nor is rejected naming $var"
        fi
    done
    case $hi in
    *[!0-9]*) bad=bogus ;;                      # an enum (wait mode)
    *) bad=$(awk -v h="$hi" 'BEGIN {printf "%.0f", h + 1}') ;;
    esac
    for v in "$bad" "12abc"; do
        env "$var=$v" "$INFO" >/dev/null 2>"$out" && fail "tern_info accepted $var=$v"
        grep -q "$var" "$out" || fail "tern_info's message for $var=$v does not name it"
        (export "$var=$v"; run_engine 2 "" self) >"$out" 2>&1 && fail "tern_init accepted $var=$v"
        grep -q "tern_init: .*$var" "$out" || { cat "$out"; fail "tern_init's message for $var=$v does not name it"; }
    done
    done_vars=$((done_vars + 1))
    echo "$done_vars" >"$out.count"
done || exit 1
[ "$(cat "$out.count" 2>/dev/null)" = "$nvars" ] ||
    fail "checked $(cat "$out.count" 2>/dev/null) of the $nvars settings"
rm -f "$out" "$out.count" "$params"
