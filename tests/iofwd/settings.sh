#!/bin/sh
# iofwd's settings (docs/iofwd.md): TERN_IOFWD_REPORT is a registered
# setting like the other TERN_IOFWD_* (0 means off, a bad value is refused
# by tern_io_init naming it and its range), and the daemon's idle waits
# sleep whatever TERN_WAIT_MODE the rank that started it has (it asks
# tern_init_ex for block waits: no setenv).  1 rank, no launcher.
. "${srcdir:-.}/tests/iofwd/lib.sh"
# the client waits for a daemon it started: with no linger, the daemon's
# last words are in the client's output
(TERN_IOFWD_LINGER_MS=0 TERN_IOFWD_REPORT=1; export TERN_IOFWD_LINGER_MS TERN_IOFWD_REPORT
 run $CLIENT "dir=$work/out" 4096 2) || fail "TERN_IOFWD_REPORT=1"
grep -q "iofwd daemon: exiting; 8192 bytes pulled, 8192 written" "$out" ||
    fail "TERN_IOFWD_REPORT=1: no report from the daemon"
rm -f "$work/out/rank.0"
(TERN_IOFWD_LINGER_MS=0 TERN_IOFWD_REPORT=0; export TERN_IOFWD_LINGER_MS TERN_IOFWD_REPORT
 run $CLIENT "dir=$work/out" 4096 2) || fail "TERN_IOFWD_REPORT=0"
! grep -q "iofwd daemon: exiting" "$out" || fail "TERN_IOFWD_REPORT=0: the daemon reported"
rm -f "$work/out/rank.0"
for bad in "TERN_IOFWD_REPORT=yes:allowed 0 .. 1" "TERN_IOFWD_REPORT=2:out of range: allowed 0 .. 1"; do
    set=${bad%%:*} want=${bad#*:}
    (export "$set"; run $CLIENT "dir=$work/out" 4096 1) && fail "$set accepted"
    grep "${set%%=*}" "$out" | grep -q "$want" || fail "$set: the message does not say \"$want\""
done
[ -z "$(daemon_pid)" ] || fail "a daemon was started despite a bad setting"

# the daemon started by a spinning rank: its main thread is seen asleep in
# epoll_wait while it lingers (a spinning or yielding daemon never is);
# bounded: 1000 looks, then the daemon is killed, which ends the client
(TERN_WAIT_MODE=spin TERN_IOFWD_LINGER_MS=600000; export TERN_WAIT_MODE TERN_IOFWD_LINGER_MS
 timeout -k 5 120 $CLIENT "dir=$work/out" 4096 1 >"$work/spin.out" 2>&1) &
cpid=$!
seen= i=0
while [ $i -lt 1000 ]; do
    p=$(daemon_pid)
    if [ -n "$p" ] && grep -q epoll "/proc/$p/wchan" 2>/dev/null; then
        seen=$p
        break
    fi
    sleep 0.02
    i=$((i + 1))
done
p=$(daemon_pid)
[ -n "$p" ] && kill "$p"
wait "$cpid"
cat "$work/spin.out"
[ -n "$seen" ] || fail "the daemon of a rank with TERN_WAIT_MODE=spin was never seen asleep in epoll_wait"
echo "ok iofwd settings"
