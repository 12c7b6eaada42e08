#!/bin/bash
# tern under Slurm's `srun --mpi=pmix` on a one-node cluster of the test's
# own (tests/slurm/lib.sh: its own munged, slurmctld and slurmd, torn down
# by pid).  In that one cluster:
#  1. the engine suite (engine_tests all) at 2 and at 4 ranks over shm, each
#     rank passing every case; Slurm's PMIx server has no name service, so
#     the pubsub case expects TERN_ERR_UNSUPPORTED (TERN_TEST_NO_NAME_SERVICE);
#     more ranks than CPUs: one oversubscription note, none otherwise
#  2. tern_spawn is refused: TERN_ERR_UNSUPPORTED with a message naming
#     PMIx_Spawn, the job and Slurm's answer (slurm_probe spawn), and the
#     job goes on
#  3. a rank SIGKILLed mid-transfer (engine_tests peer_killed): its peer's
#     send and receive end with TERN_ERR_PEER_FAILED before Slurm kills the
#     step, and srun ends, non-zero (within sl_srun's bound, $SL_TIMEOUT s)
#  4. the MPI programs of tests/mpi (built with ternmpicc) at 4 ranks
#  5. IOF as srun gives it (docs/launchers.md): every byte of each rank's
#     stdout and stderr arrives, on its own stream; with --label every piece
#     srun forwards is labelled with its task, and a task's pieces put
#     together are exactly what it wrote, in order (srun keeps no line
#     whole: see lib.sh); stdin goes to every task by default, to task 0
#     alone with --input=0
# The checks run one after the other and all are reported; the test fails
# if any failed.  4 ranks on this 2-CPU machine need srun -O (overcommit).
. "${srcdir:-.}/tests/slurm/lib.sh"
ENGINE_TESTS=${ENGINE_TESTS:-./tests/engine_tests}
PROBE=./tests/slurm/slurm_probe
WRITER=./tests/iof/iof_writer
for p in "$ENGINE_TESTS" "$PROBE" "$WRITER" ./ternmpicc ./ternmpicxx; do
    [ -x "$p" ] || sl_fail "$p not built"
done
sl_skip_unless_slurm
sl_up_one
out=$SL_DIR/out
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# 1. the engine suite over shm
suite() {
    local np=$1 rc
    shift
    TERN_NETMODS=shm TERN_TEST_NETMOD=shm TERN_TEST_NO_NAME_SERVICE=1 \
        sl_srun -n "$np" "$@" -- "$ENGINE_TESTS" all >"$out" 2>&1
    rc=$?
    cat "$out"
    [ "$rc" -ne 124 ] || { fail "suite, $np ranks: srun did not end within $SL_TIMEOUT s"; return; }
    [ "$rc" -eq 0 ] || { fail "suite, $np ranks: srun exited $rc"; return; }
    mn_check_suite "$out" "$np" "suite, $np ranks over shm" || failures=$((failures + 1))
    # more ranks than the CPUs of the node's cpuset: one note for the node
    # and idle waits that block (issue 21, defect 8); otherwise no note
    local notes want=0
    notes=$(grep -c 'note: .* oversubscribed' "$out")
    [ "$np" -gt "$(nproc)" ] && want=1
    [ "$notes" -eq "$want" ] ||
        fail "suite, $np ranks on $(nproc) CPUs: $notes oversubscription notes, expected $want"
}
echo "=== 1. the engine suite at 2 and 4 ranks over shm"
suite 2
suite 4 -O

# 2. tern_spawn
echo "=== 2. tern_spawn under srun"
sl_srun -n 2 -- "$PROBE" spawn >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || fail "spawn: srun exited $rc"
grep -q '^ok spawn refused: tern_spawn of 2 x .*PMIx_Spawn.*NOT-SUPPORTED' "$out" ||
    fail "spawn: no 'ok spawn refused' line naming PMIx_Spawn and NOT-SUPPORTED"
[ "$(grep -c '^ok rank [01] of 2$' "$out")" -eq 2 ] || fail "spawn: the ranks did not both go on"

# 3. a rank killed
echo "=== 3. a rank SIGKILLed mid-transfer"
# Slurm's PMIx plugin SIGKILLs the whole step once it loses a rank's PMIx
# connection (about 1 s after the death here): rank 0 must see the failure
# before that.  If Slurm's kill came first all the same (a loaded machine),
# rank 0 printed nothing: the case is run again, at most 3 times.
for attempt in 1 2 3; do
    start=$(date +%s)
    TERN_NETMODS=shm sl_srun -n 2 -- "$ENGINE_TESTS" peer_killed >"$out" 2>&1
    rc=$?
    end=$(date +%s)
    cat "$out"
    echo "srun exit status $rc, $((end - start)) s"
    if ! grep -q 'peer_killed: rank 0 saw' "$out" && grep -Eq 'tasks? 0(-1)?: Killed' "$out" &&
        [ "$attempt" -lt 3 ]; then
        echo "note: Slurm killed rank 0 before it reported: once more"
        continue
    fi
    [ "$rc" -ne 0 ] || fail "kill: srun exited 0 although rank 1 was killed"
    # a hang is caught by sl_srun's timeout (124); how long srun took is
    # printed above, not checked: a loaded machine stretches it
    [ "$rc" -ne 124 ] || fail "kill: srun did not end within $SL_TIMEOUT s"
    grep -q 'peer_killed: rank 0 saw peer process failed' "$out" ||
        fail "kill: rank 0 did not see TERN_ERR_PEER_FAILED"
    grep -q '^ok peer_killed (rank 0)' "$out" || fail "kill: rank 0's checks failed"
    break
done

# 4. MPI programs
echo "=== 4. the MPI programs of tests/mpi"
# the build tree's wrappers work uninstalled (ternmpicc -show)
progs="mpi_p2p mpi_p2p2 mpi_coll mpi_comm mpi_dtype mpi_nbc mpi_thread"
for prog in $progs; do
    # shellcheck disable=SC2086
    ./ternmpicc ${TERN_TEST_CFLAGS:--Wall -Werror} -O2 -I"${srcdir:-.}" \
        "${srcdir:-.}/tests/mpi/$prog.c" -o "$SL_DIR/$prog" || fail "ternmpicc $prog.c"
done
# shellcheck disable=SC2086
./ternmpicxx ${TERN_TEST_CXXFLAGS:--Wall -Werror} -O2 "${srcdir:-.}/tests/mpi/mpi_cxx.cc" \
    -o "$SL_DIR/mpi_cxx" || fail "ternmpicxx mpi_cxx.cc"
for prog in $progs mpi_cxx; do
    [ -x "$SL_DIR/$prog" ] || continue
    TERN_NETMODS=shm sl_srun -n 4 -O -- "$SL_DIR/$prog" >"$out" 2>&1
    rc=$?
    cat "$out"
    [ "$rc" -eq 0 ] || { fail "$prog, 4 ranks: srun exited $rc"; continue; }
    [ "$(grep -c '^ok rank' "$out")" -eq 4 ] || fail "$prog: not every rank said ok"
done

# 5. IOF
echo "=== 5. stdout, stderr and stdin through srun"
# what rank R writes, written outside any launcher (iof_writer takes its
# rank from PMIX_RANK)
N=20000
for r in 0 1 2 3; do
    PMIX_RANK=$r "$WRITER" both $N >"$SL_DIR/want.out.$r" 2>"$SL_DIR/want.err.$r"
done
# (a) without a label: each stream complete (the writer cuts its lines into
# write() calls on purpose)
sl_srun -n 4 -O -- "$WRITER" both $N >"$out" 2>"$out.err"
rc=$?
[ "$rc" -eq 0 ] || fail "iof: srun exited $rc: $(head -c 300 "$out.err")"
sl_iof_plain "$out" "$SL_DIR/want.out" R E 4 "iof stdout" || failures=$((failures + 1))
sl_iof_plain "$out.err" "$SL_DIR/want.err" E R 4 "iof stderr" || failures=$((failures + 1))
# (b) --label: every piece labelled with its task; each task's complete
sl_srun -n 4 -O --label -- "$WRITER" both $N >"$out" 2>"$out.err"
rc=$?
[ "$rc" -eq 0 ] || fail "iof --label: srun exited $rc: $(head -c 300 "$out.err")"
sl_iof_labelled "$out" "$SL_DIR/want.out" R 4 "iof --label stdout" || failures=$((failures + 1))
sl_iof_labelled "$out.err" "$SL_DIR/want.err" E 4 "iof --label stderr" || failures=$((failures + 1))
# (c) stdin: srun's default gives it to every task, --input=0 to task 0
head -c 1M /dev/urandom >"$SL_DIR/in.bin"
want=$(sha256sum <"$SL_DIR/in.bin")
# shellcheck disable=SC2016
SL_STDIN=$SL_DIR/in.bin sl_srun -n 2 -- sh -c 'cat >"$0/got.$PMIX_RANK"' "$SL_DIR"
rc=$?
[ "$rc" -eq 0 ] || fail "stdin: srun exited $rc"
for r in 0 1; do
    [ "$(sha256sum <"$SL_DIR/got.$r" 2>/dev/null)" = "$want" ] ||
        fail "stdin (srun's default: every task): task $r did not get the 1 MiB byte-exact"
done
rm -f "$SL_DIR"/got.*
# shellcheck disable=SC2016
SL_STDIN=$SL_DIR/in.bin sl_srun -n 2 --input=0 -- sh -c 'cat >"$0/got.$PMIX_RANK"' "$SL_DIR"
rc=$?
[ "$rc" -eq 0 ] || fail "stdin --input=0: srun exited $rc"
[ "$(sha256sum <"$SL_DIR/got.0" 2>/dev/null)" = "$want" ] ||
    fail "stdin --input=0: task 0 did not get the 1 MiB byte-exact"
[ -s "$SL_DIR/got.1" ] && fail "stdin --input=0: task 1 got stdin bytes"

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
