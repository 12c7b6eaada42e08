#!/bin/sh
# PMIx_Spawn under ternrun, from a plain PMIx client (tests/launcher/pmix_spawn.c):
# a new namespace with its parent id, working directory and environment,
# its output through ternrun's IOF, connect / get / disconnect across the
# two namespaces; a missing program or directory and an exec that fails
# half-way fail the whole spawn (the started ranks are killed); the
# command line of a two-app spawn as PMIx queries tell it; a spawned job
# that fails ends alone, its status folded into ternrun's.
. "$(dirname "$0")/lib.sh"

SPAWN=./tests/launcher/pmix_spawn
D=$WORK/wdir
mkdir -p "$D"

# 2 parent ranks, 3 children; tags tell the jobs apart
T=60 run -n 2 --tag-output "$SPAWN" parent 3 "$D"
expect_rc 0 "spawn"
for r in 0 1 2; do
    expect_out "^\[1\.$r,stdout\] child $r of 3 cwd $D var from-parent\$" "child $r's line"
done
expect_out '^\[0,stdout\] spawned ternrun-[0-9]+\.1$' "the spawned namespace"
expect_out '^\[0,stdout\] ok spawn rank 0$' "parent rank 0"
expect_out '^\[1,stdout\] ok spawn rank 1$' "parent rank 1"
if grep -q FAIL "$OUT"; then fail "a check failed"; fi

# all or nothing
T=30 run -n 1 "$SPAWN" badexe
expect_rc 0 "spawn of a missing program"
expect_out '^ok badexe' "missing program: PMIX_ERR_JOB_EXE_NOT_FOUND"
expect_err "spawn from ternrun-[0-9]+:0: cannot run '/nonexistent/tern-no-such-program': command not found" \
    "missing program named"

T=30 run -n 1 "$SPAWN" badwdir
expect_rc 0 "spawn into a missing directory"
expect_out '^ok badwdir' "missing directory: PMIX_ERR_JOB_WDIR_NOT_FOUND"
expect_err 'working directory /nonexistent/tern-no-such-dir' "missing directory named"

# exec refuses the second app (no ELF, no #!) after the first app's two
# ranks are running: they are killed, the parent gets the error
BAD=$WORK/not-a-program
printf 'this is not a program\n' >"$BAD"
chmod +x "$BAD"
T=30 run -n 1 "$SPAWN" partial "$BAD"
expect_rc 0 "a spawn failing half-way"
expect_out '^ok partial' "half-way failure: PMIX_ERR_JOB_FAILED_TO_LAUNCH"
expect_err "cannot execute '$BAD'" "exec failure named"
expect_err 'spawn from ternrun-[0-9]+:0 failed .*2 of its 3 process\(es\) were running, killed' \
    "started ranks killed"
if grep -q outlived "$OUT"; then fail "a rank of the failed spawn survived"; fi

# PMIX_QUERY_NAMESPACE_INFO's command line: the apps of a spawn separated
# by " : ", each with its arguments; the first job's as given to ternrun
T=30 run -n 1 "$SPAWN" mpmd
expect_rc 0 "a spawn of two apps"
expect_out '^ok mpmd$' "the command lines of an MPMD spawn and of the first job"

# a spawned job fails: it is ended alone (the parent goes on and ends
# normally, told by PMIX_ERR_EXIT_NONZERO_TERM and PMIX_EVENT_JOB_END with
# status 3; PMIX_ERR_PROC_ABORTED for the failed rank only, not for the one
# ternrun tore down); ternrun's status is the child's failure
T=30 run -n 1 "$SPAWN" childfail
expect_rc 3 "a spawned job's failure"
expect_out "^ok childfail" "parent outlives its failed child job, told by events"
expect_err 'rank 1 of ternrun-[0-9]+\.1 .*exited with status 3' "child failure named"
if grep -q outlived "$OUT"; then fail "the failed job's other rank survived"; fi

finish
