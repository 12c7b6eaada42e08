#!/bin/sh
# The engine's same-host copy (engine/cma.h: CMA get and put, whatever
# netmod carries the VC) over every built netmod, each with its own test
# settings (netmods/<name>/test.env: dpdk on memif, verbs on tests/ibloop),
# which the matrix runs with TERN_CMA=off and this script with it on:
#  - get (TERN_CMA_THRESHOLD=64k) and put (TERN_LMT_MODE=put): the cma case
#    checks both ranks' cma.* counters (every byte by process_vm_readv,
#    resp. _writev; TERN_TEST_CMA) besides large messages up to 64 MiB,
#    unaligned, 3000-segment iovecs and truncation, all byte-exact;
#  - a refusal mid-transfer (test hook TERN_FAULT_CMA_EPERM_AFTER=1m) of a
#    get and of a put: logged once per process, counted, and the message
#    moves again by the netmod's own path with the data intact;
#  - a receiver whose TERN_CMA is off: it declines, the sender falls back;
#  - one-sided puts and gets into peers' created regions by the copy
#    (rma_cma with TERN_RMA_CMA_THRESHOLD=0: counted, byte-exact; rma_destroy_race: nothing lands after
#    tern_region_destroy returns), and all of them refused by the hook
#    (TERN_FAULT_CMA_EPERM_AFTER=0): counted, logged, done by the engine's
#    path instead;
# and on shm alone: the default (the copy buffer below shm's threshold),
# TERN_CMA=off, CMA for every message (threshold 0, no eager), one-sided
# at shm's own threshold (only the puts and gets from 8 KiB copied) and with
# TERN_CMA=off (nothing copied), and a real kernel refusal (ranks
# without CAP_SYS_PTRACE, non-dumpable: EPERM before any byte; the
# one-sided case then copies nothing either).  On tcp alone: the default gives its rendezvous messages to the
# copy.
. "${srcdir:-.}/tests/engine/lib.sh"
INFO=${TERN_INFO:-./tern_info}
netmods=$("$INFO" --netmods | sed -n 's/^netmods: *\([^(]*\).*/\1/p')
[ -n "$netmods" ] || fail "tern_info lists no netmod"
out=$(mktemp)
wrap=$(mktemp)
trap 'rm -f "$out" "$wrap"' EXIT
# rank 1 with TERN_CMA=off (PMIX_RANK: the launcher's name for the rank)
cat >"$wrap" <<EOF
#!/bin/sh
if [ "\$PMIX_RANK" = 1 ]; then TERN_CMA=off; export TERN_CMA; fi
exec "$ENGINE_TESTS" "\$@"
EOF
chmod +x "$wrap"

# on NM [VAR=value...] CASE...: run_engine with the netmod's test settings,
# then the caller's, output in $out
on() {
    nm=$1; shift
    (if [ -f "${srcdir:-.}/netmods/$nm/test.env" ]; then
         set -a; . "${srcdir:-.}/netmods/$nm/test.env"; set +a
     fi
     TERN_NETMODS=$nm TERN_TEST_NETMOD=$nm TERN_CMA=all
     export TERN_NETMODS TERN_TEST_NETMOD TERN_CMA
     while [ $# -gt 0 ]; do
         case $1 in [A-Z]*=*) export "${1?}"; shift ;; *) break ;; esac
     done
     run_engine 2 "--bind-to core" "$@") >"$out" 2>&1
}
refusals() { grep -c "CMA (process_vm_[a-z]*) with rank . (pid [0-9]*) refused" "$out"; }

for nm in $netmods; do
    echo "# netmod $nm"
    on "$nm" TERN_CMA_THRESHOLD=64k TERN_TEST_CMA=get cma large iov truncate ||
        { cat "$out"; fail "$nm: CMA get"; }
    [ "$(refusals)" -eq 0 ] || { cat "$out"; fail "$nm: CMA refused although nothing forbids it"; }
    on "$nm" TERN_LMT_MODE=put TERN_TEST_CMA=put cma truncate ||
        { cat "$out"; fail "$nm: CMA put"; }
    [ "$(refusals)" -eq 0 ] || { cat "$out"; fail "$nm: CMA put refused although nothing forbids it"; }
    for mode in get put; do
        case $mode in get) call=process_vm_readv ;; put) call=process_vm_writev ;; esac
        on "$nm" TERN_LMT_MODE=$mode TERN_FAULT_CMA_EPERM_AFTER=1m TERN_TEST_CMA=refused \
            cma large truncate iov || { cat "$out"; fail "$nm: $mode refused mid-transfer"; }
        grep -q "warning: CMA ($call) with rank . (pid [0-9]*) refused: Operation not permitted" \
            "$out" || { cat "$out"; fail "$nm: the refusal of a $mode was not logged"; }
        [ "$(refusals)" -le 2 ] || { cat "$out"; fail "$nm: refusal logged more than once per rank"; }
    done
    on "$nm" ENGINE_TESTS="$wrap" TERN_CMA_THRESHOLD=64k TERN_TEST_CMA=declined cma large ||
        { cat "$out"; fail "$nm: rank 1 with TERN_CMA=off did not decline, or the data broke"; }
    # one-sided: puts and gets into created regions by the copy, a region
    # destroyed under another thread's copies; then every copy refused
    on "$nm" TERN_NUM_WORKERS=2 TERN_RMA_CMA_THRESHOLD=0 TERN_TEST_RMA_CMA=1 rma_cma rma_destroy_race ||
        { cat "$out"; fail "$nm: one-sided copies"; }
    [ "$(grep -c "^rma_cma: rank .: [1-9][0-9]* of [0-9]* puts and gets copied, 0 copies" "$out")" -eq 2 ] ||
        { cat "$out"; fail "$nm: puts and gets were not copied"; }
    on "$nm" TERN_FAULT_CMA_EPERM_AFTER=0 TERN_TEST_RMA_CMA=0 rma_cma ||
        { cat "$out"; fail "$nm: one-sided copies refused: the engine's path"; }
    [ "$(grep -c "^rma_cma: rank .: 0 of [0-9]* puts and gets copied, [1-9][0-9]* copies" "$out")" -eq 2 ] ||
        { cat "$out"; fail "$nm: the refused copies were not counted"; }
    grep -q "warning: CMA (process_vm_writev) with rank . (pid [0-9]*) refused" "$out" ||
        { cat "$out"; fail "$nm: the refusal of a one-sided copy was not logged"; }
done

case " $netmods " in *" shm "*)
    echo "# shm alone"
    on shm TERN_CMA= TERN_TEST_CMA=none cma large || { cat "$out"; fail "shm default"; }
    on shm TERN_CMA=off TERN_LMT_MODE=get TERN_TEST_CMA=none cma large iov ||
        { cat "$out"; fail "TERN_CMA=off: the copy buffer"; }
    on shm TERN_CMA_THRESHOLD=0 TERN_EAGER_LIMIT=0 TERN_TEST_CMA=get cma sizes iov wildcard_order ||
        { cat "$out"; fail "CMA for every message"; }
    on shm TERN_TEST_RMA_CMA=1 rma_cma ||
        { cat "$out"; fail "one-sided: shm's threshold (small puts and gets through the target)"; }
    on shm TERN_CMA=off TERN_TEST_RMA_CMA=0 rma_cma ||
        { cat "$out"; fail "TERN_CMA=off: one-sided through the target"; }
    if command -v setpriv >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        for mode in get put; do
            TERN_TEST_NONDUMPABLE=1 TERN_LMT_MODE=$mode TERN_TEST_CMA=refused TERN_TEST_RMA_CMA=0 \
                setpriv --bounding-set=-sys_ptrace --inh-caps=-sys_ptrace \
                sh -c ". \"${srcdir:-.}/tests/engine/lib.sh\"; run_engine 2 '' cma large sizes rma_cma" \
                >"$out" 2>&1 || { cat "$out"; fail "real CMA refusal of a $mode"; }
            grep -q "refused: Operation not permitted" "$out" ||
                { cat "$out"; fail "real refusal of a $mode not logged"; }
        done
    else
        echo "note: setpriv or root missing, the real-refusal part was not run"
    fi ;;
esac
case " $netmods " in *" tcp "*)
    echo "# tcp alone"
    on tcp TERN_CMA= TERN_TEST_CMA=get cma sizes_unexpected ||
        { cat "$out"; fail "tcp's default: its rendezvous messages by the same-host copy"; } ;;
esac
exit 0
