#!/bin/sh
# SIGTERM/SIGINT/SIGHUP to ternrun reach every rank (and their children);
# ternrun exits non-zero promptly and no rank survives.
. "$(dirname "$0")/lib.sh"

wait_ready() {  # wait_ready N: until N "ready" lines (bounded: 30 s)
    i=0
    while [ "$(grep -c '^ready' "$OUT" 2>/dev/null)" -lt "$1" ] && [ $i -lt 300 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ $i -lt 300 ] || fail "ranks did not start"
}

alive() {  # alive PID: process exists and is not a zombie
    [ -r "/proc/$1/stat" ] || return 1
    st=$(sed 's/^.*) //' "/proc/$1/stat" | cut -d' ' -f1)
    [ "$st" != Z ]
}

# the ranks must get the signal itself, not only the SIGKILL escalation
# (which --kill-grace 30 keeps out of the way)
for pair in TERM:15 INT:2 HUP:1; do
    sig=${pair%:*}
    num=${pair#*:}
    : >"$OUT"
    timeout -k 5 "$T" "$TERNRUN" --kill-grace 30 -n 2 "$PROBE" sleep 60 >"$OUT" 2>"$ERR" </dev/null &
    tpid=$!
    wait_ready 2
    # $tpid is timeout(1); its child is ternrun
    trpid=$(pgrep -P "$tpid" 2>/dev/null | head -n 1)
    [ -n "$trpid" ] || trpid=$tpid
    kill -"$sig" "$trpid"
    wait "$tpid"
    RC=$?
    [ "$RC" -ne 124 ] || fail "SIG$sig: ternrun did not exit within $T s"
    [ "$RC" -ne 0 ] || fail "SIG$sig: ternrun exited 0"
    expect_err "received SIG$sig" "SIG$sig is reported"
    for r in 0 1; do
        expect_out "^signal rank $r got 0*$num\$" "rank $r received SIG$sig"
    done
    for pid in $(sed -n 's/^ready [0-9]* //p' "$OUT"); do
        alive "$pid" && fail "SIG$sig: rank pid $pid survived"
    done
done

# a rank's own children die with it (each rank leads a process group)
: >"$OUT"
timeout -k 5 "$T" "$TERNRUN" -n 2 sh -c 'sleep 60 & echo "ready $PMIX_RANK $!"; wait' \
    >"$OUT" 2>"$ERR" </dev/null &
tpid=$!
wait_ready 2
trpid=$(pgrep -P "$tpid" 2>/dev/null | head -n 1)
kill -TERM "${trpid:-$tpid}"
wait "$tpid"
RC=$?
[ "$RC" -ne 124 ] || fail "helpers: ternrun did not exit within $T s"
sleep 0.2
for pid in $(sed -n 's/^ready [0-9]* //p' "$OUT"); do
    alive "$pid" && fail "a rank's child (pid $pid) survived SIGTERM"
done

finish
