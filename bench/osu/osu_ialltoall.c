/*
 * OSU-style MPI_Ialltoall latency and overlap (bench/osu, issue 24): size
 * bytes (MPI_CHAR) from every rank to every rank; osu_nbc.h says how
 * overlap is measured.
 *
 *   mpiexec -n N ./osu_ialltoall [-m [MIN:]MAX] [-i ITERS] [-x WARMUP] [-f]
 */
#include "osu_nbc.h"

static size_t buf_bytes(size_t size, int nranks)
{
    return size * (size_t)nranks;
}

static void start(void *sbuf, void *rbuf, size_t size, MPI_Request *req)
{
    MPI_Ialltoall(sbuf, (int)size, MPI_CHAR, rbuf, (int)size, MPI_CHAR, MPI_COMM_WORLD, req);
}

int main(int argc, char **argv)
{
    static const osu_nbc_t b = {
        .prog = "osu_ialltoall",
        .title = "OSU-style MPI Non-blocking All-to-All Latency Test (tern bench/osu)",
        .min = 1,
        .max = 1 << 20,
        .unit = 1,
        .buf_bytes = buf_bytes,
        .start = start,
    };

    MPI_Init(&argc, &argv);
    return osu_nbc_main(argc, argv, &b);
}
