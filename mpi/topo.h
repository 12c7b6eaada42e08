/*
 * Process topologies (topo.c) and what the neighborhood collectives
 * (neighbor.c) read of them.
 */
#ifndef TERN_MPI_TOPO_H
#define TERN_MPI_TOPO_H

#include "mpi/mpi_internal.h"

typedef struct mpi_topo {
    int kind; /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    /* Cartesian */
    int ndims;
    int *dims, *periods;
    /* graph: index[] cumulative degrees, edges[] the neighbors */
    int nnodes, nedges;
    int *index, *edges;
    /* distributed graph */
    int indegree, outdegree;
    bool weighted;
    int *sources, *sweights, *dests, *dweights;
} mpi_topo_t;

/* comm's topology, NULL: none (the attribute's: valid while comm is) */
const mpi_topo_t *mpi_topo_of(MPI_Comm comm);
void mpi_topo_free(mpi_topo_t *t);
/* MPI_Cart_shift for rank me */
int mpi_cart_shift(const mpi_topo_t *t, int me, int direction, int disp, int *src, int *dst);

#endif
