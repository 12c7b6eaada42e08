#!/bin/bash
# 4 ranks on 2 namespace hosts (2 each) under Open MPI's mpirun: job size,
# local size, local peers = the ranks of the same host, node ids and host
# names equal exactly within a host, each rank in its host's network
# namespace, a collecting fence carries Put/Commit data across hosts, and
# every rank reaches every other one over TCP at the address it published.
. "${srcdir:-.}/tests/multinode/lib.sh"
PROBE=${MN_PROBE:-./tests/multinode/mn_probe}
[ -x "$PROBE" ] || mn_fail "$PROBE not built"
mn_skip_unless_possible
mn_setup
MN_TIMEOUT=60

out=$MN_DIR/out
start=$(date +%s)
mn_mpirun 4 "$PROBE" keys 2 >"$out" 2>&1
rc=$?
end=$(date +%s)
cat "$out"
echo "mpirun exit status $rc after $((end - start)) s"

[ "$rc" -ne 124 ] || mn_fail "mpirun did not finish within $MN_TIMEOUT s"
[ "$rc" -eq 0 ] || mn_fail "mpirun exited $rc"
! grep -q '^FAIL' "$out" || mn_fail "a rank's check failed"
for r in 0 1 2 3; do
    grep -q "^ok keys rank $r host $((r / 2)) " "$out" || mn_fail "no 'ok' line from rank $r on host $((r / 2))"
done
# the two hosts' ranks reported different node ids and cards on their own
# veth address
grep -q "^ok keys rank [01] .* card $MN_ADDR1:" "$out" || mn_fail "host 1's ranks did not publish $MN_ADDR1"
grep -q "^ok keys rank [23] .* card $MN_ADDR2:" "$out" || mn_fail "host 2's ranks did not publish $MN_ADDR2"
echo "all checks passed"
