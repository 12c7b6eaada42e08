/*
 * Process topologies and neighborhood collectives: MPI_Dims_create; a
 * Cartesian grid of all ranks (coordinates and ranks both ways, shifts,
 * MPI_Cart_sub, MPI_Comm_dup keeping the topology, a grid smaller than the
 * communicator); a ring as a graph and as distributed graphs (adjacent,
 * weighted; and built from edges one rank gives); the neighborhood
 * collectives, blocking and not, on each, every received block checked
 * against the sender's rank and slot (with two ranks on a periodic
 * dimension the same process is both neighbors: the blocks must still
 * land in the right slots); a derived receive type; and the error of a
 * neighborhood collective without a topology.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi/mpi_check.h"

static void dims(void)
{
    int d2[2] = {0, 0}, d3[3] = {0, 0, 0}, f[3] = {0, 3, 0}, p[2] = {0, 0};
    MPI_Dims_create(12, 2, d2);
    CHECK(d2[0] == 4 && d2[1] == 3, "dims 12/2: %d %d", d2[0], d2[1]);
    MPI_Dims_create(16, 3, d3);
    CHECK(d3[0] == 4 && d3[1] == 2 && d3[2] == 2, "dims 16/3: %d %d %d", d3[0], d3[1], d3[2]);
    MPI_Dims_create(24, 3, f);
    CHECK(f[0] == 4 && f[1] == 3 && f[2] == 2, "dims 24 with a 3: %d %d %d", f[0], f[1], f[2]);
    MPI_Dims_create(7, 2, p);
    CHECK(p[0] == 7 && p[1] == 1, "dims 7/2: %d %d", p[0], p[1]);
    int bad[2] = {3, 0};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int e = MPI_Dims_create(10, 2, bad), cls = -1;
    MPI_Error_class(e, &cls);
    CHECK(e != MPI_SUCCESS, "dims of 10 with a 3 accepted");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void cart(void)
{
    int d[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(size, 2, d);
    MPI_Comm c, dup, row;
    MPI_Cart_create(MPI_COMM_WORLD, 2, d, periods, 0, &c);
    int status = -1, nd = -1;
    MPI_Topo_test(c, &status);
    MPI_Cartdim_get(c, &nd);
    CHECK(status == MPI_CART && nd == 2, "cart: topo %d ndims %d", status, nd);
    int gd[2], gp[2], gc[2];
    MPI_Cart_get(c, 2, gd, gp, gc);
    CHECK(gd[0] == d[0] && gd[1] == d[1] && gp[0] == 1 && gp[1] == 0 &&
              gc[0] == rank / d[1] && gc[1] == rank % d[1],
          "cart_get: %d %d / %d %d / %d %d", gd[0], gd[1], gp[0], gp[1], gc[0], gc[1]);
    for (int r = 0; r < size; r++) {
        int co[2], back = -1;
        MPI_Cart_coords(c, r, 2, co);
        MPI_Cart_rank(c, co, &back);
        CHECK(back == r && co[0] == r / d[1] && co[1] == r % d[1], "rank %d -> %d %d -> %d", r,
              co[0], co[1], back);
    }
    int src, dst;
    MPI_Cart_shift(c, 0, 1, &src, &dst); /* periodic */
    CHECK(src == ((gc[0] - 1 + d[0]) % d[0]) * d[1] + gc[1] &&
              dst == ((gc[0] + 1) % d[0]) * d[1] + gc[1],
          "shift 0: %d %d", src, dst);
    MPI_Cart_shift(c, 1, 1, &src, &dst); /* not periodic */
    CHECK(src == (gc[1] > 0 ? rank - 1 : MPI_PROC_NULL) &&
              dst == (gc[1] < d[1] - 1 ? rank + 1 : MPI_PROC_NULL),
          "shift 1: %d %d", src, dst);
    int wrap[2] = {gc[0] + d[0], gc[1]}, wr = -1;
    MPI_Cart_rank(c, wrap, &wr);
    CHECK(wr == rank, "a periodic coordinate wraps: %d", wr);

    /* neighbors: allgather of ranks, alltoall of rank * 100 + slot */
    int in[4], out[4], want[4];
    int nbr[4];
    for (int dd = 0; dd < 2; dd++)
        MPI_Cart_shift(c, dd, 1, &nbr[2 * dd], &nbr[2 * dd + 1]);
    for (int i = 0; i < 4; i++)
        in[i] = -7;
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, in, 1, MPI_INT, c);
    for (int i = 0; i < 4; i++)
        CHECK(in[i] == (nbr[i] == MPI_PROC_NULL ? -7 : nbr[i]), "cart allgather slot %d: %d", i,
              in[i]);
    for (int i = 0; i < 4; i++) {
        out[i] = rank * 100 + i;
        in[i] = -7;
        /* slot 2d is the down neighbor, who sent me its up block (2d + 1) */
        want[i] = nbr[i] == MPI_PROC_NULL ? -7 : nbr[i] * 100 + (i ^ 1);
    }
    MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, c);
    for (int i = 0; i < 4; i++)
        CHECK(in[i] == want[i], "cart alltoall slot %d: %d, want %d", i, in[i], want[i]);
    /* the same, non-blocking, twice at once, completed in reverse */
    int in2[4];
    MPI_Request r[2];
    for (int i = 0; i < 4; i++)
        in[i] = in2[i] = -7;
    MPI_Ineighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, c, &r[0]);
    MPI_Ineighbor_allgather(&rank, 1, MPI_INT, in2, 1, MPI_INT, c, &r[1]);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++)
        CHECK(in[i] == want[i] && in2[i] == (nbr[i] == MPI_PROC_NULL ? -7 : nbr[i]),
              "cart non-blocking slot %d: %d %d", i, in[i], in2[i]);

    /* a dup keeps the topology; a sub-grid of each row */
    MPI_Comm_dup(c, &dup);
    MPI_Topo_test(dup, &status);
    CHECK(status == MPI_CART, "dup lost the topology: %d", status);
    int keep[2] = {0, 1}, rsize = -1, rnd = -1;
    MPI_Cart_sub(c, keep, &row);
    MPI_Comm_size(row, &rsize);
    MPI_Cartdim_get(row, &rnd);
    CHECK(rsize == d[1] && rnd == 1, "cart_sub: size %d ndims %d", rsize, rnd);
    MPI_Comm_free(&row);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&c);

    /* a grid of fewer processes than the communicator */
    if (size > 1) {
        int one[1] = {size - 1}, per[1] = {0};
        MPI_Comm small;
        MPI_Cart_create(MPI_COMM_WORLD, 1, one, per, 0, &small);
        CHECK((rank == size - 1) == (small == MPI_COMM_NULL), "the rank left out of the grid");
        if (small != MPI_COMM_NULL)
            MPI_Comm_free(&small);
    }
}

static void graphs(void)
{
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 2 * (size_t)size);
    for (int r = 0; r < size; r++) {
        index[r] = 2 * (r + 1);
        edges[2 * r] = (r - 1 + size) % size;
        edges[2 * r + 1] = (r + 1) % size;
    }
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
    int status = -1, nn = -1, ne = -1, cnt = -1, nb[2] = {-1, -1};
    MPI_Topo_test(g, &status);
    MPI_Graphdims_get(g, &nn, &ne);
    MPI_Graph_neighbors_count(g, rank, &cnt);
    MPI_Graph_neighbors(g, rank, 2, nb);
    CHECK(status == MPI_GRAPH && nn == size && ne == 2 * size && cnt == 2 && nb[0] == left &&
              nb[1] == right,
          "graph: %d %d %d %d %d %d", status, nn, ne, cnt, nb[0], nb[1]);
    int in[2] = {-7, -7};
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, in, 1, MPI_INT, g);
    CHECK(in[0] == left && in[1] == right, "graph allgather: %d %d", in[0], in[1]);
    MPI_Comm_free(&g);
    free(index);
    free(edges);

    /* distributed, adjacent and weighted: in from the left, out to the right */
    int sw[1] = {rank + 10}, dw[1] = {rank + 20};
    MPI_Comm dg;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, sw, 1, &right, dw, MPI_INFO_NULL, 0,
                                   &dg);
    int indeg = -1, outdeg = -1, weighted = -1, s1 = -1, w1 = -1, d1 = -1, w2 = -1;
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
    MPI_Dist_graph_neighbors(dg, 1, &s1, &w1, 1, &d1, &w2);
    CHECK(indeg == 1 && outdeg == 1 && weighted && s1 == left && d1 == right && w1 == rank + 10 &&
              w2 == rank + 20,
          "dist graph: %d %d %d %d %d %d %d", indeg, outdeg, weighted, s1, d1, w1, w2);
    int sc[1] = {2}, sd[1] = {0}, rc[1] = {2}, rd[1] = {1};
    int sv[2] = {rank, rank * 2}, rv[3] = {-7, -7, -7};
    MPI_Neighbor_alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, dg);
    CHECK(rv[0] == -7 && rv[1] == left && rv[2] == left * 2, "dist alltoallv: %d %d %d", rv[0],
          rv[1], rv[2]);
    /* alltoallw, non-blocking, with a derived receive type: 2 ints, one apart */
    MPI_Datatype strided;
    MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int rw[4] = {-7, -7, -7, -7};
    MPI_Aint sdw[1] = {0}, rdw[1] = {0};
    int one[1] = {1}, two[1] = {2};
    MPI_Datatype st[1] = {MPI_INT}, rt[1] = {strided};
    MPI_Request req;
    MPI_Ineighbor_alltoallw(sv, two, sdw, st, rw, one, rdw, rt, dg, &req);
    int flag = 0;
    for (int i = 0; i < 1000000 && !flag; i++)
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    if (!flag)
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(rw[0] == left && rw[1] == -7 && rw[2] == left * 2 && rw[3] == -7,
          "dist alltoallw into a vector: %d %d %d %d", rw[0], rw[1], rw[2], rw[3]);
    MPI_Type_free(&strided);
    MPI_Comm_free(&dg);

    /* distributed from edges rank 0 gives for everyone: r -> r + 1 */
    int n = rank == 0 ? size : 0;
    int *srcs = malloc(sizeof(int) * (size_t)size), *degs = malloc(sizeof(int) * (size_t)size),
        *dsts = malloc(sizeof(int) * (size_t)size), *wts = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) {
        srcs[r] = r;
        degs[r] = 1;
        dsts[r] = (r + 1) % size;
        wts[r] = 100 + r;
    }
    MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts, wts, MPI_INFO_NULL, 0, &dg);
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
    s1 = d1 = w1 = w2 = -1;
    MPI_Dist_graph_neighbors(dg, 1, &s1, &w1, 1, &d1, &w2);
    CHECK(indeg == 1 && outdeg == 1 && weighted && s1 == left && d1 == right &&
              w1 == 100 + left && w2 == 100 + rank,
          "dist graph from edges: %d %d %d %d %d %d %d", indeg, outdeg, weighted, s1, d1, w1, w2);
    int got = -7;
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, &got, 1, MPI_INT, dg);
    CHECK(got == left, "allgather on the edge graph: %d", got);
    MPI_Comm_free(&dg);
    free(srcs);
    free(degs);
    free(dsts);
    free(wts);
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dims();
    cart();
    graphs();
    /* no topology */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 0, cls = -1, e = MPI_Neighbor_allgather(&x, 1, MPI_INT, &x, 1, MPI_INT,
                                                     MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "a neighborhood collective without topology: class %d", cls);
    MPI_Barrier(MPI_COMM_WORLD);
    if (failures == 0)
        printf("ok rank %d of %d\n", rank, size);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
