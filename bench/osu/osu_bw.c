/*
 * OSU-style bandwidth (bench/osu, issue 24): rank 0 posts a window of
 * OSU_WINDOW non-blocking sends of each size, rank 1 the matching
 * receives; after both complete their window rank 1 answers with a small
 * acknowledgement, so the next window starts only when this one arrived.
 * MB/s = bytes received / time, MB = 1e6 bytes.  osu_bibw.c builds this
 * file with OSU_BIBW: both ranks post a window of receives and one of
 * sends, and the bytes of both directions count.
 *
 *   mpiexec -n 2 ./osu_bw [-m [MIN:]MAX] [-i ITERS] [-x WARMUP]
 */
#include "osu_common.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef OSU_BIBW
#define TITLE "OSU-style MPI Bi-Directional Bandwidth Test (tern bench/osu)"
#define PROG "osu_bibw"
#else
#define TITLE "OSU-style MPI Bandwidth Test (tern bench/osu)"
#define PROG "osu_bw"
#endif

int main(int argc, char **argv)
{
    osu_opts_t o = {
        .min = 1, .max = 1 << 22, .iters = 100, .iters_large = 20, .warmup = 10, .warmup_large = 2};
    MPI_Request req[2 * OSU_WINDOW];
    MPI_Status st[2 * OSU_WINDOW]; /* not MPI_STATUSES_IGNORE: GCC 12's
                                    * -Wstringop-overflow on MPICH's prototype */
    int rank, size, rc;
#ifndef OSU_BIBW
    char ack[4] = {0};
#endif

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if ((rc = osu_parse(argc, argv, &o)) != 0) {
        MPI_Finalize();
        return rc == 1 ? 0 : rc;
    }
    osu_require(size == 2, rank, PROG ": needs exactly 2 ranks");
    char *sbuf = osu_alloc(o.max), *rbuf = osu_alloc(o.max);
    int peer = 1 - rank;

    osu_header(rank, TITLE, NULL, "Size      Bandwidth (MB/s)");
    for (size_t s = o.min; s <= o.max; s = osu_next_size(s)) {
        long iters = osu_iters(&o, s), warmup = osu_warmup(&o, s);
        int n = (int)s;
        double t0 = 0.0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < warmup + iters; i++) {
            if (i == warmup)
                t0 = MPI_Wtime();
#ifdef OSU_BIBW
            /* receives first, so that no message of the window arrives
             * unexpected */
            for (int w = 0; w < OSU_WINDOW; w++)
                MPI_Irecv(rbuf, n, MPI_CHAR, peer, 10, MPI_COMM_WORLD, &req[w]);
            for (int w = 0; w < OSU_WINDOW; w++)
                MPI_Isend(sbuf, n, MPI_CHAR, peer, 10, MPI_COMM_WORLD, &req[OSU_WINDOW + w]);
            MPI_Waitall(2 * OSU_WINDOW, req, st);
#else
            if (rank == 0) {
                for (int w = 0; w < OSU_WINDOW; w++)
                    MPI_Isend(sbuf, n, MPI_CHAR, peer, 10, MPI_COMM_WORLD, &req[w]);
                MPI_Waitall(OSU_WINDOW, req, st);
                MPI_Recv(ack, 4, MPI_CHAR, peer, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int w = 0; w < OSU_WINDOW; w++)
                    MPI_Irecv(rbuf, n, MPI_CHAR, peer, 10, MPI_COMM_WORLD, &req[w]);
                MPI_Waitall(OSU_WINDOW, req, st);
                MPI_Send(ack, 4, MPI_CHAR, peer, 11, MPI_COMM_WORLD);
            }
#endif
        }
        double t = MPI_Wtime() - t0;
#ifdef OSU_BIBW
        double bytes = 2.0 * (double)s * OSU_WINDOW * (double)iters;
#else
        double bytes = (double)s * OSU_WINDOW * (double)iters;
#endif
        if (rank == 0) {
            printf("%-10zu%18.2f\n", s, bytes / 1e6 / t);
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
