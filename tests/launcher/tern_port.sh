#!/bin/sh
# Ports (tests/launcher/tern_port.c): a server started without a launcher (a
# singleton, as the iofwd daemon is) opens a port and writes its name to a
# file; the ranks of a ternrun job connect to it one by one (no collective),
# each sends a word and 1 MiB and checks the answer; the server takes
# exactly as many clients and disconnects them.  Over every built netmod
# that takes ports, alone (TERN_NETMODS): tcp and verbs (tests/ibloop) with
# 2 clients; dpdk on a shared medium (two net_tap ports joined by tc in a
# network namespace, as tests/engine/dpdk_tap.sh: root only) with 1.  dpdk
# on its per-peer memif (netmods/dpdk/test.env) refuses to open a port,
# naming why.  Server and clients share this host: over tcp and over dpdk
# the 1 MiB messages move by the engine's same-host copy (the server's
# cma.get_bytes counter shows them; verbs runs with its test.env's
# TERN_CMA=off, on RDMA); with the copy refused (the test hook, in the
# server) they come through the tcp stream, checked byte for byte all the
# same, and the refusal is named once.  A malformed port name is refused.
. "$(dirname "$0")/lib.sh"

PROG=./tests/launcher/tern_port
PORTFILE=$WORK/port
SRVOUT=$WORK/server.out
INFO=${TERN_INFO:-./tern_info}
built=$("$INFO" --netmods | sed -n 's/^netmods: \([^(]*\).*/\1/p' | head -1)
has() { case " $built " in *" $1 "*) return 0 ;; esac; return 1; }
# the server is not a launcher's child: no PMIX_* in its environment
noenv() { env $(env | sed -n 's/^\(PMIX_[A-Za-z0-9_]*\)=.*/-u \1/p') "$@"; }

# ports NETMOD CLIENTS [PREFIX...]: server and a job of CLIENTS ranks, both
# run under PREFIX (e.g. ip netns exec NS)
ports() {
    nm=$1 n=$2
    shift 2
    rm -f "$PORTFILE"
    TERN_NETMODS=$nm
    export TERN_NETMODS
    noenv "$@" timeout -k 5 90 "$PROG" server "$n" "$PORTFILE" >"$SRVOUT" 2>&1 &
    srv=$!
    T=90
    run_in "$@" -n "$n" "$PROG" client "$PORTFILE"
    unset TERN_NETMODS
    expect_rc 0 "$nm: $n clients through the port"
    r=0
    while [ "$r" -lt "$n" ]; do
        expect_out "^ok client $r via $nm\$" "$nm: client $r"
        r=$((r + 1))
    done
    wait $srv
    src=$?
    if [ "$src" -ne 0 ] || ! grep -q "^server took $n via $nm\$" "$SRVOUT"; then
        fail "$nm: server: status $src, $(cat "$SRVOUT")"
    fi
    if grep -q 'warning' "$SRVOUT"; then fail "$nm: server warned: $(cat "$SRVOUT")"; fi
    grep -q '^tern-port:2:' "$PORTFILE" || fail "$nm: port name: $(cat "$PORTFILE")"
    echo "# $nm: $(cat "$SRVOUT"); $(grep -c '^ok client' "$OUT") client(s) ok"
}
# run_in PREFIX... -n N ARGS: ternrun under PREFIX (none: as run)
run_in() {
    pre=""
    while [ $# -gt 0 ] && [ "$1" != "-n" ]; do pre="$pre $1"; shift; done
    # shellcheck disable=SC2086
    timeout -k 5 "$T" $pre "$TERNRUN" "$@" >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    [ "$RC" -ne 124 ] || fail "ternrun $* did not finish within $T s"
}

# cma_bytes: the server's cma.get_bytes
cma_bytes() { sed -n 's/^server .*cma.get_bytes=\([0-9]*\).*/\1/p' "$SRVOUT"; }

TERN_TCP_ADDRS=127.0.0.1
export TERN_TCP_ADDRS
ports tcp 2
[ "$(cma_bytes)" -ge 2097152 ] ||
    fail "tcp: the port peers' 1 MiB messages did not come by the same-host copy: $(cat "$SRVOUT")"
# the same with the copy refused by the server's kernel (the test hook)
rm -f "$PORTFILE"
noenv TERN_NETMODS=tcp TERN_FAULT_CMA_EPERM_AFTER=0 timeout -k 5 90 "$PROG" server 2 "$PORTFILE" \
    >"$SRVOUT" 2>&1 &
srv=$!
T=90
TERN_NETMODS=tcp
export TERN_NETMODS
run_in -n 2 "$PROG" client "$PORTFILE"
unset TERN_NETMODS
expect_rc 0 "tcp, the copy refused: 2 clients through the port"
wait $srv
src=$?
if [ "$src" -ne 0 ] || ! grep -q '^server took 2 via tcp$' "$SRVOUT"; then
    fail "tcp, the copy refused: server: status $src, $(cat "$SRVOUT")"
fi
[ "$(grep -c 'warning: CMA (process_vm_readv) with rank [0-9]* (pid [0-9]*) refused: Operation not permitted' "$SRVOUT")" -eq 1 ] ||
    fail "tcp: the refusal is not named once: $(cat "$SRVOUT")"
grep -q '^server .*cma.get_bytes=0 .*cma.refused=[1-9]' "$SRVOUT" ||
    fail "tcp: counters of the refused copy: $(cat "$SRVOUT")"
echo "# tcp, the copy refused: $(grep '^server' "$SRVOUT" | tr '\n' ' ')"
unset TERN_TCP_ADDRS
if has verbs; then
    (
        set -a
        . "${srcdir:-.}/netmods/verbs/test.env"
        set +a
        ports verbs 2
        [ "$failures" -eq 0 ]
    ) || failures=$((failures + 1))
fi
if has dpdk; then
    # memif, one link per pair: no port can be opened, and the server says why
    (
        set -a
        . "${srcdir:-.}/netmods/dpdk/test.env"
        set +a
        noenv TERN_NETMODS=dpdk timeout -k 5 60 "$PROG" server 1 "$PORTFILE" >"$SRVOUT" 2>&1
        rc=$?
        [ "$rc" -eq 1 ] && grep -q "tern_port_open: .*point-to-point device" "$SRVOUT"
    ) || fail "dpdk on memif: the port was not refused naming why: $(cat "$SRVOUT")"
    echo "# dpdk on memif: refused: $(sed -n 's/.*\(tern_port_open: no netmod.*\)/\1/p' "$SRVOUT" | head -1)"
    if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && command -v tc >/dev/null &&
        [ -c /dev/net/tun ]; then
        ns=tern-port-$$
        ip netns add "$ns" || fail "ip netns add $ns"
        trap 'ip netns del "$ns" 2>/dev/null; rm -rf "$WORK"' EXIT
        inns() { ip netns exec "$ns" "$@"; }
        inns ip link set lo up
        tap_ok=1
        for t in 0 1; do
            inns ip tuntap add dev "ptap$t" mode tap multi_queue && inns ip link set "ptap$t" up ||
                tap_ok=0
        done
        for t in 0 1; do
            inns tc qdisc add dev "ptap$t" ingress 2>/dev/null &&
                inns tc filter add dev "ptap$t" parent ffff: protocol all u32 match u32 0 0 \
                    action mirred egress redirect dev "ptap$((1 - t))" 2>/dev/null || tap_ok=0
        done
        if [ "$tap_ok" -eq 1 ]; then
            # the server's port on ptap0, the client's on ptap1
            rm -f "$PORTFILE"
            noenv TERN_NETMODS=dpdk TERN_DPDK_VDEV='net_tap0,iface=ptap0' \
                ip netns exec "$ns" timeout -k 5 90 "$PROG" server 1 "$PORTFILE" >"$SRVOUT" 2>&1 &
            srv=$!
            TERN_NETMODS=dpdk TERN_DPDK_VDEV='net_tap1,iface=ptap1'
            export TERN_NETMODS TERN_DPDK_VDEV
            T=90
            run_in ip netns exec "$ns" -n 1 "$PROG" client "$PORTFILE"
            unset TERN_NETMODS TERN_DPDK_VDEV
            expect_rc 0 "dpdk on net_tap: a client through the port"
            expect_out '^ok client 0 via dpdk$' "dpdk on net_tap: the client"
            wait $srv
            src=$?
            if [ "$src" -ne 0 ] || ! grep -q '^server took 1 via dpdk$' "$SRVOUT"; then
                fail "dpdk on net_tap: server: status $src, $(cat "$SRVOUT")"
            fi
            [ "$(cma_bytes)" -ge 1048576 ] ||
                fail "dpdk on net_tap: the port peer's 1 MiB did not come by the same-host copy"
            echo "# dpdk on net_tap: $(grep '^server' "$SRVOUT"); $(cat "$OUT")"
        else
            echo "# dpdk on net_tap skipped: no tap or tc mirred here"
        fi
        ip netns del "$ns"
    else
        echo "# dpdk on net_tap skipped: needs root, ip, tc and /dev/net/tun"
    fi
fi

# a name that is not a port's
echo "tern-port:9:nonsense" >"$PORTFILE"
T=30 run -n 1 "$PROG" client "$PORTFILE"
expect_rc 1 "a malformed port name"
expect_out 'tern_port_connect: .*is not a port name of this version' \
    "malformed name refused by name"

finish
