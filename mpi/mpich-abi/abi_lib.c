/*
 * libmpich.so.12 and libmpi.so.12 (issue 24; docs/mpi.md, "Running
 * MPICH-built programs"): the names under which a program linked by MPICH's
 * mpicc finds an MPI library.  They hold no MPI code: each one's only
 * dependency (DT_NEEDED) is libtern-mpi.so.0, which the dynamic linker loads
 * with them into the program's global scope, so every MPI_* / PMPI_* name
 * and data object the program needs is bound to libtern-mpi's definition
 * (the first in the scope: the program's own, then its libraries breadth
 * first).  MPICH exports no symbol versions and neither does libtern-mpi.
 */
#include <mpi.h>

/* One reference into libtern-mpi, so that the linker keeps it as a
 * dependency: Debian's gcc links with --as-needed, which would drop a
 * library nothing here uses, and libtool moves a --no-as-needed given in
 * LDFLAGS behind the libraries, where it does nothing. */
__attribute__((used)) static int (*const tern_mpich_abi_needs)(int *) = MPI_Initialized;

/* A mark for `strings` and debuggers: which libmpich.so.12 a process has. */
__attribute__((used)) static const char tern_mpich_abi_ident[] =
    "tern: MPICH ABI library; MPI calls are served by libtern-mpi.so.0";
