#!/bin/sh
# tests/stacks.sh SECONDS PID: after SECONDS, if PID (a test's bounded
# command: timeout, ternrun, mpirun ...) still runs, print the stacks of
# every process below it (the launcher, its ranks, the jobs they spawned)
# to stderr, so that a hang in make check says where it hung.  Run in the
# background just before the bound's end; the caller kills it when PID
# ended first (TERM: its sleep goes with it, holding no output open).
# gdb is one of quickstart's packages; each dump is bounded.
secs=$1 top=$2
sleep "$secs" &
nap=$!
trap 'kill $nap 2>/dev/null; exit 0' TERM INT
wait "$nap"
kill -0 "$top" 2>/dev/null || exit 0
command -v gdb >/dev/null || { echo "# stacks: no gdb for the stacks" >&2; exit 0; }
# PID's descendants, parents before children
procs=$(ps -e -o pid=,ppid= | awk -v top="$top" '
    { parent[$1] = $2; order[NR] = $1 }
    END {
        keep[top] = 1
        for (changed = 1; changed;) {
            changed = 0
            for (i = 1; i <= NR; i++) {
                p = order[i]
                if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 }
            }
        }
        for (i = 1; i <= NR; i++) if (order[i] in keep && order[i] != top) print order[i]
    }')
for p in $procs; do
    exe=$(readlink "/proc/$p/exe" 2>/dev/null) || continue
    case $exe in */timeout | */sh | */dash | */bash | */sleep) continue ;; esac
    echo "# stacks: pid $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-160)) still running after $secs s:" >&2
    timeout 20 gdb -p "$p" -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' 2>&1 |
        grep -E '^(Thread|#)' >&2
done
exit 0
