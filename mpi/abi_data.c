/*
 * The data objects of MPICH's ABI that libtern-mpi does not define
 * elsewhere (issue 24; docs/mpi.md, "Running MPICH-built programs").
 *
 * These are ABI facts, not design choices: Debian's MPICH 4.0.2 mpi.h
 * declares them as extern objects, so a program built by mpicc.mpich that
 * names one holds a data relocation against it.  Data is bound when the
 * program loads (not lazily, as functions are), so a libmpich.so.12 without
 * one of them stops such a program before main, even if the code using it
 * never runs.  A PIE or non-PIE program may also take a copy relocation of
 * the object, with the size it had in MPICH's library: each one here has
 * MPICH's type and size (nm -S of libmpich.so.12), and the initial value
 * MPICH gives it.  MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY, and MPIR_Dup_fn
 * behind MPI_DUP_FN, are defined with the code using them (topo.c, attr.c).
 *
 * This file includes no MPI header on purpose: tern's mpi.h does not
 * declare these (tern has no Fortran binding), and the layout
 * is spelt out here with MPICH's sizes instead.
 */
/* MPICH's MPI_Fint is int; its MPI_F08_status is five of them (20 bytes) */
typedef int abi_fint;
typedef struct {
    abi_fint count_lo, count_hi_and_cancelled, MPI_SOURCE, MPI_TAG, MPI_ERROR;
} abi_f08_status;
_Static_assert(sizeof(abi_f08_status) == 20, "MPICH's MPI_F08_status is 20 bytes");

/* Declarations first (-Wmissing-variable-declarations); default visibility. */
extern abi_fint *MPI_F_STATUS_IGNORE;
extern abi_fint *MPI_F_STATUSES_IGNORE;
extern abi_f08_status MPIR_F08_MPI_STATUS_IGNORE_OBJ;
extern abi_f08_status MPIR_F08_MPI_STATUSES_IGNORE_OBJ[1];
extern abi_f08_status *MPI_F08_STATUS_IGNORE;
extern abi_f08_status *MPI_F08_STATUSES_IGNORE;
extern int MPIR_F08_MPI_IN_PLACE;
extern int MPIR_F08_MPI_BOTTOM;

/* Fortran status sentinels: MPICH leaves them NULL (.bss, 8 bytes each)
 * until its Fortran binding starts; a C-only program sees NULL there too. */
abi_fint *MPI_F_STATUS_IGNORE;
abi_fint *MPI_F_STATUSES_IGNORE;

/* The mpi_f08 module's sentinels: two status objects (.bss, 20 bytes each)
 * and pointers at them (.data, 8 bytes), as MPICH initialises them. */
abi_f08_status MPIR_F08_MPI_STATUS_IGNORE_OBJ;
abi_f08_status MPIR_F08_MPI_STATUSES_IGNORE_OBJ[1];
abi_f08_status *MPI_F08_STATUS_IGNORE = &MPIR_F08_MPI_STATUS_IGNORE_OBJ;
abi_f08_status *MPI_F08_STATUSES_IGNORE = MPIR_F08_MPI_STATUSES_IGNORE_OBJ;

/* Fortran's MPI_IN_PLACE and MPI_BOTTOM: ints whose addresses are the
 * sentinels (.bss, 4 bytes each). */
int MPIR_F08_MPI_IN_PLACE;
int MPIR_F08_MPI_BOTTOM;

/* MPI_T_PVAR_ALL_HANDLES is MPI_T's (mpi/mpit_pvar.c). */
