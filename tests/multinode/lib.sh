# Multi-node test harness (sourced, bash).  Two network namespaces joined by
# a veth pair play two hosts; Open MPI's mpirun, started in host 1, reaches
# host 2 through an rsh agent that enters host 2's namespace.  Ranks on the
# same "host" share a node id (shm between them); the hosts see each other
# only through the veth addresses.
#
#   mn_skip_unless_possible   exit 77 with "SKIP: ..." where this cannot run
#   mn_setup                  create the hosts, the hostfile and the agent;
#                             installs the cleanup trap (always runs)
#   mn_skip_unless_netns      the same, for namespaces only (benchmarks)
#   mn_mpirun NP [OPTS --] PROG ARGS...
#                             run PROG on NP ranks, 2 per host (timeout
#                             $MN_TIMEOUT s); stdout/stderr are the ranks'
#   mn_mpirun_cmd NP [OPTS --] PROG ARGS...
#                             the same command into the array MN_CMD
#   mn_ns_pids N              pids running in host N's namespace
#   mn_netmod_env NM          the environment (and medium) for netmod NM
#                             between the hosts, shm inside each
#   mn_check_vcs OUT NP LABEL mn_engine_probe vcs's output: every rank ok
#   mn_check_suite OUT NP LABEL
#                             the engine suite's output: every rank passed
#                             the cases rank 0 passed, none failed
#   mn_await_posted JOB OUT NP PPN LABEL
#                             a job of a "hang" probe (mn_engine_probe,
#                             mn_probe) wired up and waiting: the victims
#   mn_kill_and_wait PID SECONDS VICTIMS...
#                             kill the victims, wait for the launcher
# The mn_check_* and mn_await_posted helpers print FAIL lines and return a
# status; they never exit, so that a caller may count failures and go on.
#
# After mn_setup: MN_NS1 MN_NS2 (namespace names), MN_IF1 MN_IF2 (veth ends),
# MN_ADDR1 MN_ADDR2 (their addresses), MN_DIR (temporary directory),
# MN_HOSTFILE, MN_AGENT.  The scripts run from the top build directory;
# $srcdir is the top source directory (automake sets it).
set -u

MPIRUN_OMPI=${MPIRUN_OMPI:-mpirun.openmpi}
MN_TIMEOUT=${MN_TIMEOUT:-180}
MN_SRCDIR=${srcdir:-.}/tests/multinode
MN_NS1="" MN_NS2="" MN_DIR=""

mn_skip() {
    echo "SKIP: $*"
    exit 77
}

mn_fail() {
    echo "FAIL: $*"
    exit 1
}

# exit 77 unless network namespaces and veth pairs can be created here
mn_skip_unless_netns() {
    local probe err
    command -v ip >/dev/null 2>&1 || mn_skip "no 'ip' command (Debian: iproute2)"
    command -v unshare >/dev/null 2>&1 || mn_skip "no 'unshare' command (Debian: util-linux)"
    [ -r "$MN_SRCDIR/rsh_agent.sh" ] || mn_fail "$MN_SRCDIR/rsh_agent.sh missing"
    probe=tnprobe-$$
    if ! err=$(ip netns add "$probe" 2>&1); then
        mn_skip "network namespaces cannot be created here ('ip netns add' failed: $err); needs root / CAP_SYS_ADMIN and CAP_NET_ADMIN"
    fi
    if ! err=$(ip -n "$probe" link add tnpa type veth peer name tnpb 2>&1); then
        ip netns del "$probe" 2>/dev/null
        mn_skip "veth pairs cannot be created here ('ip link add type veth' failed: $err)"
    fi
    if ! err=$(ip netns exec "$probe" unshare --uts hostname "$probe" 2>&1); then
        ip netns del "$probe" 2>/dev/null
        mn_skip "a namespace host cannot get its own hostname ('unshare --uts hostname' failed: $err)"
    fi
    ip netns del "$probe" 2>/dev/null || mn_fail "cannot remove the probe namespace $probe"
}

# ... and unless Open MPI's mpirun, the launcher of these tests, is there
mn_skip_unless_possible() {
    command -v "$MPIRUN_OMPI" >/dev/null 2>&1 ||
        mn_skip "$MPIRUN_OMPI not found: Open MPI's mpirun is the launcher here (Debian: openmpi-bin)"
    mn_skip_unless_netns
}

# mn_tree PID: PID and every process below it, children first
mn_tree() {
    local c
    for c in $(pgrep -P "$1" 2>/dev/null); do
        mn_tree "$c"
    done
    echo "$1"
}

# mn_kill_tree PID: SIGTERM PID and everything it started.  A launcher
# started with `... &` is a subshell above timeout above the launcher:
# signalling the subshell alone leaves timeout and the launcher running.
# The whole tree is listed before any is signalled, so nothing is
# reparented out of reach meanwhile; timeout passes the TERM on and
# SIGKILLs its child 5 s later (-k 5).
mn_kill_tree() {
    local pids
    pids=$(mn_tree "$1")
    # shellcheck disable=SC2086
    [ -n "$pids" ] && kill -TERM $pids 2>/dev/null
    return 0
}

# mn_kill_and_wait PID SECONDS VICTIMS...: SIGKILL the victims, then wait
# (bounded) for the launcher PID to end by itself.  Returns 1, having
# killed it and everything it started, if it still ran after SECONDS (a
# hang); prints the time it took.  The caller then reaps PID with wait.
mn_kill_and_wait() {
    local pid=$1 bound=$2 start end i
    shift 2
    start=$(date +%s.%N)
    kill -KILL "$@"
    for i in $(seq 1 $((bound * 10))); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    end=$(date +%s.%N)
    awk -v a="$start" -v z="$end" 'BEGIN { printf "the launcher ended %.1f s after the kill\n", z - a }'
    if kill -0 "$pid" 2>/dev/null; then
        mn_kill_tree "$pid"
        return 1
    fi
    return 0
}

mn_ns_exists() {
    ip netns list 2>/dev/null | awk '{ print $1 }' | grep -qxF -- "$1"
}

mn_ns_pids() {
    local ns
    if [ "$1" = 1 ]; then ns=$MN_NS1; else ns=$MN_NS2; fi
    [ -n "$ns" ] && ip netns pids "$ns" 2>/dev/null
}

# Kill what still runs in a namespace (bounded), then delete it; deleting
# either namespace destroys the veth pair.
mn_remove_ns() {
    local ns=$1 pids i
    mn_ns_exists "$ns" || return 0
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -z "$pids" ] && break
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null
        sleep 0.1
    done
    [ -z "$pids" ] || echo "WARNING: processes still in namespace $ns: $pids" >&2
    ip netns del "$ns" 2>/dev/null || echo "WARNING: could not delete namespace $ns" >&2
}

mn_cleanup() {
    local rc=$?
    trap - EXIT HUP INT QUIT TERM
    [ -n "$MN_NS1" ] && mn_remove_ns "$MN_NS1"
    [ -n "$MN_NS2" ] && mn_remove_ns "$MN_NS2"
    if [ -n "$MN_NS1" ]; then
        rm -rf "/etc/netns/$MN_NS1" "/etc/netns/$MN_NS2"
        rmdir /etc/netns 2>/dev/null # only when no other run uses it
    fi
    [ -n "$MN_DIR" ] && rm -rf "$MN_DIR"
    if [ -n "$MN_NS1" ] && { mn_ns_exists "$MN_NS1" || mn_ns_exists "$MN_NS2"; }; then
        echo "FAIL: namespace $MN_NS1 or $MN_NS2 left behind"
        [ "$rc" -eq 0 ] && rc=1
    fi
    exit "$rc"
}

# Is 10.213.$1.0/24 free: no address or route of the host's namespace in it,
# and no other run of these tests using it.
mn_subnet_free() {
    local net=10.213.$1 ns
    ip -4 addr show 2>/dev/null | grep -q "inet $net\." && return 1
    ip -4 route show 2>/dev/null | grep -v '^default' | grep -q "^$net\." && return 1
    for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^tnh[12]-/ { print $1 }'); do
        ip -n "$ns" -4 addr show 2>/dev/null | grep -q "inet $net\." && return 1
    done
    return 0
}

mn_setup() {
    local x i start
    trap mn_cleanup EXIT
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 131' QUIT
    trap 'exit 143' TERM

    MN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tern-mn.XXXXXX") || mn_fail "mktemp failed"
    start=$(($$ % 200))
    x=
    for i in $(seq 0 199); do
        if mn_subnet_free $(((start + i) % 200)); then
            x=$(((start + i) % 200))
            break
        fi
    done
    [ -n "$x" ] || mn_fail "no free /24 in 10.213.0.0/16 for the veth pair"
    MN_ADDR1=10.213.$x.1
    MN_ADDR2=10.213.$x.2
    MN_IF1=tv1-$$
    MN_IF2=tv2-$$
    # the names are set before the namespaces exist, so the trap removes
    # whatever part of the setup was made
    MN_NS1=tnh1-$$
    MN_NS2=tnh2-$$

    ip netns add "$MN_NS1" || mn_fail "ip netns add $MN_NS1"
    ip netns add "$MN_NS2" || mn_fail "ip netns add $MN_NS2"
    # created straight inside the namespaces: nothing in the host's namespace
    ip link add "$MN_IF1" netns "$MN_NS1" type veth peer name "$MN_IF2" netns "$MN_NS2" ||
        mn_fail "creating the veth pair $MN_IF1/$MN_IF2"
    ip -n "$MN_NS1" addr add "$MN_ADDR1/24" dev "$MN_IF1" &&
        ip -n "$MN_NS2" addr add "$MN_ADDR2/24" dev "$MN_IF2" &&
        ip -n "$MN_NS1" link set lo up &&
        ip -n "$MN_NS2" link set lo up &&
        ip -n "$MN_NS1" link set "$MN_IF1" up &&
        ip -n "$MN_NS2" link set "$MN_IF2" up || mn_fail "configuring the veth pair"

    # the link comes up asynchronously: wait (bounded) until both ends are
    # UP and host 1 gets an answer from host 2 (a refused TCP connection to
    # a port nothing listens on; only our own address is contacted)
    for i in $(seq 1 50); do
        if ip -n "$MN_NS1" -o link show dev "$MN_IF1" | grep -q 'state UP' &&
            ip -n "$MN_NS2" -o link show dev "$MN_IF2" | grep -q 'state UP' &&
            ip netns exec "$MN_NS1" timeout 2 bash -c "exec 3<>/dev/tcp/$MN_ADDR2/9" 2>&1 |
            grep -q 'refused'; then
            break
        fi
        if [ "$i" -eq 50 ]; then
            mn_fail "$MN_ADDR1 cannot reach $MN_ADDR2 over the veth pair"
        fi
        sleep 0.1
    done

    # Each host has its own name: `ip netns exec` bind-mounts
    # /etc/netns/NS/hosts over /etc/hosts inside the namespace (the host's
    # /etc/hosts is not touched), and the agent and mn_mpirun run in a UTS
    # namespace whose hostname is the namespace's name.  With one hostname
    # for both, PMIx on host 2 takes host 1's node for its own
    # (PMIX_LOCAL_PEERS '0,1' on host 2).
    for i in 1 2 3; do
        mkdir -p "/etc/netns/$MN_NS1" "/etc/netns/$MN_NS2" 2>/dev/null && break
        sleep 0.1
    done
    printf '127.0.0.1 localhost\n::1 localhost\n%s %s\n%s %s\n' \
        "$MN_ADDR1" "$MN_NS1" "$MN_ADDR2" "$MN_NS2" >"$MN_DIR/hosts" &&
        cp "$MN_DIR/hosts" "/etc/netns/$MN_NS1/hosts" &&
        cp "$MN_DIR/hosts" "/etc/netns/$MN_NS2/hosts" || mn_fail "writing /etc/netns/$MN_NS1/hosts"

    mkdir -p "$MN_DIR/tmp1" "$MN_DIR/tmp2"
    MN_HOSTFILE=$MN_DIR/hostfile
    printf '%s slots=2\n%s slots=2\n' "$MN_NS1" "$MN_NS2" >"$MN_HOSTFILE"
    # NAME NAMESPACE TMPDIR: the agent accepts a host's name or address
    printf '%s %s %s\n' \
        "$MN_NS1" "$MN_NS1" "$MN_DIR/tmp1" \
        "$MN_ADDR1" "$MN_NS1" "$MN_DIR/tmp1" \
        "$MN_NS2" "$MN_NS2" "$MN_DIR/tmp2" \
        "$MN_ADDR2" "$MN_NS2" "$MN_DIR/tmp2" >"$MN_DIR/hosts.map"
    MN_AGENT=$MN_DIR/rsh_agent.sh
    cp "$MN_SRCDIR/rsh_agent.sh" "$MN_AGENT" && chmod 755 "$MN_AGENT" || mn_fail "installing the agent"
    echo "hosts: $MN_NS1 ($MN_ADDR1 on $MN_IF1), $MN_NS2 ($MN_ADDR2 on $MN_IF2)"
}

# mn_mpirun NP [MPIRUN-OPTIONS... --] PROG ARGS...: Open MPI's mpirun in
# host 1, $MN_PPN (2) ranks per host unless the options bring their own
# placement (--rankfile / -rf).  Options start with "-" and end at "--".
mn_mpirun() {
    mn_mpirun_cmd "$@"
    printf '+' >&2
    printf ' %q' "${MN_CMD[@]}" >&2
    printf '\n' >&2
    # in the background, so that a signal to the script runs its trap (and
    # the cleanup) at once instead of after mpirun has ended
    "${MN_CMD[@]}" </dev/null &
    local job=$! rc wd
    mn_watchdog "$job" &
    wd=$!
    wait "$job"
    rc=$?
    kill "$wd" 2>/dev/null
    wait "$wd" 2>/dev/null
    return "$rc"
}

# mn_watchdog PID: 10 s before mn_mpirun's bound ends PID's job, print
# the stacks of every process running $MN_WATCH_PROG (the ranks, in both hosts: one
# PID namespace) to stderr, so a hang says where it hung.  gdb is one of
# quickstart's packages; each dump is itself bounded.
mn_watchdog() {
    local job=$1 name p
    name=$(basename "${MN_WATCH_PROG:-}")
    [ -n "$name" ] || return 0
    # the sleep in the background: mn_mpirun's kill ends it too (no orphan
    # left holding the caller's output open)
    sleep $((MN_TIMEOUT > 20 ? MN_TIMEOUT - 10 : MN_TIMEOUT / 2)) &
    p=$!
    trap 'kill $p 2>/dev/null; exit 0' TERM
    wait "$p"
    kill -0 "$job" 2>/dev/null || return 0
    command -v gdb >/dev/null || { echo "# watchdog: no gdb for the stacks" >&2; return 0; }
    for p in $(pgrep -x "${name:0:15}"); do
        echo "# watchdog: $name pid $p still running after $((MN_TIMEOUT - 10)) s; its stacks:" >&2
        timeout 20 gdb -p "$p" -batch -nx -ex 'set pagination off' \
            -ex 'thread apply all bt' 2>&1 | grep -E '^(Thread|#)' >&2
    done
}

# mn_mpirun_cmd NP [MPIRUN-OPTIONS... --] PROG ARGS...: mn_mpirun's command
# into the array MN_CMD, not run (bench/ofi_compare.sh runs it its way).  A
# variable the options pass as -x NAME=value is not passed again from the
# environment.
mn_mpirun_cmd() {
    local np=$1 v prog place=1
    local -a opts=()
    shift
    if [ "${1:0:1}" = - ]; then
        while [ $# -gt 0 ] && [ "$1" != -- ]; do
            case $1 in --rankfile | -rf) place=0 ;; esac
            opts+=("$1")
            shift
        done
        [ $# -gt 0 ] && shift
    fi
    # the ranks' LD_LIBRARY_PATH / LD_BIND_NOW (e.g. tests/ibloop, which may
    # be instrumented with ASan) are theirs only: -x NAME=value below, and
    # mpirun itself runs without them
    MN_CMD=(timeout -k 5 "$MN_TIMEOUT" env -u LD_LIBRARY_PATH -u LD_BIND_NOW
        ip netns exec "$MN_NS1" unshare --uts
        env TMPDIR="$MN_DIR/tmp1" MN_HOSTNAME="$MN_NS1"
        sh -c 'hostname "$MN_HOSTNAME" && unset MN_HOSTNAME && exec "$@"' mn_host1
        "$MPIRUN_OMPI" --allow-run-as-root --oversubscribe
        --hostfile "$MN_HOSTFILE" -n "$np")
    [ "$place" = 1 ] && MN_CMD+=(--map-by "ppr:${MN_PPN:-2}:node" --bind-to none)
    MN_CMD+=(--mca plm_rsh_agent "$MN_AGENT"
        --mca plm_rsh_no_tree_spawn 1
        --mca oob_tcp_if_include "$MN_IF1,$MN_IF2"
        -x PATH)
    # Open MPI's btl tcp (pml ob1 across the hosts: bench/ofi_compare.sh
    # --hosts) gets the veth pair's subnet: given the two interface names,
    # each host finds one of them missing, calls the list invalid and
    # disables the btl ("unreachable proc")
    MN_CMD+=(--mca btl_tcp_if_include "${MN_ADDR1%.*}.0/24")
    # openib (and its search for HCAs) is left out unless the options
    # choose the btls themselves
    [[ " ${opts[*]-} " == *" --mca btl "* ]] || MN_CMD+=(--mca btl ^openib)
    [ -n "${LD_LIBRARY_PATH:-}" ] && MN_CMD+=(-x "LD_LIBRARY_PATH=$LD_LIBRARY_PATH")
    [ -n "${LD_BIND_NOW:-}" ] && MN_CMD+=(-x "LD_BIND_NOW=$LD_BIND_NOW")
    for v in $(env | sed -n 's/^\(TERN_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(IBLOOP_[A-Z0-9_]*\)=.*/\1/p
                             s/^\([AUL]SAN_OPTIONS\)=.*/\1/p'); do
        [[ " ${opts[*]-} " == *" $v="* ]] || MN_CMD+=(-x "$v")
    done
    # the remote host starts in the same directory, but give it no chance to
    # resolve a relative program differently
    prog=$1
    shift
    case $prog in
    /*) ;;
    */*) prog=$(cd "$(dirname "$prog")" && pwd)/$(basename "$prog") ;;
    esac
    MN_CMD+=(${opts[@]+"${opts[@]}"} "$prog" "$@")
    MN_WATCH_PROG=$prog
}

# mn_netmod_env NM: export the environment of a job with shm inside the
# hosts and NM across them (run it in a subshell per netmod): TERN_NETMODS
# and TERN_TEST_NETMOD "shm,NM", TERN_TEST_MIXED_EVERY_RANK (every rank has
# one peer on its host and two on the other, so every rank must use both),
# netmods/NM/test.env without its one-host loopback (TERN_TCP_ADDRS: the
# hosts talk through their veths), and NM's medium between the hosts:
#   dpdk      net_af_packet on a veth pair of its own between the hosts,
#             named tdpdk on both (each rank's port sees every frame of its
#             host, the endpoint ids in the frames sort them)
#   dpdk-xdp  dpdk over af_xdp: an XDP socket takes a queue of its own, so
#             each rank has an interface of its own, txdp<local rank>, a
#             veth whose other end is on its host's bridge; the bridges are
#             joined by a veth pair between the hosts (four NICs on one
#             switch)
# Returns 1, with a FAIL line, if the medium cannot be made.
mn_netmod_env() {
    local nm=$1 ns l
    [ "$nm" = dpdk-xdp ] && nm=dpdk
    export TERN_NETMODS=shm,$nm TERN_TEST_NETMOD=shm,$nm TERN_TEST_MIXED_EVERY_RANK=1
    if [ -f "${srcdir:-.}/netmods/$nm/test.env" ]; then
        set -a
        . "${srcdir:-.}/netmods/$nm/test.env"
        set +a
    fi
    unset TERN_TCP_ADDRS
    case $1 in
    dpdk)
        if ! { ip link add tdpdk netns "$MN_NS1" type veth peer name tdpdk netns "$MN_NS2" &&
            ip -n "$MN_NS1" link set tdpdk up && ip -n "$MN_NS2" link set tdpdk up; }; then
            echo "FAIL: dpdk: creating the veth pair tdpdk between the hosts"
            return 1
        fi
        export TERN_DPDK_VDEV="net_af_packet%w,iface=tdpdk"
        ;;
    dpdk-xdp)
        if ! ip link add txl netns "$MN_NS1" type veth peer name txl netns "$MN_NS2"; then
            echo "FAIL: dpdk-xdp: creating the veth pair txl between the hosts"
            return 1
        fi
        for ns in "$MN_NS1" "$MN_NS2"; do
            if ! { ip -n "$ns" link add txbr type bridge &&
                ip -n "$ns" link set txl master txbr && ip -n "$ns" link set txl up; }; then
                echo "FAIL: dpdk-xdp: the bridge txbr in $ns"
                return 1
            fi
            for l in 0 1; do
                if ! { ip -n "$ns" link add "txdp$l" type veth peer name "txdp${l}p" &&
                    ip -n "$ns" link set "txdp${l}p" master txbr &&
                    ip -n "$ns" link set "txdp${l}p" up && ip -n "$ns" link set "txdp$l" up; }; then
                    echo "FAIL: dpdk-xdp: the interface txdp$l in $ns"
                    return 1
                fi
            done
            if ! ip -n "$ns" link set txbr up; then
                echo "FAIL: dpdk-xdp: txbr up in $ns"
                return 1
            fi
        done
        export TERN_DPDK_VDEV="net_af_xdp%w,iface=txdp%L,start_queue=0,queue_count=1"
        ;;
    esac
    return 0
}

# mn_check_vcs OUT NP LABEL: mn_engine_probe vcs's output has an "ok vcs"
# line from each of the NP ranks, rank r on host r / $MN_PPN (2): the
# probe printed it only if each VC's netmod was the expected one and every
# message arrived intact
mn_check_vcs() {
    local out=$1 np=$2 label=$3 ppn=${MN_PPN:-2} r bad=0
    for r in $(seq 0 $((np - 1))); do
        if ! grep -q "^ok vcs rank $r host $((r / ppn)): " "$out"; then
            echo "FAIL: $label: no 'ok vcs' line from rank $r (host $((r / ppn)))"
            bad=1
        fi
    done
    [ "$bad" = 0 ] && echo "$label: each VC of the $np ranks on the expected netmod, every message intact"
    return "$bad"
}

# mn_check_suite OUT NP LABEL: the engine suite's output (engine_tests
# all): no case failed, and every rank passed the same number of cases as
# rank 0, which passed some
mn_check_suite() {
    local out=$1 np=$2 label=$3 n0 r
    if grep -q '^not ok' "$out"; then
        echo "FAIL: $label: a case failed: $(grep '^not ok' "$out" | head -5 | tr '\n' ' ')"
        return 1
    fi
    n0=$(grep -c '^ok .* (rank 0)$' "$out")
    if [ "$n0" -eq 0 ]; then
        echo "FAIL: $label: rank 0 reported no case"
        return 1
    fi
    for r in $(seq 1 $((np - 1))); do
        if [ "$(grep -c "^ok .* (rank $r)\$" "$out")" -ne "$n0" ]; then
            echo "FAIL: $label: rank $r did not pass the $n0 cases rank 0 passed"
            return 1
        fi
    done
    echo "$label: $n0 engine cases passed on each of $np ranks"
}

# mn_await_posted JOB OUT NP PPN LABEL: JOB (a pid) is a launcher started in
# the background, its output going to OUT, of NP ranks of a program that
# prints "ready RANK PID" on every rank once wired up and "posted RANK" on
# every rank of host 1 (ranks 0 .. PPN-1) once what it waits on (requests
# on host 2's ranks, a fence) is posted (mn_engine_probe hang, mn_probe
# hang).  OUT must be emptied before JOB starts: JOB's shell truncates it
# only when it gets to run, and an earlier job's lines left in OUT would be
# read as this one's.  Waits, bounded (MN_TIMEOUT, 180 s, each), for the NP
# ready lines, then for the PPN posted lines, so that a kill of host 2's ranks lands while host 1's
# wait on them, and checks that rank r runs in host 1's namespace if
# r < PPN, in host 2's otherwise.  Returns
#   0  all so: MN_VICTIMS holds the pids of host 2's ranks
#   1  the job did not get so far: it is ended (its whole tree) and reaped,
#      its output printed, a FAIL line printed
#   2  as 0, but a rank runs in the wrong namespace (a FAIL line printed)
mn_await_posted() {
    local job=$1 out=$2 np=$3 ppn=$4 label=$5 r pid want posted bad=0
    MN_VICTIMS=""
    # bounded by the job's own limit, not a guess at how fast a loaded box starts it
    local limit=${MN_TIMEOUT:-180} deadline=$((SECONDS + ${MN_TIMEOUT:-180})) t0=$SECONDS rc
    while [ "$SECONDS" -lt "$deadline" ]; do
        [ "$(grep -c '^ready ' "$out")" -ge "$np" ] && break
        kill -0 "$job" 2>/dev/null || break
        sleep 0.1
    done
    if [ "$(grep -c '^ready ' "$out")" -lt "$np" ]; then
        local ended="ended by itself"
        kill -0 "$job" 2>/dev/null && ended="still running: ended here"
        mn_kill_tree "$job"
        wait "$job"
        rc=$?
        cat "$out"
        echo "FAIL: $label: the job did not start (not $np 'ready' lines; the launcher $ended" \
            "after $((SECONDS - t0)) s, exit status $rc, of a $limit s bound)"
        return 1
    fi
    deadline=$((SECONDS + limit))
    while [ "$SECONDS" -lt "$deadline" ]; do
        posted=0
        for r in $(seq 0 $((ppn - 1))); do
            grep -q "^posted $r\$" "$out" && posted=$((posted + 1))
        done
        [ "$posted" -eq "$ppn" ] && break
        kill -0 "$job" 2>/dev/null || break
        sleep 0.1
    done
    if [ "$posted" -lt "$ppn" ]; then
        mn_kill_tree "$job"
        wait "$job"
        cat "$out"
        echo "FAIL: $label: $posted of host 1's $ppn ranks said they posted their wait within $limit s"
        return 1
    fi
    for r in $(seq 0 $((np - 1))); do
        pid=$(awk -v r="$r" '$1 == "ready" && $2 == r { print $3; exit }' "$out")
        want=$MN_NS1
        [ "$r" -ge "$ppn" ] && want=$MN_NS2 && MN_VICTIMS="$MN_VICTIMS $pid"
        if [ "$(ip netns identify "$pid" 2>/dev/null)" != "$want" ]; then
            echo "FAIL: $label: rank $r (pid $pid) is not in namespace $want"
            bad=2
        fi
    done
    return "$bad"
}
