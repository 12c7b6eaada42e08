#!/bin/bash
# tern on 4 ranks across 2 namespace hosts (2 each) under Open MPI's mpirun:
# VCs inside a host use shm, across the hosts each inter-node netmod built
# in turn: tcp, then verbs (on the loopback device of tests/ibloop, whose
# fabric spans the namespaces: each namespace is a host with a LID of its
# own), then dpdk (net_af_packet on a veth pair of its own between the
# hosts, named tdpdk on both: each rank's port sees every frame of its
# host, the endpoint ids in the frames sort them), then dpdk
# over af_xdp ("dpdk-xdp": an XDP socket takes a queue of its own, so each rank has
# an interface of its own, txdp<local rank>, a veth whose other end is on
# its host's bridge; the bridges are joined by a veth pair between the
# hosts: four NICs on one switch).
#  1. mn_engine_probe vcs: each VC's netmod is exactly shm to the rank of the
#     same host and tcp to the two of the other, and 64 B (eager) and 1 MiB
#     (rendezvous) messages between every pair arrive intact;
#  2. the engine suite (engine_tests all) on the same 4 ranks;
#  3. (tcp) the engine's same-host copy across the hosts (TERN_CMA=all,
#     engine_tests cma between ranks 0 and 2): never offered, since rank 2's
#     address names another host (its network namespace), and the data
#     comes through tcp intact (no cma.* counter moves).
# Skips (77) until tern is built with a netmod that reaches another node
# (tern_info's "netmods:" line names tcp).
#
# The harness checks the VCs: TERN_TEST_NETMOD=shm,NETMOD with
# TERN_TEST_MIXED_EVERY_RANK (tests/multinode/lib.sh, mn_netmod_env, which
# also makes the dpdk media).  MN_NETMODS overrides the list of inter-node
# netmods ("tcp verbs dpdk dpdk-xdp").
. "${srcdir:-.}/tests/multinode/lib.sh"
ENGINE_TESTS=${ENGINE_TESTS:-./tests/engine_tests}
ENGINE_PROBE=${MN_ENGINE_PROBE:-./tests/multinode/mn_engine_probe}
TERN_INFO=${TERN_INFO:-./tern_info}
[ -x "$ENGINE_TESTS" ] || mn_fail "$ENGINE_TESTS not built"
[ -x "$TERN_INFO" ] || mn_fail "$TERN_INFO not built"
[ -x "$ENGINE_PROBE" ] || mn_fail "$ENGINE_PROBE not built"
netmods=$("$TERN_INFO" 2>/dev/null | sed -n 's/^netmods: *//p')
case " $(echo "$netmods" | tr -c 'a-z0-9\n' ' ') " in
*" tcp "*) ;;
*) mn_skip "no inter-node netmod built yet (tern_info: netmods: $netmods); the 2-host engine suite needs tcp" ;;
esac
mn_skip_unless_possible
mn_setup
MN_TIMEOUT=${MN_ENGINE_TIMEOUT:-120}
inter=${MN_NETMODS:-tcp $(case " $netmods " in *" verbs "*) echo verbs ;; esac) $(
    case " $netmods " in *" dpdk "*) echo dpdk dpdk-xdp ;; esac)}
out=$MN_DIR/out

# one_netmod NM: the probe and the suite with shm inside a host, NM across
one_netmod() {
    local nm=$1 rc
    mn_netmod_env "$nm" || exit 1
    echo "# shm inside the hosts, $nm across them"
    mn_mpirun 4 "$ENGINE_PROBE" vcs 2 >"$out" 2>&1
    rc=$?
    cat "$out"
    [ "$rc" -ne 124 ] || mn_fail "$nm: mn_engine_probe did not finish within $MN_TIMEOUT s"
    [ "$rc" -eq 0 ] || mn_fail "$nm: mn_engine_probe: mpirun exited $rc"
    mn_check_vcs "$out" 4 "$nm: mn_engine_probe vcs" || exit 1

    mn_mpirun 4 "$ENGINE_TESTS" all >"$out" 2>&1
    rc=$?
    cat "$out"
    if [ "$rc" -ne 0 ] && [ "$nm" = dpdk-xdp ]; then
        # the kernel's side of the ports: which interface dropped or stalled
        for ns in "$MN_NS1" "$MN_NS2"; do
            echo "# ip -s link in $ns"
            ip -n "$ns" -s link show 2>&1 | grep -A5 -E 'txdp|txl|txbr'
        done
    fi
    [ "$rc" -ne 124 ] || mn_fail "$nm: the suite did not finish within $MN_TIMEOUT s"
    [ "$rc" -eq 0 ] || mn_fail "$nm: engine suite: mpirun exited $rc"
    mn_check_suite "$out" 4 "$nm: engine suite, 4 ranks on 2 hosts, shm + $nm" || exit 1
    if [ "$nm" = tcp ]; then
        TERN_CMA=all TERN_CMA_THRESHOLD=64k TERN_TEST_CMA=none TERN_TEST_CMA_PEER=2 \
            mn_mpirun 4 "$ENGINE_TESTS" cma >"$out" 2>&1
        rc=$?
        cat "$out"
        [ "$rc" -eq 0 ] && [ "$(grep -c '^ok cma' "$out")" -eq 4 ] ||
            mn_fail "$nm: the same-host copy offered to another host: mpirun exited $rc"
    fi
    echo "$nm: all checks passed"
}

for nm in $inter; do
    (one_netmod "$nm") || exit 1
done
