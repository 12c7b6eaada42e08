# Stock Open MPI over tern's libfabric provider (issue 23): the harness of
# tests/ompi/*.sh (sourced, bash).  Programs written for any MPI (tests/mpi,
# tests/ompi) are built unchanged with Debian's mpicc.openmpi and run by
# mpirun.openmpi with pml cm + mtl ofi restricted to the provider "tern",
# loaded from the build tree through FI_PROVIDER_PATH.
#
#   ompi_skip_unless_possible  exit 77 ("SKIP: ...") without Open MPI's
#                              wrappers and mpirun, or without libtern-fi.so
#                              (a failure if configure built it: TERN_TEST_OFI)
#   ompi_setup                 OMPI_WORK, a scratch directory, and the trap
#                              that cleans up (one-host scripts)
#   ompi_provider_dir DIR      the provider's directory for FI_PROVIDER_PATH
#   ompi_mpirun NP [OPTS --] PROG ...
#                              one bounded job on this host over tern
#   ompi_build DIR PROG...     build tests/mpi/PROG.c or tests/ompi/PROG.c
#                              (mpi_cxx: tests/mpi/mpi_cxx.cc) into DIR;
#                              OMPI_BUILT: those built
#   ompi_tern_args             OMPI_TERN: the mpirun options that select
#                              tern (pml cm, mtl ofi, provider tern, its
#                              verbose line, FI_PROVIDER_PATH)
#   ompi_check OUT NP LABEL PROG
#                              a finished job's output: tern was the
#                              provider of every rank, every rank said ok
#                              (or only a known Open MPI deviation failed)
#
# The scripts run from the top build directory; $srcdir is the top source
# directory (automake sets it).  TERN_TEST_OFI_PROVIDER=NAME (a diagnosis
# aid, default tern) runs the same jobs over another libfabric provider,
# e.g. sockets, to tell Open MPI's own behaviour from tern's.
# shellcheck shell=bash
set -u

OMPI_SRCDIR=${srcdir:-.}
# In the sanitizer build (make check says TERN_TEST_SANITIZED=1) the ranks
# are Open MPI processes: Open MPI leaks by design at MPI_Finalize, and the
# components it unloads leave those leaks in "<unknown module>", so no
# suppression can tell them from ours.  Leak checking is off for the ranks
# (mpirun passes *SAN_OPTIONS on); every other ASan and UBSan check stays.
if [ "${TERN_TEST_SANITIZED:-0}" = 1 ]; then
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    export ASAN_OPTIONS
fi
MPIRUN_OMPI=${MPIRUN_OMPI:-mpirun.openmpi}
# make check passes configure's mpicc.openmpi (one that builds an Open MPI
# program; empty: none, and the scripts skip); run by hand, PATH's
if [ "${TERN_TEST_MPICC_OMPI+set}" = set ]; then
    OMPI_MPICC=$TERN_TEST_MPICC_OMPI
else
    OMPI_MPICC=$(command -v mpicc.openmpi 2>/dev/null)
fi
OMPI_MPICXX=${TERN_TEST_MPICXX_OMPI:-mpicxx.openmpi}
OMPI_FI_DIR="" OMPI_FI_SO=""
OMPI_PROV=${TERN_TEST_OFI_PROVIDER:-tern}

ompi_skip() {
    echo "SKIP: $*"
    exit 77
}

ompi_fail() {
    echo "FAIL: $*"
    exit 1
}

ompi_skip_unless_possible() {
    [ -n "$OMPI_MPICC" ] ||
        ompi_skip "no Open MPI mpicc (configure found none that builds a program; Debian: libopenmpi-dev)"
    command -v "$MPIRUN_OMPI" >/dev/null 2>&1 ||
        ompi_skip "$MPIRUN_OMPI not found (Debian: openmpi-bin)"
    if [ "$OMPI_PROV" != tern ]; then
        echo "NOTE: TERN_TEST_OFI_PROVIDER=$OMPI_PROV: these jobs do not test tern"
        return 0
    fi
    # the provider as libtool leaves it in the build tree (ofi/Makefile.inc:
    # libtern-fi.la at the top), or where TERN_TEST_FI_DIR says
    local d=${TERN_TEST_FI_DIR:-$PWD/.libs}
    if [ ! -e "$d/libtern-fi.so" ]; then
        [ "${TERN_TEST_OFI:-0}" = 1 ] &&
            ompi_fail "configure built the provider, but $d/libtern-fi.so is missing"
        ompi_skip "tern's libfabric provider is not built ($d/libtern-fi.so; configure --with-libfabric, Debian: libfabric-dev)"
    fi
    OMPI_FI_SO=$(cd "$d" && pwd)/libtern-fi.so || ompi_fail "cd $d"
}

# ompi_build DIR PROG...: the programs as any user of Open MPI builds them,
# with the project's warnings (and its sanitizers in that build: the
# provider, instrumented then too, needs their runtime first in the
# process), into DIR; OMPI_BUILT lists them.  Two Open MPI switches, no
# change to a program: OMPI_OMIT_MPI1_COMPAT_DECLS=0 declares the MPI-1
# functions MPI-3.0 removed (mpi_dtype calls MPI_Type_hvector; libmpi
# still has it), and OMPI_SKIP_MPICXX leaves out Open MPI's deprecated C++
# bindings (mpi_cxx uses the C API; the bindings' headers do not pass
# -Wextra -Werror).  mpi_cxx is left out, with a note, when Open MPI's
# mpicxx is missing or cannot build it (Open MPI's C++ side, not tern's).
ompi_build() {
    local dir=$1 prog src
    shift
    OMPI_BUILT=""
    for prog in "$@"; do
        if [ "$prog" = mpi_cxx ]; then
            # shellcheck disable=SC2086
            if command -v "$OMPI_MPICXX" >/dev/null 2>&1 &&
                "$OMPI_MPICXX" ${TERN_TEST_CXXFLAGS:--Wall -Werror} -O2 -DOMPI_SKIP_MPICXX \
                    "$OMPI_SRCDIR/tests/mpi/mpi_cxx.cc" -o "$dir/mpi_cxx"; then
                OMPI_BUILT="$OMPI_BUILT mpi_cxx"
            else
                echo "NOTE: $OMPI_MPICXX cannot build tests/mpi/mpi_cxx.cc: mpi_cxx is not run"
            fi
            continue
        fi
        src=$OMPI_SRCDIR/tests/mpi/$prog.c
        [ -f "$src" ] || src=$OMPI_SRCDIR/tests/ompi/$prog.c
        # shellcheck disable=SC2086
        "$OMPI_MPICC" ${TERN_TEST_CFLAGS:--Wall -Werror} -O2 -DOMPI_OMIT_MPI1_COMPAT_DECLS=0 \
            -I"$OMPI_SRCDIR" "$src" -o "$dir/$prog" || ompi_fail "$OMPI_MPICC $prog.c"
        OMPI_BUILT="$OMPI_BUILT $prog"
    done
}

# ompi_provider_dir DIR: FI_PROVIDER_PATH's directory, DIR/prov, holding a
# link to the build tree's libtern-fi.so and nothing else (libfabric
# dlopens every file of it whose name ends in fi.so)
ompi_provider_dir() {
    [ -n "${OMPI_FI_SO:-}" ] || return 0
    mkdir -p "$1/prov" && ln -sf "$OMPI_FI_SO" "$1/prov/libtern-fi.so" ||
        ompi_fail "linking $OMPI_FI_SO into $1/prov"
    OMPI_FI_DIR=$1/prov
}

# OMPI_TERN: the options that make Open MPI use tern.  pml cm leaves every
# message (self included) to the mtl, and with "--mca mtl ofi" a failure
# to open it fails MPI_Init; the provider include list holds tern alone (by
# default Open MPI excludes shm, sockets, tcp... and would take any other
# one).  mtl_ofi_verbose 1 makes each rank print the provider it chose
# ("mtl:ofi:prov: tern"), which ompi_check counts.  btl self alone: pml cm
# uses no btl, and Open MPI's vader would make a 4 MiB segment in /dev/shm
# per rank, which a killed rank leaves behind.
ompi_tern_args() {
    OMPI_TERN=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "$OMPI_PROV"
        --mca mtl_ofi_verbose 1 --mca btl self)
    [ -z "$OMPI_FI_DIR" ] || OMPI_TERN+=(-x "FI_PROVIDER_PATH=$OMPI_FI_DIR")
}

# ompi_provider_lines OUT: how many ranks said tern was their provider
# (a layered one, as "tcp;ofi_rxm", names its core provider first)
ompi_provider_lines() {
    grep -Ec "mtl:ofi:prov: $OMPI_PROV(;[a-z_]+)?\$" "$1"
}

# Known deviations of Open MPI 4.1 itself (the same under every provider:
# seen with the stock sockets provider too), by program: an extended regex
# of the only FAIL lines allowed.
#   mpi_p2p2  pml cm's persistent buffered send (MPI_Bsend_init) packs the
#             data at the first MPI_Start only: rounds 1.. resend stale
#             bytes ("bsend_init round N")
#   mpi_group MPI_Group_range_incl's parameter check lets a range end equal
#             to the group's size through (last > size, where last >= size
#             is out of the group), then reads past the group's rank
#             array: whether the call fails depends on that memory (one
#             rank of four, once, under ompi_hosts.sh's dpdk run)
ompi_known_deviation() {
    case $1 in
    mpi_p2p2) echo '^FAIL rank [0-9]+ line [0-9]+: bsend_init round [1-9]$' ;;
    mpi_group) echo '^FAIL rank [0-9]+ line [0-9]+: MPI_Group_range_incl: an end past the group succeeded$' ;;
    *) echo '' ;;
    esac
}

# ompi_check OUT NP LABEL PROG RC: every rank chose tern, and the program
# passed: exit 0 and NP "ok rank" lines, or (PROG with a known Open MPI
# deviation) exit 1 from mpirun, a rank having returned 1, with only those
# FAIL lines and no MPI error or signal reported.  A rank returns only
# after MPI_Finalize, whose fence every rank enters after its last check,
# so every check of every rank ran.  Prints a FAIL line and returns 1
# otherwise.
ompi_check() {
    local out=$1 np=$2 label=$3 prog=$4 rc=$5 nprov dev
    nprov=$(ompi_provider_lines "$out")
    if [ "$nprov" -ne "$np" ]; then
        echo "FAIL: $label: $nprov of $np ranks reported 'mtl:ofi:prov: $OMPI_PROV' (not that provider?)"
        return 1
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "FAIL: $label: did not finish (timed out, exit $rc)"
        return 1
    fi
    if [ "$rc" -eq 0 ] && [ "$(grep -c '^ok rank' "$out")" -eq "$np" ] && ! grep -q '^FAIL' "$out"; then
        return 0
    fi
    dev=$(ompi_known_deviation "$prog")
    if [ -n "$dev" ] && [ "$rc" -eq 1 ] && grep -Eq "$dev" "$out" &&
        ! grep '^FAIL' "$out" | grep -Evq "$dev" &&
        grep -q 'returned a non-zero exit code\|exited with non-zero status\|Exit code: *1$' "$out" &&
        ! grep -q 'MPI_ERRORS_ARE_FATAL\|Signal:\|signal [0-9]' "$out"; then
        echo "$label: only Open MPI's known deviation failed ($(grep -Ec "$dev" "$out") lines: /$dev/)"
        return 0
    fi
    echo "FAIL: $label: exit $rc, $(grep -c '^ok rank' "$out") of $np ranks ok"
    return 1
}

# ---- one-host jobs ----------------------------------------------------------
OMPI_WORK="" OMPI_JOB=""

# ompi_tree PID: PID and everything below it, children first
ompi_tree() {
    local c
    for c in $(pgrep -P "$1" 2>/dev/null); do
        ompi_tree "$c"
    done
    echo "$1"
}

# the EXIT trap of ompi_setup: a job still running (a signal to the script
# while it waited) is killed, tree first listed, then the scratch directory
ompi_cleanup() {
    local rc=$? pids
    trap - EXIT HUP INT QUIT TERM
    if [ -n "$OMPI_JOB" ] && kill -0 "$OMPI_JOB" 2>/dev/null; then
        pids=$(ompi_tree "$OMPI_JOB")
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null
        wait "$OMPI_JOB" 2>/dev/null
    fi
    [ -n "$OMPI_WORK" ] && rm -rf "$OMPI_WORK"
    exit "$rc"
}

# ompi_setup: OMPI_WORK (scratch directory, removed on exit) and the trap
ompi_setup() {
    trap ompi_cleanup EXIT
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 131' QUIT
    trap 'exit 143' TERM
    OMPI_WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-ompi.XXXXXX") || ompi_fail "mktemp"
    ompi_provider_dir "$OMPI_WORK"
    ompi_tern_args
}

# ompi_netmod_env NM: OMPI_ENV, the mpirun options (-x NAME=value) of a
# one-host job over netmod NM: TERN_NETMODS=NM and netmods/NM/test.env
# (the settings the netmod's tests use on one host)
ompi_netmod_env() {
    local kv
    OMPI_ENV=(-x "TERN_NETMODS=$1")
    [ -f "$OMPI_SRCDIR/netmods/$1/test.env" ] || return 0
    while IFS= read -r kv; do
        OMPI_ENV+=(-x "$kv")
    done < <(set -a && . "$OMPI_SRCDIR/netmods/$1/test.env" && set +a &&
        env | grep -E '^(TERN_[A-Za-z0-9_]*|IBLOOP_[A-Z0-9_]*|LD_LIBRARY_PATH|LD_BIND_NOW)=' |
        grep -v '^TERN_NETMODS=')
}

# ompi_mpirun NP [MPIRUN-OPTIONS... --] PROG ARGS...: Open MPI's mpirun on
# this host over tern, NP ranks (oversubscribed, unbound), bounded by
# $OMPI_TIMEOUT (180) s; the ranks get every TERN_* and sanitizer setting
# of the environment.  Runs in the background (OMPI_JOB) so that a signal
# to the script runs its trap at once; returns mpirun's status.
ompi_mpirun() {
    local np=$1 v
    local -a opts=()
    shift
    if [ "${1:0:1}" = - ]; then
        while [ $# -gt 0 ] && [ "$1" != -- ]; do
            opts+=("$1")
            shift
        done
        [ $# -gt 0 ] && shift
    fi
    local cmd=(timeout -k 5 "${OMPI_TIMEOUT:-180}" "$MPIRUN_OMPI" --allow-run-as-root
        --oversubscribe --bind-to none -n "$np" "${OMPI_TERN[@]}")
    # (a variable the options set with -x NAME=value is theirs)
    for v in $(env | sed -n 's/^\(TERN_[A-Za-z0-9_]*\)=.*/\1/p; s/^\([AUL]SAN_OPTIONS\)=.*/\1/p'); do
        [[ " ${opts[*]-} " == *" $v="* ]] || cmd+=(-x "$v")
    done
    cmd+=(${opts[@]+"${opts[@]}"} "$@")
    printf '+' >&2
    printf ' %q' "${cmd[@]}" >&2
    printf '\n' >&2
    "${cmd[@]}" </dev/null &
    OMPI_JOB=$!
    wait "$OMPI_JOB"
}
