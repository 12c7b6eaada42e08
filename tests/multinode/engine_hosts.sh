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
#  2. the engine suite (engine_tests all) on the same 4 ranks.
# Skips (77) until tern is built with a netmod that reaches another node
# (tern_info's "netmods:" line names tcp).
#
# The harness checks the VCs: TERN_TEST_NETMOD=shm,NETMOD with
# TERN_TEST_MIXED_EVERY_RANK (every rank has one peer on its host and two on
# the other, so every rank must use both).  MN_NETMODS overrides the list of
# inter-node netmods ("tcp verbs dpdk dpdk-xdp").
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
export TERN_TEST_MIXED_EVERY_RANK=1
inter=${MN_NETMODS:-tcp $(case " $netmods " in *" verbs "*) echo verbs ;; esac) $(
    case " $netmods " in *" dpdk "*) echo dpdk dpdk-xdp ;; esac)}
out=$MN_DIR/out

# one_netmod NM: the probe and the suite with shm inside a host, NM across
one_netmod() {
    local nm=$1 medium=
    [ "$nm" = dpdk-xdp ] && nm=dpdk medium=af_xdp
    export TERN_NETMODS=shm,$nm TERN_TEST_NETMOD=shm,$nm
    if [ -f "${srcdir:-.}/netmods/$nm/test.env" ]; then
        set -a
        . "${srcdir:-.}/netmods/$nm/test.env"
        set +a
    fi
    unset TERN_TCP_ADDRS # test.env's one-host loopback: the hosts talk through their veths
    if [ "$nm" = dpdk ] && [ -z "$medium" ]; then
        ip link add tdpdk netns "$MN_NS1" type veth peer name tdpdk netns "$MN_NS2" ||
            mn_fail "dpdk: creating the veth pair tdpdk"
        ip -n "$MN_NS1" link set tdpdk up && ip -n "$MN_NS2" link set tdpdk up ||
            mn_fail "dpdk: tdpdk up"
        export TERN_DPDK_VDEV="net_af_packet%w,iface=tdpdk"
    elif [ "$medium" = af_xdp ]; then
        ip link add txl netns "$MN_NS1" type veth peer name txl netns "$MN_NS2" ||
            mn_fail "dpdk-xdp: creating the veth pair txl"
        for ns in "$MN_NS1" "$MN_NS2"; do
            ip -n "$ns" link add txbr type bridge &&
                ip -n "$ns" link set txl master txbr &&
                ip -n "$ns" link set txl up || mn_fail "dpdk-xdp: bridge in $ns"
            for l in 0 1; do
                ip -n "$ns" link add "txdp$l" type veth peer name "txdp${l}p" &&
                    ip -n "$ns" link set "txdp${l}p" master txbr &&
                    ip -n "$ns" link set "txdp${l}p" up &&
                    ip -n "$ns" link set "txdp$l" up || mn_fail "dpdk-xdp: txdp$l in $ns"
            done
            ip -n "$ns" link set txbr up || mn_fail "dpdk-xdp: txbr up in $ns"
        done
        export TERN_DPDK_VDEV="net_af_xdp%w,iface=txdp%L,start_queue=0,queue_count=1"
        nm=dpdk-xdp
    fi
    echo "# shm inside the hosts, $nm across them"
    mn_mpirun 4 "$ENGINE_PROBE" vcs 2 >"$out" 2>&1
    rc=$?
    cat "$out"
    [ "$rc" -ne 124 ] || mn_fail "$nm: mn_engine_probe did not finish within $MN_TIMEOUT s"
    [ "$rc" -eq 0 ] || mn_fail "$nm: mn_engine_probe: mpirun exited $rc"
    for r in 0 1 2 3; do
        grep -q "^ok vcs rank $r host $((r / 2)): " "$out" ||
            mn_fail "$nm: no 'ok vcs' line from rank $r"
    done

    mn_mpirun 4 "$ENGINE_TESTS" all >"$out" 2>&1
    rc=$?
    cat "$out"
    if [ "$rc" -ne 0 ] && [ -n "$medium" ]; then
        # the kernel's side of the ports: which interface dropped or stalled
        for ns in "$MN_NS1" "$MN_NS2"; do
            echo "# ip -s link in $ns"
            ip -n "$ns" -s link show 2>&1 | grep -A5 -E 'txdp|txl|txbr'
        done
    fi
    [ "$rc" -ne 124 ] || mn_fail "$nm: the suite did not finish within $MN_TIMEOUT s"
    [ "$rc" -eq 0 ] || mn_fail "$nm: engine suite: mpirun exited $rc"
    ! grep -q '^not ok' "$out" || mn_fail "$nm: a case failed"
    n0=$(grep -c '^ok .* (rank 0)$' "$out")
    [ "$n0" -gt 0 ] || mn_fail "$nm: rank 0 reported no case"
    for r in 1 2 3; do
        [ "$(grep -c "^ok .* (rank $r)\$" "$out")" -eq "$n0" ] ||
            mn_fail "$nm: rank $r did not pass the $n0 cases rank 0 passed"
    done
    echo "$nm: all checks passed ($n0 engine cases on 4 ranks, 2 hosts, shm + $nm)"
}

for nm in $inter; do
    (one_netmod "$nm") || exit 1
done
