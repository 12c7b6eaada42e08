/*
 * OSU-style MPI_Iallreduce latency and overlap (bench/osu, issue 24):
 * MPI_SUM over size / 4 MPI_FLOATs; osu_nbc.h says how overlap is
 * measured.
 *
 *   mpiexec -n N ./osu_iallreduce [-m [MIN:]MAX] [-i ITERS] [-x WARMUP] [-f]
 */
#include "osu_nbc.h"

static size_t buf_bytes(size_t size, int nranks)
{
    (void)nranks;
    return size;
}

static void start(void *sbuf, void *rbuf, size_t size, MPI_Request *req)
{
    MPI_Iallreduce(sbuf, rbuf, (int)(size / sizeof(float)), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                   req);
}

int main(int argc, char **argv)
{
    static const osu_nbc_t b = {
        .prog = "osu_iallreduce",
        .title = "OSU-style MPI Non-blocking Allreduce Latency Test (tern bench/osu)",
        .min = 4,
        .max = 1 << 20,
        .unit = sizeof(float),
        .buf_bytes = buf_bytes,
        .start = start,
    };

    MPI_Init(&argc, &argv);
    return osu_nbc_main(argc, argv, &b);
}
