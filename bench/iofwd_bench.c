/*
 * iofwd_bench: one round of bench/iofwd.sh, run under ternrun.  Every rank
 * writes COUNT records of SIZE bytes to DIR, all ranks starting together
 * (a barrier) and the wall time ending when every rank is done (a second
 * barrier): for iofwd that is after tern_io_finalize, when the daemon has
 * written everything.
 *
 *   iofwd_bench MODE SIZE COUNT DIR
 *     direct   write() to DIR/rank.<r> (the page cache)
 *     fsync    write() + fsync() of each record
 *     iofwd    tern_io_write through the node's daemon (dir=DIR)
 *
 * Rank 0 prints one JSON object: mode, ranks, size, count, wall_s (start to
 * everything written), call_s (rank 0's mean time inside one write call:
 * write, write + fsync, or tern_io_write), first_call_s (its first call:
 * the daemon's staging pool still empty) and agg_MBps (all ranks' bytes /
 * wall_s, MB = 1e6 bytes).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tern/iofwd.h>
#include <tern/tern.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int die(const char *what)
{
    fprintf(stderr, "iofwd_bench: %s: %s\n", what, tern_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: iofwd_bench direct|fsync|iofwd SIZE COUNT DIR\n");
        return 2;
    }
    const char *mode = argv[1], *dir = argv[4];
    size_t size = strtoull(argv[2], NULL, 0);
    long count = atol(argv[3]);
    tern_context_t *ctx;
    if (tern_init(&ctx) != TERN_OK)
        return die("tern_init");
    int rank = tern_rank(ctx), ranks = tern_size(ctx);
    char *buf = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    for (size_t i = 0; i < size; i++)
        buf[i] = (char)(i * 131 + (size_t)rank);
    int fd = -1;
    bool iofwd = strcmp(mode, "iofwd") == 0, sync = strcmp(mode, "fsync") == 0;
    if (iofwd) {
        char args[1200];
        snprintf(args, sizeof(args), "dir=%s,linger_ms=0", dir);
        if (tern_io_init(buf, size, rank, ranks, args, 1) != TERN_OK)
            return die("tern_io_init");
    } else {
        char path[1100];
        snprintf(path, sizeof(path), "%s/rank.%d", dir, rank);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            perror(path);
            return 1;
        }
    }
    if (tern_barrier(ctx) != TERN_OK)
        return die("barrier");
    double t0 = now(), in_calls = 0, first = 0;
    for (long k = 0; k < count; k++) {
        double a = now();
        if (iofwd) {
            if (tern_io_write(size) != TERN_OK)
                return die("tern_io_write");
        } else {
            if (write(fd, buf, size) != (ssize_t)size || (sync && fsync(fd) != 0)) {
                perror("write");
                return 1;
            }
        }
        in_calls += now() - a;
        if (k == 0)
            first = in_calls;
    }
    if (iofwd ? tern_io_finalize() != TERN_OK : close(fd) != 0)
        return die("finalize");
    if (tern_barrier(ctx) != TERN_OK)
        return die("barrier");
    double wall = now() - t0;
    if (rank == 0)
        printf("{\"mode\": \"%s\", \"ranks\": %d, \"size\": %zu, \"count\": %ld, \"wall_s\": %.6f, "
               "\"call_s\": %.6f, \"first_call_s\": %.6f, \"agg_MBps\": %.1f}\n", mode, ranks,
               size, count, wall, in_calls / (double)count, first,
               (double)ranks * (double)size * (double)count / wall / 1e6);
    free(buf);
    tern_finalize(ctx);
    return 0;
}
