#!/bin/sh
# iofwd failures (issue 12): bad requests from a hand-written client get
# ERRORs naming the field and the daemon goes on; a rank gone mid-write
# leaves no partial record while another rank's writes stay whole; a daemon
# killed mid-write fails the pending write within 5 s, and what it held is
# on disk (checked byte for byte) or named lost (a stalled writer); a full
# disk (an 8 MiB tmpfs in a mount namespace) fails the write with ENOSPC
# named, the daemon saying so in the job's diagnostics stream.
. "${srcdir:-.}/tests/iofwd/lib.sh"
BAD=./tests/iofwd/io_badclient
# a daemon for the hand-written client (it only attaches)
TERN_IOFWD_LINGER_MS=5000 ./tern-iofwd --dir "$(mkdir -p -m 700 "$XDG_RUNTIME_DIR/tern-iofwd" &&
    echo "$XDG_RUNTIME_DIR/tern-iofwd")" 2>"$work/daemon.log" &
dpid=$!
i=0
while [ -z "$(daemon_pid)" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
run $BAD bad "$work/out" || fail "bad requests"
for what in "bad magic" "version 9" "4 KiB message" "WRITE_REQ before CONNECT" \
    "WRITE_DONE to the daemon" "CONNECT rank 5 of 1" "CONNECT to a missing directory"; do
    grep -q "^$what -> ERROR" "$out" || fail "no ERROR for: $what"
done
# rank gone mid-write, another rank writing meanwhile
mkdir "$work/other"
timeout -k 5 60 $CLIENT "dir=$work/other" 4194304 16 >"$work/other.out" 2>&1 &
other=$!
run $BAD die "$work/out" || fail "the dying client"
wait $other || { cat "$work/other.out"; fail "another rank disturbed by a rank's death"; }
cat "$work/other.out"
i=0
while ! grep -q "writes from 1 on, not held, are dropped" "$work/daemon.log" && [ $i -lt 100 ]; do
    sleep 0.05; i=$((i + 1))
done
cat "$work/daemon.log"
grep -q "writes from 1 on, not held, are dropped" "$work/daemon.log" \
    || fail "the daemon did not drop the dead rank's write"
i=0
while [ "$(stat -c %s "$work/out/rank.0")" -ne 5242880 ] && [ $i -lt 100 ]; do
    sleep 0.05; i=$((i + 1))
done
[ "$(stat -c %s "$work/out/rank.0")" -eq 5242880 ] \
    || fail "a partial record is left: $(stat -c %s "$work/out/rank.0") bytes, not 5 MiB"
kill -0 $dpid || fail "the daemon died"
kill -9 $dpid
wait $dpid 2>/dev/null
# the daemon killed while a 64 MiB write is pending
rm -f "$XDG_RUNTIME_DIR/tern-iofwd/port"
run $CLIENT --kill-daemon 3 "dir=$work/out" 67108864 6 || fail "daemon killed mid-write"
grep -q "daemon killed: the pending write failed after .* the daemon (pid [0-9]*) is gone" "$out" \
    || fail "the pending write's failure does not name the daemon"
# writes held but not written when the daemon dies are named lost (the
# writer stalled by its test hook: write 0 is held, never written)
rm -f "$XDG_RUNTIME_DIR/tern-iofwd/port"
TERN_IOFWD_FAULT_STALL=1 run $CLIENT --kill-daemon 1 "dir=$work/out" 1048576 3 \
    || fail "daemon killed with a held write"
grep -q "writes 0..0 of rank 0 were held but not written: lost" "$out" \
    || fail "the held, unwritten write is not named lost"
# a full disk: 8 MiB of tmpfs, records of 3 MiB: the third fails with ENOSPC
if unshare -m true 2>/dev/null; then
    rm -f "$XDG_RUNTIME_DIR/tern-iofwd/port"
    mkdir "$work/small"
    # under ternrun: the daemon a rank started logs to the job's diagnostics
    run unshare -m sh -c "mount -t tmpfs -o size=8m tern-iofwd-full '$work/small' &&
        $TERNRUN -n 1 $CLIENT --tern --expect-fail 'No space left on device' \
            'dir=$work/small' 3145728 4 </dev/null" || fail "full disk"
    grep -q "failed as expected after 2 records: .*write 2 .*No space left on device" "$out" \
        || fail "the full disk's write does not name ENOSPC"
    grep -q "then a write of 786432 bytes: ok" "$out" || fail "no write after the refused one"
    grep -q '^\[0,diag\] tern\[[0-9]*\]: warning: iofwd: .*write 2 .*no room: No space left' \
        "$out" || fail "the daemon's log did not reach the job's diagnostics stream"
else
    echo "# no mount namespaces here: the full-disk case is not run"
fi
echo "ok iofwd failures"
