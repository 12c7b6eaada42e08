/*
 * Handles on MPICH's ABI (include/mpi.h): a handle is an int laid out as
 * MPICH lays out its own, so that every value a program built for MPICH
 * holds means the same here.
 *
 *   bits 31-30  kind: 0 null (index 0), 1 predefined, 2 made by the library
 *   bits 29-26  object type (MPI_HT_*: MPICH's numbers)
 *   bits 25-0   index
 *
 * Inside the layer each object lives in a table slot; a handle is turned
 * into its slot once, where a call looks the object up, and a slot into a
 * handle where a call hands one out.  Made handles (kind 2) are negative
 * ints: every test below is on the unsigned value.
 */
#ifndef TERN_MPI_HANDLE_H
#define TERN_MPI_HANDLE_H

#include <stdbool.h>

enum {
    MPI_HT_COMM = 0x1,
    MPI_HT_GROUP = 0x2,
    MPI_HT_DATATYPE = 0x3,
    MPI_HT_ERRHANDLER = 0x5,
    MPI_HT_OP = 0x6,
    MPI_HT_INFO = 0x7,
    MPI_HT_WIN = 0x8,
    MPI_HT_KEYVAL = 0x9,
    MPI_HT_REQUEST = 0xb, /* and matched-probe messages */
};

#define MPI_HK_NULL 0u
#define MPI_HK_BUILTIN 1u
#define MPI_HK_MADE 2u
#define MPI_HK_MADE2 3u /* a second range of made handles (messages) */
#define MPI_H_INDEX_MASK 0x03ffffffu

/* the handle of kind k, type t, index i */
static inline int mpi_h_make(unsigned k, unsigned t, unsigned i)
{
    return (int)(k << 30 | t << 26 | (i & MPI_H_INDEX_MASK));
}
/* is h of kind k and type t */
static inline bool mpi_h_is(int h, unsigned k, unsigned t)
{
    return ((unsigned)h >> 26) == (k << 4 | t);
}
static inline unsigned mpi_h_index(int h)
{
    return (unsigned)h & MPI_H_INDEX_MASK;
}

#endif
