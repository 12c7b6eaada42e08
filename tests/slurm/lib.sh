# Slurm test harness (sourced, bash): a Slurm cluster of the test's own,
# brought up from nothing in a scratch directory and torn down by pid, so
# that tern's ranks run under `srun --mpi=pmix` as on a real cluster.
# Nothing of the system's is used or touched (/etc/munge, /etc/slurm, a
# running munged or slurmd): the test makes its own munge key, runs its own
# munged on its own socket, and its slurmctld and slurmd on free ports
# with a cluster name, job ids, state, spool, TmpFS, pid and log files of
# their own.
#
#   sl_skip_unless_slurm    exit 77 with "SKIP: ..." where Slurm is not
#                           installed or cannot run here
#   sl_up_one               one node in this network namespace (127.0.0.1)
#   sl_up_two               two nodes in two network namespaces joined by a
#                           veth pair (tests/multinode/lib.sh's hosts), each
#                           slurmd with its own hostname; slurmctld and srun
#                           in the first.  Skips where namespaces cannot be
#                           made.
#   sl_srun [SRUN-OPTIONS...] -- PROG ARGS...
#                           srun --mpi=pmix PROG, bounded: timeout
#                           $SL_TIMEOUT s (exit 124) and srun's own --time and
#                           --wait; stdin from $SL_STDIN (default /dev/null)
#   sl_tagged_pids          pids of every process started for the cluster
#                           (the daemons, srun, slurmstepd, the ranks)
#   sl_iof_plain, sl_iof_labelled
#                           check srun's forwarded output (below)
#
# Both sl_up_* install the EXIT trap (sl_down): the daemons are stopped by
# their pids (SIGTERM, then SIGKILL, bounded), every process started for the
# cluster (found by a variable only they carry) is killed, the namespaces
# and the scratch directory are removed, and the test FAILS if a process of
# its cluster survives.  A daemon that cannot start makes the test SKIP
# with the reason and the end of the daemon's log, and so do nodes that
# are not idle $SL_IDLE_WAIT s (120) after the daemons started.
#
# After sl_up_*: SL_DIR (scratch directory), SL_CONF (slurm.conf),
# SL_NODES (node names), SL_CTL_NS (namespace of slurmctld and srun, empty
# for one node).  The scripts run from the top build directory; $srcdir is
# the top source directory (automake sets it).
set -u
. "${srcdir:-.}/tests/multinode/lib.sh"

SL_TIMEOUT=${SL_TIMEOUT:-120}
# how long the nodes may take to register and become idle (a loaded box
# is slow at it); past that the test skips, saying what the nodes are
SL_IDLE_WAIT=${SL_IDLE_WAIT:-120}
SL_DIR="" SL_CONF="" SL_NODES="" SL_CTL_NS="" SL_UP=0
SL_SRUN_PID=""
# sl_srun's "+ srun ..." lines go to the script's own stderr, never into
# the ranks' output a caller captures
exec {SL_TRACE}>&2
declare -A SL_NODE_NS=() SL_NODE_ADDR=()

sl_skip() { mn_skip "$@"; }
sl_fail() { mn_fail "$@"; }

sl_skip_unless_slurm() {
    local c
    for c in munged munge unmunge slurmctld slurmd srun sinfo scontrol; do
        command -v "$c" >/dev/null 2>&1 ||
            sl_skip "'$c' not found: the Slurm tests need Slurm and munge (Debian: slurm-wlm munge slurm-wlm-basic-plugins)"
    done
    [ "$(id -u)" -eq 0 ] || sl_skip "the test's slurmd must run as root (SlurmdUser=root) to start jobs"
    command -v ss >/dev/null 2>&1 || sl_skip "no 'ss' command to find free ports (Debian: iproute2)"
}

# the log's tail, indented, for SKIP and FAIL messages
sl_tail() {
    [ -f "$1" ] && tail -n "${2:-15}" "$1" | sed 's/^/    /'
}

# run a command in the namespace of slurmctld (where srun, sinfo ... run)
sl_ctl() {
    if [ -n "$SL_CTL_NS" ]; then
        env SLURM_CONF="$SL_CONF" nsenter --net="/run/netns/$SL_CTL_NS" "$@"
    else
        env SLURM_CONF="$SL_CONF" "$@"
    fi
}

# sl_free_ports NS N: N distinct TCP ports nothing listens on or uses in
# namespace NS ("" for this one), below the ephemeral range so that no
# outgoing connection takes them meanwhile
sl_free_ports() {
    local ns=$1 n=$2 p i used out=""
    if [ -n "$ns" ]; then
        used=$(ip netns exec "$ns" ss -Htan 2>/dev/null | awk '{ print $4 }')
    else
        used=$(ss -Htan 2>/dev/null | awk '{ print $4 }')
    fi
    p=$((20000 + (RANDOM * 7 + $$) % 10000))
    for i in $(seq 1 200); do
        if ! echo "$used" | grep -q ":$p\$" && ! echo " $out " | grep -q " $p "; then
            out="$out $p"
            [ "$(echo $out | wc -w)" -eq "$n" ] && break
        fi
        p=$((20000 + (p - 20000 + 97) % 10000))
    done
    echo $out
}

sl_start_munged() {
    local i
    # munged wants its socket's directory searchable by all and a key only
    # root reads; a key of our own, so no system state is needed
    chmod 755 "$SL_DIR" || sl_fail "chmod $SL_DIR"
    if command -v mungekey >/dev/null 2>&1; then
        mungekey -c -b 1024 -k "$SL_DIR/munge.key" >"$SL_DIR/mungekey.out" 2>&1
    else
        dd if=/dev/urandom of="$SL_DIR/munge.key" bs=128 count=1 2>"$SL_DIR/mungekey.out"
    fi || sl_skip "cannot make a munge key: $(cat "$SL_DIR/mungekey.out")"
    chmod 600 "$SL_DIR/munge.key"
    if ! env TERN_SLURM_RUN="$SL_DIR" munged --socket="$SL_DIR/munge.sock" \
        --key-file="$SL_DIR/munge.key" --pid-file="$SL_DIR/munged.pid" \
        --log-file="$SL_DIR/munged.log" --seed-file="$SL_DIR/munged.seed" \
        >"$SL_DIR/munged.out" 2>&1; then
        sl_skip "munged cannot start: $(cat "$SL_DIR/munged.out")
$(sl_tail "$SL_DIR/munged.log")"
    fi
    for i in $(seq 1 50); do
        timeout 5 munge -n -S "$SL_DIR/munge.sock" 2>/dev/null |
            timeout 5 unmunge -S "$SL_DIR/munge.sock" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    sl_skip "munged does not answer on $SL_DIR/munge.sock:
$(sl_tail "$SL_DIR/munged.log")"
}

# The first job id of this cluster.  Job ids name the PMIx namespace
# (slurm.pmix.JOB.STEP), and tern names what its ranks share on a host by
# it (/dev/shm/tern-NSPACE-R, the shm wake-up socket @tern.HASH.R.W): two
# clusters of these tests on one machine must not both count from 1.  A
# range of 2000 ids per run, chosen by pid, one no other run here uses.
sl_first_job_id() {
    local slot=$(($$ % 32768)) i id
    for i in $(seq 1 100); do
        id=$((1 + slot * 2000))
        if ! grep -qsx "FirstJobId=$id" "${TMPDIR:-/tmp}"/tern-slurm.*/slurm.conf; then
            echo "$id"
            return
        fi
        slot=$(((slot + 1) % 32768))
    done
    echo "$id"
}

# sl_write_conf CTLHOST CTLADDR CTLPORT DPORT: slurm.conf for SL_NODES
sl_write_conf() {
    local host=$1 addr=$2 cport=$3 dport=$4 n nodes
    nodes=$(echo $SL_NODES | tr ' ' ,)
    cat >"$SL_CONF" <<EOF
# written by tests/slurm/lib.sh for one test run
ClusterName=tern$$
FirstJobId=$(sl_first_job_id)
SlurmctldHost=$host($addr)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SL_DIR/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
ReturnToService=2
MailProg=/bin/true
KillWait=5
StateSaveLocation=$SL_DIR/state
SlurmdSpoolDir=$SL_DIR/spool/%n
SlurmctldPidFile=$SL_DIR/slurmctld.pid
SlurmdPidFile=$SL_DIR/slurmd-%n.pid
SlurmctldLogFile=$SL_DIR/slurmctld.log
SlurmdLogFile=$SL_DIR/slurmd-%n.log
TmpFS=$SL_DIR/tmpfs/%n
EOF
    for n in $SL_NODES; do
        echo "NodeName=$n NodeAddr=${SL_NODE_ADDR[$n]} CPUs=$(nproc) State=UNKNOWN" >>"$SL_CONF"
        mkdir -p "$SL_DIR/spool/$n" "$SL_DIR/tmpfs/$n"
    done
    echo "PartitionName=debug Nodes=$nodes Default=YES State=UP MaxTime=30 OverSubscribe=FORCE:4" \
        >>"$SL_CONF"
    mkdir -p "$SL_DIR/state"
}

# sl_in_node NS HOSTNAME CMD...: CMD in namespace NS (none: here) with its
# own hostname.  nsenter --net, not `ip netns exec`, which remounts /sys
# without the cgroup hierarchy slurmd 22.05 insists on.
sl_in_node() {
    local ns=$1 host=$2
    shift 2
    if [ -z "$ns" ]; then
        env TERN_SLURM_RUN="$SL_DIR" "$@"
    else
        env TERN_SLURM_RUN="$SL_DIR" nsenter --net="/run/netns/$ns" unshare --uts \
            sh -c 'hostname "$0" && exec "$@"' "$host" "$@"
    fi
}

# One attempt at starting slurmctld and the slurmds: 0 started, 1 failed,
# 2 a port was taken meanwhile (try others)
sl_start_daemons() {
    local host=$1 addr=$2 ports n
    ports=$(sl_free_ports "$SL_CTL_NS" 2)
    [ "$(echo $ports | wc -w)" -eq 2 ] || sl_fail "no free TCP ports for slurmctld and slurmd"
    # shellcheck disable=SC2086
    sl_write_conf "$host" "$addr" $ports
    rm -f "$SL_DIR"/slurmctld.log "$SL_DIR"/slurmd-*.log
    if ! sl_in_node "$SL_CTL_NS" "$host" slurmctld -c -f "$SL_CONF" >"$SL_DIR/slurmctld.out" 2>&1; then
        grep -q 'Address already in use' "$SL_DIR/slurmctld.out" "$SL_DIR/slurmctld.log" 2>/dev/null &&
            return 2
        SL_WHY="slurmctld cannot start: $(cat "$SL_DIR/slurmctld.out")
$(sl_tail "$SL_DIR/slurmctld.log")"
        return 1
    fi
    for n in $SL_NODES; do
        if ! sl_in_node "${SL_NODE_NS[$n]}" "$n" slurmd -f "$SL_CONF" -N "$n" \
            >"$SL_DIR/slurmd-$n.out" 2>&1; then
            grep -q 'Address already in use' "$SL_DIR/slurmd-$n.out" "$SL_DIR/slurmd-$n.log" \
                2>/dev/null && return 2
            SL_WHY="slurmd $n cannot start: $(cat "$SL_DIR/slurmd-$n.out")
$(sl_tail "$SL_DIR/slurmd-$n.log")"
            return 1
        fi
    done
    return 0
}

# the pids of the cluster's daemons, from their pid files (munged's too
# unless $1 is "slurm")
sl_daemon_pids() {
    local f
    for f in "$SL_DIR"/slurmd-*.pid "$SL_DIR/slurmctld.pid" "$SL_DIR/munged.pid"; do
        [ "${1:-}" = slurm ] && [ "$f" = "$SL_DIR/munged.pid" ] && continue
        [ -s "$f" ] && cat "$f"
    done
}

# sl_kill_bounded PIDS: SIGTERM, up to 10 s, then SIGKILL
sl_kill_bounded() {
    local pids=$* left p i
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null
    for i in $(seq 1 100); do
        left=""
        for p in $pids; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null
}

# every process started for this cluster: those that carry
# TERN_SLURM_RUN=$SL_DIR in their environment (the daemons, srun, the ranks)
# and those that work in or hold a file of the scratch directory
# (slurmstepd: slurmd starts it with an environment of its own)
sl_tagged_pids() {
    local f pid
    [ -n "$SL_DIR" ] || return 0
    {
        for f in /proc/[0-9]*/environ; do
            grep -qzxF "TERN_SLURM_RUN=$SL_DIR" "$f" 2>/dev/null && echo "$f"
        done
        for f in /proc/[0-9]*/cwd; do
            case $(readlink "$f" 2>/dev/null) in "$SL_DIR" | "$SL_DIR"/*) echo "$f" ;; esac
        done
        find /proc/[0-9]*/fd -maxdepth 1 -lname "$SL_DIR/*" 2>/dev/null
    } | cut -d/ -f3 | sort -u | while read -r pid; do
        [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] || echo "$pid"
    done
}

# stop the daemons (by pid: SIGTERM, 10 s, SIGKILL) and kill whatever of
# the cluster is left; "" when nothing survives, else the survivors
sl_stop() {
    local left i
    [ -n "$SL_DIR" ] || return 0
    # shellcheck disable=SC2046
    sl_kill_bounded $(sl_daemon_pids)
    for i in $(seq 1 30); do
        left=$(sl_tagged_pids)
        [ -z "$left" ] && return 0
        # shellcheck disable=SC2086
        kill -KILL $left 2>/dev/null
        sleep 0.1
    done
    echo "$left"
}

sl_down() {
    local rc=$? left
    trap - EXIT HUP INT QUIT TERM
    [ -n "$SL_SRUN_PID" ] && kill -KILL "$SL_SRUN_PID" 2>/dev/null
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ "$SL_UP" = 1 ]; then
        echo "# the cluster's logs (last lines):"
        for f in "$SL_DIR"/slurmctld.log "$SL_DIR"/slurmd-*.log; do
            [ -f "$f" ] && echo "## $f" && sl_tail "$f" 10
        done
    fi
    left=$(sl_stop)
    if [ -n "$left" ]; then
        echo "FAIL: processes of the test's Slurm cluster survive SIGKILL: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)")"
        [ "$rc" -eq 0 ] && rc=1
    fi
    [ -n "$SL_DIR" ] && rm -rf "$SL_DIR"
    # the hosts of tests/multinode/lib.sh, as soon as mn_setup named them
    # (sl_up_two sets SL_CTL_NS only later: a failure in between must not
    # leave the namespaces behind)
    if [ -n "$MN_NS1" ]; then
        (exit "$rc")
        mn_cleanup # removes the namespaces; exits with rc
    fi
    exit "$rc"
}

sl_traps() {
    trap sl_down EXIT
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 131' QUIT
    trap 'exit 143' TERM
}

# sl_up CTLHOST CTLADDR: start the cluster of SL_NODES, wait until every
# node is idle and srun knows the pmix plugin
sl_up() {
    local host=$1 addr=$2 attempt r state idle deadline
    SL_CONF=$SL_DIR/slurm.conf
    sl_start_munged
    for attempt in 1 2 3; do
        SL_WHY=""
        sl_start_daemons "$host" "$addr"
        r=$?
        [ "$r" -eq 0 ] && break
        # shellcheck disable=SC2046
        sl_kill_bounded $(sl_daemon_pids slurm)
        rm -f "$SL_DIR"/slurmd-*.pid "$SL_DIR/slurmctld.pid"
        [ "$r" -eq 2 ] && [ "$attempt" -lt 3 ] && continue
        [ "$r" -eq 2 ] && SL_WHY="the ports chosen were taken 3 times"
        sl_skip "$SL_WHY"
    done
    SL_UP=1
    idle=0
    deadline=$((SECONDS + SL_IDLE_WAIT))
    while :; do
        state=$(sl_ctl timeout 10 sinfo -h -N -o '%N %T' 2>/dev/null | sort -u)
        if [ -n "$state" ] && ! echo "$state" | grep -qv ' idle$' &&
            [ "$(echo "$state" | wc -l)" -eq "$(echo $SL_NODES | wc -w)" ]; then
            idle=1
            break
        fi
        state=${state:-(no answer from slurmctld)}
        [ "$SECONDS" -lt "$deadline" ] || break
        sleep 0.2
    done
    if [ "$idle" = 0 ]; then
        sl_skip "the Slurm nodes did not become idle within $SL_IDLE_WAIT s: $(echo $state)
$(for f in "$SL_DIR"/slurmctld.log "$SL_DIR"/slurmd-*.log; do echo "  $f:"; sl_tail "$f" 8; done)"
    fi
    sl_ctl srun --mpi=list 2>&1 | grep -q pmix ||
        sl_skip "Slurm's PMIx plugin is missing (srun --mpi=list: $(sl_ctl srun --mpi=list 2>&1 | tr '\n' ' '); Debian: slurm-wlm-basic-plugins)"
    echo "Slurm cluster up: nodes $SL_NODES ($(sed -n 's/^SlurmctldHost=//p' "$SL_CONF"), $(
        sed -n 's/^SlurmctldPort=/slurmctld port /p' "$SL_CONF")), scratch $SL_DIR"
}

sl_mkdir() {
    SL_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tern-slurm.XXXXXX") || sl_fail "mktemp failed"
}

sl_up_one() {
    local host
    host=$(hostname -s 2>/dev/null)
    host=${host:-localhost}
    sl_traps
    sl_mkdir
    SL_NODES=$host
    SL_NODE_NS[$host]=""
    SL_NODE_ADDR[$host]=127.0.0.1
    sl_up "$host" 127.0.0.1
}

sl_up_two() {
    mn_skip_unless_netns
    command -v nsenter >/dev/null 2>&1 || sl_skip "no 'nsenter' command (Debian: util-linux)"
    mn_setup # the hosts (its trap is replaced by sl_down, which calls it)
    sl_traps
    sl_mkdir
    SL_CTL_NS=$MN_NS1
    SL_NODES="$MN_NS1 $MN_NS2"
    SL_NODE_NS[$MN_NS1]=$MN_NS1
    SL_NODE_NS[$MN_NS2]=$MN_NS2
    SL_NODE_ADDR[$MN_NS1]=$MN_ADDR1
    SL_NODE_ADDR[$MN_NS2]=$MN_ADDR2
    sl_up "$MN_NS1" "$MN_ADDR1"
}

# sl_srun [SRUN-OPTIONS... --] PROG ARGS: srun --mpi=pmix in slurmctld's
# namespace.  The ranks get this environment (TERN_*, IBLOOP_*, the
# sanitizers' *SAN_OPTIONS: srun's default --export=ALL) and the library
# path the tests give them (tests/ibloop), which srun itself runs without.
sl_srun() {
    local prog exp mins
    local -a opts=()
    if [ "${1:0:1}" = - ]; then
        while [ $# -gt 0 ] && [ "$1" != -- ]; do
            opts+=("$1")
            shift
        done
        [ $# -gt 0 ] && shift
    fi
    prog=$1
    shift
    case $prog in
    /*) ;;
    */*) prog=$(cd "$(dirname "$prog")" && pwd)/$(basename "$prog") ;;
    esac
    exp=ALL
    [ -n "${LD_LIBRARY_PATH:-}" ] && exp="$exp,LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    [ -n "${LD_BIND_NOW:-}" ] && exp="$exp,LD_BIND_NOW=$LD_BIND_NOW"
    mins=$(((SL_TIMEOUT + 59) / 60 + 1))
    local cmd=(timeout -k 5 "$SL_TIMEOUT" env -u LD_LIBRARY_PATH -u LD_BIND_NOW
        TERN_SLURM_RUN="$SL_DIR")
    [ -n "$SL_CTL_NS" ] && cmd+=(nsenter --net="/run/netns/$SL_CTL_NS")
    # --wait: how long srun lets the other ranks run once one has ended
    cmd+=(env SLURM_CONF="$SL_CONF" srun --mpi=pmix --time="$mins" --wait="${SL_WAIT:-60}"
        --export="$exp" ${opts[@]+"${opts[@]}"} "$prog" "$@")
    {
        printf '+'
        printf ' %q' srun --mpi=pmix ${opts[@]+"${opts[@]}"} "$prog" "$@"
        printf '\n'
    } >&"$SL_TRACE"
    # in the background, so that a signal to the script runs its trap (and
    # the cleanup) at once instead of after srun has ended
    "${cmd[@]}" <"${SL_STDIN:-/dev/null}" &
    SL_SRUN_PID=$!
    wait "$SL_SRUN_PID"
    local rc=$?
    SL_SRUN_PID=""
    return "$rc"
}

# IOF as srun gives it (docs/launchers.md).  srun forwards each task's
# stdout and stderr in the pieces slurmstepd read from the task's pipe: a
# line may come as several pieces (a line written in several write()
# calls, or cut at slurmstepd's buffer), and without --label pieces of
# different tasks may follow each other inside one output line.  What
# holds, and is checked: nothing is lost, added or moved from one stream to
# the other, and with --label each piece names its task, so each task's
# bytes can be put together, complete and in order.  WANT.R is what rank R
# wrote (iof_writer, lines "K<R> L<n> ...").

# sl_iof_plain FILE WANT K OTHER NP LABEL: unlabelled output.  Byte and
# line totals alone would pass a line corrupted into another of the same
# length, so each line is accounted for: a line of FILE that is one a rank
# wrote is taken off the written lines (as often as it was written: comm
# on the sorted lists); every other line of FILE is made of pieces of the
# written lines left over, so their bytes, counted, are exactly the bytes
# of those (a corrupted, added or lost byte changes the counts).
sl_iof_plain() {
    local f=$1 want=$2 k=$3 other=$4 np=$5 label=$6 r wb=0 wl=0 whole rest diff
    local t=$f.plain
    for r in $(seq 0 $((np - 1))); do
        wb=$((wb + $(wc -c <"$want.$r")))
        wl=$((wl + $(wc -l <"$want.$r")))
    done
    if [ "$(wc -c <"$f")" -ne "$wb" ] || [ "$(wc -l <"$f")" -ne "$wl" ]; then
        echo "FAIL: $label: $(wc -c <"$f") bytes in $(wc -l <"$f") lines, the ranks wrote $wb in $wl"
        return 1
    fi
    if grep -q "${other}[0-9]* L[0-9]" "$f"; then
        echo "FAIL: $label: lines of the other stream: $(grep "${other}[0-9]* L[0-9]" "$f" | head -2)"
        return 1
    fi
    for r in $(seq 0 $((np - 1))); do cat "$want.$r"; done | LC_ALL=C sort >"$t.want"
    LC_ALL=C sort "$f" >"$t.got"
    whole=$(LC_ALL=C comm -12 "$t.got" "$t.want" | wc -l)
    # the lines no rank wrote as they are, and the written lines not seen whole
    LC_ALL=C comm -23 "$t.got" "$t.want" >"$t.rest"
    LC_ALL=C comm -13 "$t.got" "$t.want" >"$t.missing"
    rest=$(wc -l <"$t.rest")
    diff=$(LC_ALL=C awk 'FNR == NR { for (i = 1; i <= length($0); i++) c[substr($0, i, 1)]++; next }
                        { for (i = 1; i <= length($0); i++) c[substr($0, i, 1)]-- }
                        END { for (x in c) if (c[x] != 0) n++; print n + 0 }' "$t.rest" "$t.missing")
    if [ "$diff" -ne 0 ]; then
        echo "FAIL: $label: $rest lines are not lines a rank wrote, and their bytes are not those" \
            "of the $(wc -l <"$t.missing") written lines missing (a line corrupted, duplicated" \
            "or lost): $(head -2 "$t.rest" | cut -c1-80 | tr '\n' '|')"
        rm -f "$t".*
        return 1
    fi
    rm -f "$t".*
    echo "$label: $wl lines, every byte there; $whole whole, $rest came split or mixed with" \
        "another task's (their bytes those of the lines they replace)"
}

# sl_iof_labelled FILE WANT K NP LABEL: srun --label output
sl_iof_labelled() {
    local f=$1 want=$2 k=$3 np=$4 label=$5 r bad mis
    bad=$(grep -Evc '^ *[0-9]+: ' "$f")
    if [ "$bad" -ne 0 ]; then
        echo "FAIL: $label: $bad lines without a task label: $(grep -Ev '^ *[0-9]+: ' "$f" | head -2)"
        return 1
    fi
    # a whole line "K<R> L..." names its writer: it must carry R's label
    mis=$(grep -E "^ *[0-9]+: ${k}[0-9]+ L[0-9]+ " "$f" |
        awk '{ if ($1 + 0 != substr($2, 2) + 0) n++ } END { print n + 0 }')
    if [ "$mis" -ne 0 ]; then
        echo "FAIL: $label: $mis lines labelled with another task than their writer"
        return 1
    fi
    for r in $(seq 0 $((np - 1))); do
        if ! sed -n "s/^ *$r: //p" "$f" | tr -d '\n' | cmp -s - <(tr -d '\n' <"$want.$r"); then
            echo "FAIL: $label: task $r's labelled pieces put together are not what it wrote"
            return 1
        fi
    done
    echo "$label: every task's bytes complete and in order; $(($(wc -l <"$f") - $(cat "$want".* |
        wc -l))) line(s) came in more than one piece"
}
