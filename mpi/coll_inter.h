/*
 * Collectives on intercommunicators (coll_inter.c: blocking;
 * coll_nb_inter.c: non-blocking), which the MPI_ entry points of coll*.c
 * hand an intercommunicator to.  A v or w form's arrays are given as
 * they are; a non-v form's as count with NULL arrays (equal blocks of
 * count, one per remote rank).
 */
#ifndef TERN_MPI_COLL_INTER_H
#define TERN_MPI_COLL_INTER_H

#include "mpi/coll.h"

#pragma GCC visibility push(hidden)

static inline bool mpi_comm_is_inter(MPI_Comm comm)
{
    const mpi_comm_t *c = mpi_comm_get(comm);
    return c != NULL && c->inter;
}

/* the root argument of a rooted collective on an intercommunicator:
 * MPI_ROOT, MPI_PROC_NULL or a remote rank (MPI_ERR_ROOT raised else) */
int coll_inter_root(const coll_t *k, int root);
/* MPI_IN_PLACE is not an intercommunicator's (MPI_ERR_BUFFER raised) */
int coll_inter_no_inplace(const coll_t *k, const void *buf, const char *which);

/* the blocks of a root (or of every process: allgather, alltoall): one
 * per remote rank, counts[i] (or count) elements at displs[i] (or i *
 * count) extents of dt, checked (v: the arrays given, not NULL); block i's
 * address */
int coll_inter_blocks(const coll_t *k, const void *buf, int count, const int counts[],
                      const int displs[], MPI_Datatype dt, bool v);
char *coll_inter_block_at(const void *buf, int i, int count, const int displs[],
                          MPI_Datatype dt);
/* an alltoall(v, w) side's blocks, checked (types: w's, displacements in
 * bytes) */
int coll_inter_a2a_check(const coll_t *k, const void *buf, int count, const int counts[],
                         const int displs[], MPI_Datatype dt, const MPI_Datatype types[]);

int coll_inter_barrier(MPI_Comm comm);
int coll_inter_bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm);
int coll_inter_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                      int root, MPI_Comm comm);
int coll_inter_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                         MPI_Op op, MPI_Comm comm);
int coll_inter_gather(const char *call, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root, MPI_Comm comm);
int coll_inter_scatter(const char *call, const void *sendbuf, int sendcount,
                       const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm);
int coll_inter_allgather(const char *call, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm);
/* alltoall (counts NULL), alltoallv (displacements in extents) and
 * alltoallw (types arrays, displacements in bytes) */
int coll_inter_alltoall(const char *call, const void *sendbuf, int sendcount,
                        const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        const MPI_Datatype sendtypes[], void *recvbuf, int recvcount,
                        const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                        const MPI_Datatype recvtypes[], MPI_Comm comm);
/* reduce_scatter (recvcounts) and reduce_scatter_block (recvcounts NULL) */
int coll_inter_reduce_scatter(const char *call, const void *sendbuf, void *recvbuf,
                              int recvcount, const int recvcounts[], MPI_Datatype dt, MPI_Op op,
                              MPI_Comm comm);

/* the non-blocking forms (coll_nb_inter.c) */
int coll_inter_ibarrier(MPI_Comm comm, MPI_Request *request);
int coll_inter_ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                      MPI_Request *request);
int coll_inter_ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                       int root, MPI_Comm comm, MPI_Request *request);
int coll_inter_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                          MPI_Op op, MPI_Comm comm, MPI_Request *request);
int coll_inter_igather(const char *call, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Request *request);
int coll_inter_iscatter(const char *call, const void *sendbuf, int sendcount,
                        const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                        void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Request *request);
int coll_inter_iallgather(const char *call, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request *request);
int coll_inter_ialltoall(const char *call, const void *sendbuf, int sendcount,
                         const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                         const MPI_Datatype sendtypes[], void *recvbuf, int recvcount,
                         const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                         const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request);
int coll_inter_ireduce_scatter(const char *call, const void *sendbuf, void *recvbuf,
                               int recvcount, const int recvcounts[], MPI_Datatype dt, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request);

#pragma GCC visibility pop

#endif
