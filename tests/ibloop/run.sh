#!/bin/sh
# ibloop's test suite (make check; runs from the top build directory).
#
#  1. the test binary, linked against the system -libverbs, must resolve
#     every ibv_* reference to a version node ibloop's libibverbs.so.1
#     defines, ibloop must export every public symbol of the system one and
#     every private one that the installed provider libraries reference;
#  2. all cases of ibloop_test (two processes each, fault injection
#     included), following mlx5 (the default), then a RoCE-mode run, an
#     rxe-mode run (IBLOOP_MODE=rxe), then two hosts in two network
#     namespaces (skipped, with the reason, when ip netns is unusable);
#  3. ibv_devinfo -v and rdma-core's ibv_{rc,srq,ud}_pingpong run on ibloop
#     as outside users (skipped when ibverbs-utils is not installed), and
#     libfabric's fi_info -l loads beside it (skipped without libfabric-bin),
#     and UCX's ucx_info -d lists its verbs transports on ibloop0 (libmlx5
#     loaded beside ibloop; skipped without ucx-utils);
#  4. nothing may be left in /dev/shm.
set -u

B=$(pwd)
LIBDIR=$B/tests/ibloop/.libs
LIB=$LIBDIR/libibverbs.so.1
T=$B/tests/ibloop/ibloop_test
SRCDIR=$(cd "$(dirname "$0")" && pwd)
FABRIC=check-$$
UID_=$(id -u)
fails=0

fail() { echo "FAIL $*"; fails=$((fails + 1)); }

[ -e "$LIB" ] || { echo "FAIL: $LIB not built"; exit 1; }
[ -x "$T" ] || { echo "FAIL: $T not built"; exit 1; }
export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_BIND_NOW=1
export IBLOOP_FABRIC=$FABRIC
unset IBLOOP_LINK_LAYER IBLOOP_DEBUG IBLOOP_FAULT_REG_FAIL_AFTER IBLOOP_FAULT_DROP_CQE \
    IBLOOP_FAULT_LINK_DOWN_AFTER IBLOOP_FAULT_LINK_DOWN_MS IBLOOP_FAULT_QP_FAIL_AFTER \
    IBLOOP_FAULT_NO_DEVICE IBLOOP_FAULT_DIE_IN_LOCK IBLOOP_TIMEOUT_MS

leftovers() { ls /dev/shm 2>/dev/null | grep "^ibloop-$UID_-$FABRIC" ; }

# ---- 1: symbols and version nodes ------------------------------------------------
if command -v objdump >/dev/null 2>&1; then
    dynsyms() { objdump -T "$1" | awk 'NF >= 2 && $NF ~ /^[A-Za-z_]/ && $(NF-1) ~ /IBVERBS/ {
        v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v, ($0 ~ /\*UND\*/ ? "U" : "D") }'; }
    dynsyms "$LIB" | awk '$2 == "D" {print $1}' | sort >ibloop-defs.tmp
    n=0
    for ref in $(dynsyms "$T" | awk '$2 == "U" {print $1}'); do
        n=$((n + 1))
        grep -qx "$ref" ibloop-defs.tmp || fail "symbols: the test binary needs $ref, ibloop lacks it"
    done
    [ "$n" -gt 10 ] || fail "symbols: only $n versioned ibv_* references found in $T"
    SYS=$(LD_LIBRARY_PATH= ldd "$T" | awk '/libibverbs.so.1/ {print $3}')
    if [ -n "$SYS" ] && [ -e "$SYS" ]; then
        # every default-version public symbol of the system library
        objdump -T "$SYS" | awk 'NF >= 2 && $(NF-1) ~ /^IBVERBS_1/ && $0 !~ /\*UND\*/ && $NF !~ /^IBVERBS/ {
            print $NF "@" $(NF-1) }' | sort >ibloop-sys.tmp
        for s in $(cat ibloop-sys.tmp); do
            grep -qx "$s" ibloop-defs.tmp || fail "symbols: system $SYS exports $s, ibloop does not"
        done
        # every private symbol the installed providers reference (libmlx5
        # through UCX and DPDK, libefa through libfabric): ibloop_private.c
        np=0
        for prov in "${SYS%/*}"/libmlx4.so.1 "${SYS%/*}"/libmlx5.so.1 "${SYS%/*}"/libefa.so.1 \
            "${SYS%/*}"/libibverbs/*.so; do
            [ -e "$prov" ] || continue
            for ref in $(dynsyms "$prov" | awk '$2 == "U" && $1 ~ /@IBVERBS_PRIVATE/ {print $1}'); do
                np=$((np + 1))
                grep -qx "$ref" ibloop-defs.tmp || fail "symbols: ${prov##*/} needs $ref, ibloop lacks it"
            done
        done
        [ -e "${SYS%/*}/libmlx5.so.1" ] && [ "$np" -lt 50 ] &&
            fail "symbols: only $np private references found in the providers"
    fi
    rm -f ibloop-defs.tmp ibloop-sys.tmp
    [ "$fails" -eq 0 ] && echo "ok symbols ($n references of the test binary resolve to ibloop)"
else
    echo "# skip symbols: objdump not found"
fi
RES=$(ldd "$T" | awk '/libibverbs.so.1/ {print $3}')
case "$RES" in
"$LIBDIR"/*) echo "ok loader picks $RES" ;;
*) fail "loader: libibverbs.so.1 resolves to '$RES', not ibloop" ;;
esac

# ---- 2: the cases ------------------------------------------------------------------
"$T" || fails=$((fails + 1))
[ -z "$(leftovers)" ] || fail "leftovers in /dev/shm after the cases: $(leftovers)"

echo "# RoCE mode (IBLOOP_LINK_LAYER=ethernet)"
IBLOOP_LINK_LAYER=ethernet IBLOOP_FABRIC=$FABRIC-roce "$T" rc_srq rc_sge rc_imm rdma_rw \
    srq_shared rem_access rnr no_answer peer_killed ud qp_states channel || fails=$((fails + 1))

# rxe's behaviour where it differs from mlx5 (error numbers, granted caps,
# MTU 1024, limits): the cases that see a difference, and the error paths
echo "# rxe mode (IBLOOP_MODE=rxe)"
IBLOOP_MODE=rxe IBLOOP_FABRIC=$FABRIC-rxe "$T" rc_srq rc_inline rc_signal rc_sge rdma_rw \
    rc_atomic rem_access loc_prot len_err rnr no_answer peer_killed cq_overflow ud qp_states ||
    fails=$((fails + 1))
[ -z "$(leftovers)" ] || fail "leftovers in /dev/shm after the rxe run: $(leftovers)"

# An ibloop built with sanitizers needs their runtimes first in the process.
PRE=""
for rt in $(ldd "$LIB" | awk '/lib(asan|ubsan)\.so/ {print $3}'); do
    PRE="$PRE${PRE:+:}$rt"
done
ext() { LD_PRELOAD="$PRE" ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 "$@"; }

NSA=ibloop-a-$$
NSB=ibloop-b-$$
netns_pingpong() {
    # rdma-core's ibv_rc_pingpong, one side per namespace under ip netns exec,
    # exchanging addresses over a veth pair: two hosts with two LIDs
    command -v ibv_rc_pingpong >/dev/null 2>&1 || { echo "# skip netns pingpong: no ibv_rc_pingpong"; return; }
    va=ibla$$ vb=iblb$$
    if ! ip link add "$va" type veth peer name "$vb" 2>/dev/null; then
        echo "# skip netns pingpong: cannot create a veth pair"
        return
    fi
    ip link set "$va" netns "$NSA" && ip link set "$vb" netns "$NSB" &&
        ip netns exec "$NSA" ip addr add 10.199.0.1/24 dev "$va" &&
        ip netns exec "$NSB" ip addr add 10.199.0.2/24 dev "$vb" &&
        ip netns exec "$NSA" ip link set "$va" up && ip netns exec "$NSB" ip link set "$vb" up ||
        { fail "netns pingpong: veth set-up"; return; }
    pport=$((20000 + ($$ + 7) % 20000))
    ext ip netns exec "$NSA" timeout 30 ibv_rc_pingpong -d ibloop0 -g 0 -n 100 -p $pport \
        >ibloop-pp-s.tmp 2>&1 &
    srv=$!
    ok=0
    for i in 1 2 3 4 5 6 7 8 9 10; do
        sleep 0.3
        if ext ip netns exec "$NSB" timeout 30 ibv_rc_pingpong -d ibloop0 -g 0 -n 100 \
            -p $pport 10.199.0.1 >ibloop-pp-c.tmp 2>&1; then
            ok=1
            break
        fi
    done
    wait $srv
    l1=$(awk '/local address/ {sub(",", "", $4); print $4}' ibloop-pp-c.tmp)
    l2=$(awk '/remote address/ {sub(",", "", $4); print $4}' ibloop-pp-c.tmp)
    if [ $ok = 1 ] && grep -q iters ibloop-pp-c.tmp && [ -n "$l1" ] && [ "$l1" != "$l2" ]; then
        echo "ok ibv_rc_pingpong across namespaces (LID $l1 <-> $l2)"
    else
        fail "ibv_rc_pingpong across namespaces:"
        sed 's/^/#   /' ibloop-pp-s.tmp ibloop-pp-c.tmp
    fi
    rm -f ibloop-pp-s.tmp ibloop-pp-c.tmp
}
if [ "$UID_" -ne 0 ]; then
    echo "# skip netns: creating network namespaces needs root"
elif ! command -v ip >/dev/null 2>&1; then
    echo "# skip netns: ip (iproute2) not found"
elif ! ip netns add "$NSA" 2>/dev/null; then
    echo "# skip netns: 'ip netns add' failed (no namespace support here?)"
else
    if ip netns add "$NSB"; then
        IBLOOP_TEST_NETNS_A=$NSA IBLOOP_TEST_NETNS_B=$NSB "$T" netns || fails=$((fails + 1))
        IBLOOP_LINK_LAYER=ethernet IBLOOP_FABRIC=$FABRIC-roce IBLOOP_TEST_NETNS_A=$NSA \
            IBLOOP_TEST_NETNS_B=$NSB "$T" netns || fails=$((fails + 1))
        netns_pingpong
        ip netns del "$NSB"
    else
        fail "netns: could not create a second namespace"
    fi
    ip netns del "$NSA"
fi

# ---- 3: outside users --------------------------------------------------------------
if command -v ibv_devinfo >/dev/null 2>&1; then
    if ext ibv_devinfo -v >ibloop-devinfo.tmp 2>&1 && grep -q "hca_id:.*ibloop0" ibloop-devinfo.tmp &&
        grep -q "PORT_ACTIVE" ibloop-devinfo.tmp; then
        echo "ok ibv_devinfo -v"
    else
        fail "ibv_devinfo -v:"; sed 's/^/#   /' ibloop-devinfo.tmp
    fi
    rm -f ibloop-devinfo.tmp
else
    echo "# skip ibv_devinfo: ibverbs-utils not installed"
fi

# libfabric loads beside ibloop (its libefa.so.1 links private verbs
# functions: ibloop_private.c), with every symbol bound at start-up: its
# programs, Open MPI's mtl ofi and tern's provider run on ibloop
if command -v fi_info >/dev/null 2>&1; then
    if ext timeout 30 fi_info -l >ibloop-fi.tmp 2>&1 && grep -q 'version:' ibloop-fi.tmp; then
        echo "ok fi_info -l loads libfabric beside ibloop"
    else
        fail "fi_info -l beside ibloop:"; sed 's/^/#   /' ibloop-fi.tmp
    fi
    rm -f ibloop-fi.tmp
else
    echo "# skip fi_info: libfabric-bin not installed"
fi

# UCX's transports on ibloop: libuct_ib links libmlx5.so.1 (which must load
# beside ibloop and find no mlx5 device), and UCX only lists a device whose
# /dev/infiniband node exists (devnode.sh adds one in a private namespace)
if command -v ucx_info >/dev/null 2>&1; then
    rc=0
    ext timeout 60 "$SRCDIR/devnode.sh" ucx_info -d >ibloop-ucx.tmp 2>&1 || rc=$?
    if [ $rc = 77 ]; then
        echo "# skip ucx_info: $(tail -1 ibloop-ucx.tmp)"
    elif [ $rc = 0 ] && grep -A2 'Transport: rc_verbs' ibloop-ucx.tmp | grep -q 'Device: ibloop0:1' &&
        grep -A2 'Transport: ud_verbs' ibloop-ucx.tmp | grep -q 'Device: ibloop0:1'; then
        echo "ok ucx_info -d lists rc_verbs and ud_verbs on ibloop0"
    else
        fail "ucx_info -d on ibloop:"; grep -iE 'ibloop|verbs|error|undefined' ibloop-ucx.tmp | sed 's/^/#   /'
    fi
    rm -f ibloop-ucx.tmp
else
    echo "# skip ucx_info: ucx-utils not installed"
fi

# TCP ports for the pingpongs' out-of-band exchange: below the kernel's
# ephemeral range (32768 and up), where a parallel test's connection or a
# ternrun's PMIx listener took 36292 once ("Couldn't listen to port");
# six per run, and a server that cannot listen moves on to the next block
port=$((20000 + ($$ % 1000) * 12))
for p in rc srq ud; do
    prog=ibv_${p}_pingpong
    if ! command -v $prog >/dev/null 2>&1; then
        echo "# skip $prog: ibverbs-utils not installed"
        continue
    fi
    for ev in "" -e; do
        for attempt in 1 2 3; do
            port=$((port + 1))
            ext timeout 30 $prog -d ibloop0 -g 0 -n 200 $ev -p $port >ibloop-pp-s.tmp 2>&1 &
            srv=$!
            ok=0
            for i in 1 2 3 4 5 6 7 8 9 10; do
                sleep 0.2
                if ext timeout 30 $prog -d ibloop0 -g 0 -n 200 $ev -p $port localhost \
                    >ibloop-pp-c.tmp 2>&1; then
                    ok=1
                    break
                fi
                grep -q "Couldn't connect" ibloop-pp-c.tmp || break
                grep -q "Couldn't listen" ibloop-pp-s.tmp && break
            done
            grep -q "Couldn't listen" ibloop-pp-s.tmp || break
            wait $srv
            port=$((port + 2)) # the port was taken: try the next ones
        done
        wait $srv && [ $ok = 1 ] && grep -q iters ibloop-pp-c.tmp &&
            echo "ok $prog $ev ($(grep iters ibloop-pp-c.tmp | sed 's/.*= //'))" ||
            { fail "$prog $ev:"; sed 's/^/#   /' ibloop-pp-s.tmp ibloop-pp-c.tmp; }
        rm -f ibloop-pp-s.tmp ibloop-pp-c.tmp
    done
done

# ---- 4: nothing left behind ---------------------------------------------------------
sleep 0.1
if [ -n "$(leftovers)" ]; then
    fail "leftovers in /dev/shm: $(leftovers)"
    for f in $(leftovers); do rm -f "/dev/shm/$f"; done
fi
[ "$fails" -eq 0 ] && echo "# ibloop: all passed" || echo "# ibloop: $fails failure(s)"
[ "$fails" -eq 0 ]
