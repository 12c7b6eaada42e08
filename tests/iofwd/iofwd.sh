#!/bin/sh
# iofwd end to end (issue 12): records of 0 .. 256 MiB written through the
# node's daemon and read back byte for byte, from 1 rank (no launcher: a
# standalone context), 2 and 8 ranks under ternrun and 2 under Open MPI's
# mpirun (with the job's tern context), blocking and polling, write and iwrite, per-rank files and one
# shared file; concurrent starters get one daemon.
. "${srcdir:-.}/tests/iofwd/lib.sh"
for spec in "0 3" "1 4" "4095 3" "4194305 3" "67108864 2" "268435456 1"; do
    # shellcheck disable=SC2086
    run $CLIENT "dir=$work/out" $spec || fail "1 rank, records of $spec"
    rm -f "$work/out/rank.0"
done
run $CLIENT --iwrite --poll "dir=$work/out" 3000017 9 || fail "iwrite, polling"
run "$TERNRUN" -n 2 $CLIENT --tern "dir=$work/out" 5000000 4 </dev/null || fail "2 ranks"
[ "$(grep -c '^ok rank' "$out")" -eq 2 ] || fail "2 ranks: not both ok"
run "$TERNRUN" -n 8 --bind-to none $CLIENT --tern --iwrite "dir=$work/out" 1000003 6 </dev/null \
    || fail "8 ranks"
[ "$(grep -c '^ok rank' "$out")" -eq 8 ] || fail "8 ranks: not all ok"
[ "$(sed -n 's/.*daemon pid \([0-9]*\)$/\1/p' "$out" | sort -u | wc -l)" -eq 1 ] \
    || fail "8 ranks of one node used more than one daemon"
run "$TERNRUN" -n 2 $CLIENT --tern "shared=$work/out/shared,region=67108864" 5000000 4 </dev/null \
    || fail "shared file"
# the daemon found on PATH (TERN_IOFWD unset)
(unset TERN_IOFWD; PATH=$(pwd):$PATH; run $CLIENT "dir=$work/out" 4096 2) || fail "daemon from PATH"
rm -f "$work/out/rank.0"
# under Open MPI's mpirun (its PMIx server; the ranks' own tern context)
MPIRUN_OMPI=${MPIRUN_OMPI:-mpirun.openmpi}
if command -v "$MPIRUN_OMPI" >/dev/null 2>&1; then
    mkdir "$work/ompi"
    run "$MPIRUN_OMPI" --allow-run-as-root --oversubscribe --bind-to none -n 2 \
        -x XDG_RUNTIME_DIR -x TERN_IOFWD $CLIENT --tern "dir=$work/ompi" 5000000 4 </dev/null \
        || fail "2 ranks under mpirun"
    [ "$(grep -c '^ok rank' "$out")" -eq 2 ] || fail "mpirun: not both ranks ok"
else
    echo "# no $MPIRUN_OMPI: the mpirun case is not run"
fi
# concurrent starters, no daemon running: one daemon for all of them
p=$(daemon_pid)
[ -n "$p" ] && { kill -9 "$p"; sleep 0.2; }
rm -f "$XDG_RUNTIME_DIR/tern-iofwd/port"
i=0
while [ $i -lt 8 ]; do
    mkdir -p "$work/c$i"
    timeout -k 5 60 $CLIENT "dir=$work/c$i" 65536 4 >"$work/c$i.out" 2>&1 &
    i=$((i + 1))
done
wait
cat "$work"/c*.out
[ "$(grep -l '^ok rank 0' "$work"/c*.out | wc -l)" -eq 8 ] || fail "concurrent starters failed"
[ "$(sed -n 's/.*daemon pid \([0-9]*\)$/\1/p' "$work"/c*.out | sort -u | wc -l)" -eq 1 ] \
    || fail "8 concurrent starters started more than one daemon"
echo "ok iofwd"
