/*
 * Process topologies (MPI-3.1 chapter 7): Cartesian, graph and
 * distributed graph communicators, and MPI_Dims_create.
 *
 * A topology is a communicator made by MPI_Comm_split (Cartesian and graph:
 * the first nnodes ranks of the old communicator, in their order: tern does
 * not reorder) or MPI_Comm_dup (distributed graphs), carrying its
 * description as an attribute of a keyval of the layer's own (attr.c): so
 * MPI_Comm_dup copies it (its copy callback) and MPI_Comm_free drops it
 * (its delete callback) like any attribute, and no other file knows of it.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_internal.h"
#include "mpi/topo.h"

static int unweighted_mark, weights_empty_mark;
int *const MPI_UNWEIGHTED = &unweighted_mark;
int *const MPI_WEIGHTS_EMPTY = &weights_empty_mark;

/* ---- the description, kept as an attribute ---------------------------------- */

static int topo_keyval = MPI_KEYVAL_INVALID;

static int *dup_ints(const int *a, int n)
{
    int *b = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (b != NULL && n > 0)
        memcpy(b, a, sizeof(int) * (size_t)n);
    return b;
}

void mpi_topo_free(mpi_topo_t *t)
{
    if (t == NULL)
        return;
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->sources);
    free(t->sweights);
    free(t->dests);
    free(t->dweights);
    free(t);
}

static mpi_topo_t *topo_copy(const mpi_topo_t *s)
{
    mpi_topo_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    *t = *s;
    t->dims = dup_ints(s->dims, s->ndims);
    t->periods = dup_ints(s->periods, s->ndims);
    t->index = dup_ints(s->index, s->nnodes);
    t->edges = dup_ints(s->edges, s->nedges);
    t->sources = dup_ints(s->sources, s->indegree);
    t->sweights = dup_ints(s->sweights, s->indegree);
    t->dests = dup_ints(s->dests, s->outdegree);
    t->dweights = dup_ints(s->dweights, s->outdegree);
    if (t->dims == NULL || t->periods == NULL || t->index == NULL || t->edges == NULL ||
        t->sources == NULL || t->sweights == NULL || t->dests == NULL || t->dweights == NULL) {
        mpi_topo_free(t);
        return NULL;
    }
    return t;
}

static int copy_cb(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra;
    mpi_topo_t *t = topo_copy(in);
    *(void **)out = t;
    *flag = t != NULL;
    return t != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static int delete_cb(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    mpi_topo_free(value);
    return MPI_SUCCESS;
}

const mpi_topo_t *mpi_topo_of(MPI_Comm comm)
{
    if (topo_keyval == MPI_KEYVAL_INVALID)
        return NULL;
    void *v = NULL;
    int flag = 0;
    if (MPI_Comm_get_attr(comm, topo_keyval, &v, &flag) != MPI_SUCCESS || !flag)
        return NULL;
    return v;
}

/* t onto comm (taken over: freed on failure) */
static int attach(MPI_Comm comm, mpi_topo_t *t, const char *call)
{
    if (t == NULL)
        return mpi_raise(comm, MPI_ERR_NO_MEM, "%s: no memory for the topology", call);
    mpi_table_lock();
    bool make = topo_keyval == MPI_KEYVAL_INVALID;
    mpi_table_unlock();
    if (make) { /* the same one on every thread that races here: the first wins */
        int k = MPI_KEYVAL_INVALID;
        int e = MPI_Comm_create_keyval(copy_cb, delete_cb, &k, NULL);
        if (e != MPI_SUCCESS) {
            mpi_topo_free(t);
            return e;
        }
        mpi_table_lock();
        if (topo_keyval == MPI_KEYVAL_INVALID)
            topo_keyval = k;
        mpi_table_unlock();
    }
    int e = MPI_Comm_set_attr(comm, topo_keyval, t);
    if (e != MPI_SUCCESS)
        mpi_topo_free(t);
    return e;
}

static int no_topo(MPI_Comm comm, int kind, const mpi_topo_t **t, const char *call)
{
    int e = mpi_check_comm(comm, call);
    if (e != MPI_SUCCESS)
        return e;
    *t = mpi_topo_of(comm);
    if (*t == NULL || (kind != 0 && (*t)->kind != kind))
        return mpi_raise(comm, MPI_ERR_TOPOLOGY, "%s: the communicator has %s", call,
                         *t == NULL ? "no topology"
                         : kind == MPI_CART ? "no Cartesian topology"
                         : kind == MPI_GRAPH ? "no graph topology"
                                             : "no distributed graph topology");
    return MPI_SUCCESS;
}

/* the first nnodes ranks of old, in order; MPI_COMM_NULL for the others */
static int first_ranks(MPI_Comm old, int nnodes, MPI_Comm *out, const char *call)
{
    int e = mpi_check_comm(old, call);
    if (e != MPI_SUCCESS)
        return e;
    if (out == NULL)
        return mpi_raise(old, MPI_ERR_ARG, "%s: NULL communicator pointer", call);
    const mpi_comm_t *c = mpi_comm_get(old);
    if (nnodes > c->size)
        return mpi_raise(old, MPI_ERR_ARG, "%s: %d processes in the topology, the communicator "
                         "has %d", call, nnodes, c->size);
    return MPI_Comm_split(old, c->rank < nnodes ? 0 : MPI_UNDEFINED, c->rank, out);
}

/* ---- Cartesian ----------------------------------------------------------------- */

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
    static const char call[] = "MPI_Cart_create";
    (void)reorder; /* tern keeps the old ranks */
    int e = mpi_check_comm(comm_old, call);
    if (e == MPI_SUCCESS) /* topologies are intracommunicators' */
        e = mpi_check_intra(comm_old, call);
    if (e != MPI_SUCCESS)
        return e;
    if (ndims < 0 || (ndims > 0 && (dims == NULL || periods == NULL)))
        return mpi_raise(comm_old, MPI_ERR_DIMS, "%s: ndims %d", call, ndims);
    long long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return mpi_raise(comm_old, MPI_ERR_DIMS, "%s: dims[%d] is %d", call, i, dims[i]);
        n *= dims[i];
        if (n > mpi_comm_get(comm_old)->size)
            break;
    }
    if ((e = first_ranks(comm_old, (int)(n < 1LL << 30 ? n : 1LL << 30), comm_cart, call)) !=
        MPI_SUCCESS)
        return e;
    if (*comm_cart == MPI_COMM_NULL)
        return MPI_SUCCESS;
    mpi_topo_t *t = calloc(1, sizeof(*t));
    if (t != NULL) {
        t->kind = MPI_CART;
        t->ndims = ndims;
        t->dims = dup_ints(dims, ndims);
        t->periods = malloc(sizeof(int) * (size_t)(ndims > 0 ? ndims : 1));
        if (t->dims == NULL || t->periods == NULL) {
            mpi_topo_free(t);
            t = NULL;
        } else {
            for (int i = 0; i < ndims; i++)
                t->periods[i] = periods[i] != 0;
        }
    }
    if ((e = attach(*comm_cart, t, call)) != MPI_SUCCESS)
        MPI_Comm_free(comm_cart);
    return e;
}

int MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    const mpi_topo_t *t;
    int e = no_topo(comm, MPI_CART, &t, "MPI_Cartdim_get");
    if (e == MPI_SUCCESS && ndims == NULL)
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Cartdim_get: NULL pointer");
    if (e == MPI_SUCCESS)
        *ndims = t->ndims;
    return e;
}

/* rank -> coordinates: row-major, the last dimension fastest (MPI-3.1 7.5.4) */
static void coords_of(const mpi_topo_t *t, int rank, int *coords)
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    const mpi_topo_t *t;
    int e = no_topo(comm, MPI_CART, &t, "MPI_Cart_get");
    if (e != MPI_SUCCESS)
        return e;
    if (maxdims < t->ndims || (t->ndims > 0 && (dims == NULL || periods == NULL || coords == NULL)))
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Cart_get: room for %d dimensions, the topology "
                         "has %d", maxdims, t->ndims);
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
    }
    coords_of(t, mpi_comm_get(comm)->rank, coords);
    return MPI_SUCCESS;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    const mpi_topo_t *t;
    int e = no_topo(comm, MPI_CART, &t, "MPI_Cart_rank");
    if (e != MPI_SUCCESS)
        return e;
    if (rank == NULL || (t->ndims > 0 && coords == NULL))
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Cart_rank: NULL argument");
    int r = 0;
    for (int d = 0; d < t->ndims; d++) {
        int c = coords[d];
        if (t->periods[d])
            c = ((c % t->dims[d]) + t->dims[d]) % t->dims[d];
        else if (c < 0 || c >= t->dims[d])
            return mpi_raise(comm, MPI_ERR_ARG, "MPI_Cart_rank: coordinate %d of dimension %d "
                             "(not periodic, size %d)", coords[d], d, t->dims[d]);
        r = r * t->dims[d] + c;
    }
    *rank = r;
    return MPI_SUCCESS;
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    const mpi_topo_t *t;
    int e = no_topo(comm, MPI_CART, &t, "MPI_Cart_coords");
    if (e != MPI_SUCCESS)
        return e;
    if (rank < 0 || rank >= mpi_comm_get(comm)->size)
        return mpi_raise(comm, MPI_ERR_RANK, "MPI_Cart_coords: rank %d", rank);
    if (maxdims < t->ndims || (t->ndims > 0 && coords == NULL))
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Cart_coords: room for %d dimensions, the "
                         "topology has %d", maxdims, t->ndims);
    coords_of(t, rank, coords);
    return MPI_SUCCESS;
}

int mpi_cart_shift(const mpi_topo_t *t, int me, int direction, int disp, int *src, int *dst)
{
    int coords[64];
    coords_of(t, me, coords);
    int c0 = coords[direction], n = t->dims[direction];
    for (int k = 0; k < 2; k++) {
        int c = c0 + (k == 0 ? -disp : disp);
        int *out = k == 0 ? src : dst;
        if (t->periods[direction])
            c = ((c % n) + n) % n;
        else if (c < 0 || c >= n) {
            *out = MPI_PROC_NULL;
            continue;
        }
        coords[direction] = c;
        int r = 0;
        for (int d = 0; d < t->ndims; d++)
            r = r * t->dims[d] + coords[d];
        *out = r;
    }
    return MPI_SUCCESS;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    const mpi_topo_t *t;
    int e = no_topo(comm, MPI_CART, &t, "MPI_Cart_shift");
    if (e != MPI_SUCCESS)
        return e;
    if (direction < 0 || direction >= t->ndims || rank_source == NULL || rank_dest == NULL)
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Cart_shift: direction %d (the topology has %d "
                         "dimensions)", direction, t->ndims);
    if (t->ndims > 64)
        return mpi_raise(comm, MPI_ERR_DIMS, "MPI_Cart_shift: more than 64 dimensions");
    return mpi_cart_shift(t, mpi_comm_get(comm)->rank, direction, disp, rank_source, rank_dest);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char call[] = "MPI_Cart_sub";
    const mpi_topo_t *t;
    int e = no_topo(comm, MPI_CART, &t, call);
    if (e != MPI_SUCCESS)
        return e;
    if (newcomm == NULL || (t->ndims > 0 && remain_dims == NULL) || t->ndims > 64)
        return mpi_raise(comm, MPI_ERR_ARG, "%s: NULL argument", call);
    int coords[64], dims[64], periods[64], nd = 0, color = 0, key = 0;
    coords_of(t, mpi_comm_get(comm)->rank, coords);
    for (int d = 0; d < t->ndims; d++) {
        if (remain_dims[d]) { /* the new rank: the kept coordinates, row-major */
            key = key * t->dims[d] + coords[d];
            dims[nd] = t->dims[d];
            periods[nd++] = t->periods[d];
        } else { /* one communicator per value of the dropped ones */
            color = color * t->dims[d] + coords[d];
        }
    }
    if ((e = MPI_Comm_split(comm, color, key, newcomm)) != MPI_SUCCESS)
        return e;
    mpi_topo_t *s = calloc(1, sizeof(*s));
    if (s != NULL) {
        s->kind = MPI_CART;
        s->ndims = nd;
        s->dims = dup_ints(dims, nd);
        s->periods = dup_ints(periods, nd);
        if (s->dims == NULL || s->periods == NULL) {
            mpi_topo_free(s);
            s = NULL;
        }
    }
    if ((e = attach(*newcomm, s, call)) != MPI_SUCCESS)
        MPI_Comm_free(newcomm);
    return e;
}

int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    int e = mpi_check_comm(comm, "MPI_Cart_map");
    if (e == MPI_SUCCESS)
        e = mpi_check_intra(comm, "MPI_Cart_map");
    if (e != MPI_SUCCESS)
        return e;
    (void)periods;
    if (newrank == NULL || ndims < 0 || (ndims > 0 && dims == NULL))
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Cart_map: bad arguments");
    long long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return mpi_raise(comm, MPI_ERR_DIMS, "MPI_Cart_map: dims[%d] is %d", i, dims[i]);
        n *= dims[i];
    }
    const mpi_comm_t *c = mpi_comm_get(comm);
    if (n > c->size)
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Cart_map: %lld processes, the communicator has "
                         "%d", n, c->size);
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* MPI-3.1 7.5.2: the free entries of dims as close to each other as can be,
 * non-increasing: the prime factors of what is left, largest first, each
 * to the free entry whose product is the smallest so far */
int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    if (nnodes <= 0 || ndims < 0 || (ndims > 0 && dims == NULL))
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Dims_create: nnodes %d, ndims %d",
                         nnodes, ndims);
    int fixed = 1, nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return mpi_raise(MPI_COMM_WORLD, MPI_ERR_DIMS, "MPI_Dims_create: dims[%d] is %d", i,
                             dims[i]);
        if (dims[i] > 0)
            fixed *= dims[i];
        else
            nfree++;
    }
    if (nnodes % fixed != 0)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_DIMS, "MPI_Dims_create: %d processes do not "
                         "divide into the given dimensions (their product %d)", nnodes, fixed);
    int left = nnodes / fixed;
    if (nfree == 0)
        return left == 1 ? MPI_SUCCESS
                         : mpi_raise(MPI_COMM_WORLD, MPI_ERR_DIMS, "MPI_Dims_create: the "
                                     "dimensions make %d, not %d", fixed, nnodes);
    int *f = malloc(sizeof(int) * (size_t)nfree), primes[32], np = 0;
    if (f == NULL)
        return mpi_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Dims_create: no memory");
    for (int i = 0; i < nfree; i++)
        f[i] = 1;
    for (int p = 2; (long long)p * p <= left; p++)
        while (left % p == 0) {
            primes[np++] = p;
            left /= p;
        }
    if (left > 1)
        primes[np++] = left;
    for (int i = np - 1; i >= 0; i--) { /* largest first */
        int small = 0;
        for (int k = 1; k < nfree; k++)
            if (f[k] < f[small])
                small = k;
        f[small] *= primes[i];
    }
    for (int i = 0; i < nfree; i++) /* non-increasing */
        for (int k = i + 1; k < nfree; k++)
            if (f[k] > f[i]) {
                int x = f[i];
                f[i] = f[k];
                f[k] = x;
            }
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = f[k++];
    free(f);
    return MPI_SUCCESS;
}

/* ---- graphs ----------------------------------------------------------------------- */

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *comm_graph)
{
    static const char call[] = "MPI_Graph_create";
    (void)reorder;
    int e = mpi_check_comm(comm_old, call);
    if (e == MPI_SUCCESS) /* topologies are intracommunicators' */
        e = mpi_check_intra(comm_old, call);
    if (e != MPI_SUCCESS)
        return e;
    if (nnodes < 0 || (nnodes > 0 && (index == NULL || edges == NULL)))
        return mpi_raise(comm_old, MPI_ERR_ARG, "%s: nnodes %d", call, nnodes);
    int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i > 0 ? index[i - 1] : 0))
            return mpi_raise(comm_old, MPI_ERR_ARG, "%s: index[%d] %d is below the one before",
                             call, i, index[i]);
    for (int i = 0; i < nedges; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return mpi_raise(comm_old, MPI_ERR_ARG, "%s: edge %d goes to %d (nodes 0..%d)", call,
                             i, edges[i], nnodes - 1);
    if ((e = first_ranks(comm_old, nnodes, comm_graph, call)) != MPI_SUCCESS)
        return e;
    if (*comm_graph == MPI_COMM_NULL)
        return MPI_SUCCESS;
    mpi_topo_t *t = calloc(1, sizeof(*t));
    if (t != NULL) {
        t->kind = MPI_GRAPH;
        t->nnodes = nnodes;
        t->nedges = nedges;
        t->index = dup_ints(index, nnodes);
        t->edges = dup_ints(edges, nedges);
        if (t->index == NULL || t->edges == NULL) {
            mpi_topo_free(t);
            t = NULL;
        }
    }
    if ((e = attach(*comm_graph, t, call)) != MPI_SUCCESS)
        MPI_Comm_free(comm_graph);
    return e;
}

int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    const mpi_topo_t *t;
    int e = no_topo(comm, MPI_GRAPH, &t, "MPI_Graphdims_get");
    if (e == MPI_SUCCESS && (nnodes == NULL || nedges == NULL))
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Graphdims_get: NULL pointer");
    if (e == MPI_SUCCESS) {
        *nnodes = t->nnodes;
        *nedges = t->nedges;
    }
    return e;
}

int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    const mpi_topo_t *t;
    int e = no_topo(comm, MPI_GRAPH, &t, "MPI_Graph_get");
    if (e != MPI_SUCCESS)
        return e;
    if ((maxindex > 0 && index == NULL) || (maxedges > 0 && edges == NULL))
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Graph_get: NULL array");
    for (int i = 0; i < t->nnodes && i < maxindex; i++)
        index[i] = t->index[i];
    for (int i = 0; i < t->nedges && i < maxedges; i++)
        edges[i] = t->edges[i];
    return MPI_SUCCESS;
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    const mpi_topo_t *t;
    int e = no_topo(comm, MPI_GRAPH, &t, "MPI_Graph_neighbors_count");
    if (e != MPI_SUCCESS)
        return e;
    if (rank < 0 || rank >= t->nnodes || nneighbors == NULL)
        return mpi_raise(comm, MPI_ERR_RANK, "MPI_Graph_neighbors_count: rank %d", rank);
    *nneighbors = t->index[rank] - (rank > 0 ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    const mpi_topo_t *t;
    int e = no_topo(comm, MPI_GRAPH, &t, "MPI_Graph_neighbors");
    if (e != MPI_SUCCESS)
        return e;
    if (rank < 0 || rank >= t->nnodes)
        return mpi_raise(comm, MPI_ERR_RANK, "MPI_Graph_neighbors: rank %d", rank);
    int first = rank > 0 ? t->index[rank - 1] : 0, n = t->index[rank] - first;
    if (n > 0 && (neighbors == NULL || maxneighbors <= 0))
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Graph_neighbors: NULL array");
    for (int i = 0; i < n && i < maxneighbors; i++)
        neighbors[i] = t->edges[first + i];
    return MPI_SUCCESS;
}

int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    (void)index, (void)edges;
    int e = mpi_check_comm(comm, "MPI_Graph_map");
    if (e == MPI_SUCCESS)
        e = mpi_check_intra(comm, "MPI_Graph_map");
    if (e != MPI_SUCCESS)
        return e;
    const mpi_comm_t *c = mpi_comm_get(comm);
    if (newrank == NULL || nnodes < 0 || nnodes > c->size)
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Graph_map: nnodes %d", nnodes);
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Topo_test(MPI_Comm comm, int *status)
{
    int e = mpi_check_comm(comm, "MPI_Topo_test");
    if (e != MPI_SUCCESS)
        return e;
    if (status == NULL)
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Topo_test: NULL pointer");
    const mpi_topo_t *t = mpi_topo_of(comm);
    *status = t != NULL ? t->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- distributed graphs ---------------------------------------------------------- */

static bool weights_given(const int *w)
{
    return w != MPI_UNWEIGHTED;
}

/* comm_dist_graph: a dup of old with these neighbors (weights may be NULL) */
static int dist_make(MPI_Comm old, int indeg, const int *src, const int *sw, int outdeg,
                     const int *dst, const int *dw, bool weighted, MPI_Comm *out,
                     const char *call)
{
    int e = MPI_Comm_dup(old, out);
    if (e != MPI_SUCCESS)
        return e;
    mpi_topo_t *t = calloc(1, sizeof(*t));
    if (t != NULL) {
        t->kind = MPI_DIST_GRAPH;
        t->indegree = indeg;
        t->outdegree = outdeg;
        t->weighted = weighted;
        t->sources = dup_ints(src, indeg);
        t->dests = dup_ints(dst, outdeg);
        t->sweights = calloc((size_t)(indeg > 0 ? indeg : 1), sizeof(int));
        t->dweights = calloc((size_t)(outdeg > 0 ? outdeg : 1), sizeof(int));
        if (t->sources == NULL || t->dests == NULL || t->sweights == NULL ||
            t->dweights == NULL) {
            mpi_topo_free(t);
            t = NULL;
        } else {
            if (weighted && sw != NULL && indeg > 0)
                memcpy(t->sweights, sw, sizeof(int) * (size_t)indeg);
            if (weighted && dw != NULL && outdeg > 0)
                memcpy(t->dweights, dw, sizeof(int) * (size_t)outdeg);
        }
    }
    if ((e = attach(*out, t, call)) != MPI_SUCCESS)
        MPI_Comm_free(out);
    return e;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    static const char call[] = "MPI_Dist_graph_create_adjacent";
    (void)info, (void)reorder;
    int e = mpi_check_comm(comm_old, call);
    if (e == MPI_SUCCESS) /* topologies are intracommunicators' */
        e = mpi_check_intra(comm_old, call);
    if (e != MPI_SUCCESS)
        return e;
    int n = mpi_comm_get(comm_old)->size;
    if (indegree < 0 || outdegree < 0 || (indegree > 0 && sources == NULL) ||
        (outdegree > 0 && destinations == NULL) || comm_dist_graph == NULL)
        return mpi_raise(comm_old, MPI_ERR_ARG, "%s: degrees %d / %d", call, indegree,
                         outdegree);
    for (int i = 0; i < indegree; i++)
        if (sources[i] < 0 || sources[i] >= n)
            return mpi_raise(comm_old, MPI_ERR_RANK, "%s: source %d", call, sources[i]);
    for (int i = 0; i < outdegree; i++)
        if (destinations[i] < 0 || destinations[i] >= n)
            return mpi_raise(comm_old, MPI_ERR_RANK, "%s: destination %d", call, destinations[i]);
    bool weighted = weights_given(sourceweights) && weights_given(destweights);
    return dist_make(comm_old, indegree, sources,
                     sourceweights == MPI_WEIGHTS_EMPTY ? NULL : sourceweights, outdegree,
                     destinations, destweights == MPI_WEIGHTS_EMPTY ? NULL : destweights,
                     weighted, comm_dist_graph, call);
}

/* Every process gives edges (sources[i] -> its degrees[i] destinations):
 * each edge goes to its source (an out-neighbor there) and to its
 * destination (an in-neighbor there), by one all-to-all of counts and one
 * of (source, destination, weight) triples; each process keeps the edges
 * in the order of the ranks that gave them, then their order there. */
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *comm_dist_graph)
{
    static const char call[] = "MPI_Dist_graph_create";
    (void)info, (void)reorder;
    int e = mpi_check_comm(comm_old, call);
    if (e == MPI_SUCCESS) /* topologies are intracommunicators' */
        e = mpi_check_intra(comm_old, call);
    if (e != MPI_SUCCESS)
        return e;
    const mpi_comm_t *c = mpi_comm_get(comm_old);
    int size = c->size, me = c->rank;
    if (n < 0 || (n > 0 && (sources == NULL || degrees == NULL)) || comm_dist_graph == NULL)
        return mpi_raise(comm_old, MPI_ERR_ARG, "%s: n %d", call, n);
    long long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (sources[i] < 0 || sources[i] >= size || degrees[i] < 0)
            return mpi_raise(comm_old, MPI_ERR_ARG, "%s: source %d with degree %d", call,
                             sources[i], degrees[i]);
        nedges += degrees[i];
    }
    if (nedges > 0 && destinations == NULL)
        return mpi_raise(comm_old, MPI_ERR_ARG, "%s: NULL destinations", call);
    for (long long i = 0; i < nedges; i++)
        if (destinations[i] < 0 || destinations[i] >= size)
            return mpi_raise(comm_old, MPI_ERR_RANK, "%s: destination %d", call, destinations[i]);
    /* is the graph weighted: every process must say the same (MPI) */
    int w_local = weights_given(weights), w_all = 0;
    if ((e = MPI_Allreduce(&w_local, &w_all, 1, MPI_INT, MPI_MIN, comm_old)) != MPI_SUCCESS)
        return e;
    int *scount = calloc((size_t)size, sizeof(int)), *rcount = calloc((size_t)size, sizeof(int));
    int *sdisp = calloc((size_t)size, sizeof(int)), *rdisp = calloc((size_t)size, sizeof(int));
    int *sbuf = malloc(sizeof(int) * (size_t)(nedges * 6 + 1)), *rbuf = NULL;
    int *src = NULL, *sw = NULL, *dst = NULL, *dw = NULL;
    e = MPI_ERR_NO_MEM;
    if (scount == NULL || rcount == NULL || sdisp == NULL || rdisp == NULL || sbuf == NULL)
        goto out;
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            scount[sources[i]] += 3;
            if (destinations[k] != sources[i]) /* an edge to itself goes there once */
                scount[destinations[k]] += 3;
        }
    for (int r = 1; r < size; r++)
        sdisp[r] = sdisp[r - 1] + scount[r - 1];
    {
        int *fill = calloc((size_t)size, sizeof(int));
        if (fill == NULL)
            goto out;
        for (int i = 0, k = 0; i < n; i++)
            for (int j = 0; j < degrees[i]; j++, k++) {
                int s = sources[i], d = destinations[k];
                int w = w_all && weights != MPI_WEIGHTS_EMPTY ? weights[k] : 0;
                int trip[3] = {s, d, w};
                memcpy(&sbuf[sdisp[s] + fill[s]], trip, sizeof(trip));
                fill[s] += 3;
                if (d != s) {
                    memcpy(&sbuf[sdisp[d] + fill[d]], trip, sizeof(trip));
                    fill[d] += 3;
                }
            }
        free(fill);
    }
    if ((e = MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm_old)) != MPI_SUCCESS)
        goto out;
    long long rtotal = 0;
    for (int r = 0; r < size; r++) {
        rdisp[r] = (int)rtotal;
        rtotal += rcount[r];
    }
    e = MPI_ERR_NO_MEM;
    if ((rbuf = malloc(sizeof(int) * (size_t)(rtotal + 1))) == NULL)
        goto out;
    if ((e = MPI_Alltoallv(sbuf, scount, sdisp, MPI_INT, rbuf, rcount, rdisp, MPI_INT,
                           comm_old)) != MPI_SUCCESS)
        goto out;
    int indeg = 0, outdeg = 0;
    for (long long i = 0; i < rtotal; i += 3) {
        indeg += rbuf[i + 1] == me;
        outdeg += rbuf[i] == me;
    }
    e = MPI_ERR_NO_MEM;
    src = malloc(sizeof(int) * (size_t)(indeg + 1));
    sw = malloc(sizeof(int) * (size_t)(indeg + 1));
    dst = malloc(sizeof(int) * (size_t)(outdeg + 1));
    dw = malloc(sizeof(int) * (size_t)(outdeg + 1));
    if (src == NULL || sw == NULL || dst == NULL || dw == NULL)
        goto out;
    indeg = outdeg = 0;
    for (long long i = 0; i < rtotal; i += 3) {
        if (rbuf[i + 1] == me) {
            src[indeg] = rbuf[i];
            sw[indeg++] = rbuf[i + 2];
        }
        if (rbuf[i] == me) {
            dst[outdeg] = rbuf[i + 1];
            dw[outdeg++] = rbuf[i + 2];
        }
    }
    e = dist_make(comm_old, indeg, src, sw, outdeg, dst, dw, w_all != 0, comm_dist_graph, call);
out:
    if (e == MPI_ERR_NO_MEM)
        e = mpi_raise(comm_old, MPI_ERR_NO_MEM, "%s: no memory for %lld edges", call, nedges);
    free(scount);
    free(rcount);
    free(sdisp);
    free(rdisp);
    free(sbuf);
    free(rbuf);
    free(src);
    free(sw);
    free(dst);
    free(dw);
    return e;
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    const mpi_topo_t *t;
    int e = no_topo(comm, MPI_DIST_GRAPH, &t, "MPI_Dist_graph_neighbors_count");
    if (e == MPI_SUCCESS && (indegree == NULL || outdegree == NULL || weighted == NULL))
        e = mpi_raise(comm, MPI_ERR_ARG, "MPI_Dist_graph_neighbors_count: NULL pointer");
    if (e == MPI_SUCCESS) {
        *indegree = t->indegree;
        *outdegree = t->outdegree;
        *weighted = t->weighted;
    }
    return e;
}

int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                             int maxoutdegree, int destinations[], int destweights[])
{
    const mpi_topo_t *t;
    int e = no_topo(comm, MPI_DIST_GRAPH, &t, "MPI_Dist_graph_neighbors");
    if (e != MPI_SUCCESS)
        return e;
    if (maxindegree < t->indegree || maxoutdegree < t->outdegree ||
        (t->indegree > 0 && sources == NULL) || (t->outdegree > 0 && destinations == NULL))
        return mpi_raise(comm, MPI_ERR_ARG, "MPI_Dist_graph_neighbors: room for %d / %d, the "
                         "graph has %d / %d", maxindegree, maxoutdegree, t->indegree,
                         t->outdegree);
    for (int i = 0; i < t->indegree; i++) {
        sources[i] = t->sources[i];
        if (t->weighted && sourceweights != NULL && sourceweights != MPI_UNWEIGHTED)
            sourceweights[i] = t->sweights[i];
    }
    for (int i = 0; i < t->outdegree; i++) {
        destinations[i] = t->dests[i];
        if (t->weighted && destweights != NULL && destweights != MPI_UNWEIGHTED)
            destweights[i] = t->dweights[i];
    }
    return MPI_SUCCESS;
}
