/*
 * Test helper for ternrun's stdio forwarding.  The rank comes from
 * PMIX_RANK (0 when unset), so running it outside ternrun with PMIX_RANK=r
 * prints exactly what rank r prints under ternrun: the tests compare both.
 *
 *   iof_writer lines N        N lines "R<rank> L<n> <payload>\n" on stdout,
 *                             written in chunks that cut lines on purpose
 *   iof_writer both N         N such lines on stdout and N on stderr ("E<rank>")
 *   iof_writer bytes N [END]  at least N bytes of whole lines ("B<rank> ...")
 *                             on stdout, one write() per line, then END:
 *                             exit (default), abort, kill (SIGKILL itself),
 *                             sleep (60 s, to be killed from outside)
 *   iof_writer partial SECS   "partial" without a newline, sleep, then "\n"
 *
 * Payload of line n of rank r: ((n * 7 + r) % 120) copies of 'a' + n % 26.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank;

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);

        if (w <= 0) {
            exit(3);
        }
        p += w;
        n -= (size_t)w;
    }
}

static size_t format_line(char *buf, char kind, long n)
{
    int len = (int)((n * 7 + rank) % 120);
    size_t k = (size_t)sprintf(buf, "%c%d L%ld ", kind, rank, n);

    memset(buf + k, 'a' + (int)(n % 26), (size_t)len);
    k += (size_t)len;
    buf[k++] = '\n';
    return k;
}

/* Lines are gathered in a buffer and written in chunks of 1..4099 bytes
 * whose ends have nothing to do with line ends. */
struct chunker {
    int fd;
    char buf[16384];
    size_t len;
    unsigned seed;
};

static void chunk_flush(struct chunker *c, bool all)
{
    size_t off = 0;

    while (c->len - off > 0) {
        size_t n;

        c->seed = c->seed * 1103515245u + 12345u;
        n = 1 + (c->seed >> 8) % 4099;
        if (n > c->len - off) {
            if (!all) {
                break;
            }
            n = c->len - off;
        }
        write_all(c->fd, c->buf + off, n);
        off += n;
    }
    memmove(c->buf, c->buf + off, c->len - off);
    c->len -= off;
}

static void chunk_put(struct chunker *c, const char *p, size_t n)
{
    if (c->len + n > sizeof(c->buf)) {
        chunk_flush(c, false);
    }
    memcpy(c->buf + c->len, p, n);
    c->len += n;
}

static void lines(long count, bool with_stderr)
{
    struct chunker out = {.fd = 1, .seed = 1u + (unsigned)rank};
    struct chunker err = {.fd = 2, .seed = 77u + (unsigned)rank};
    char line[256];

    for (long i = 0; i < count; i++) {
        chunk_put(&out, line, format_line(line, 'R', i));
        if (with_stderr) {
            chunk_put(&err, line, format_line(line, 'E', i));
        }
    }
    chunk_flush(&out, true);
    chunk_flush(&err, true);
}

static void bytes(long count, const char *end)
{
    char line[256];
    long n = 0;

    while (count > 0) {
        size_t k = format_line(line, 'B', n++);

        write_all(1, line, k);
        count -= (long)k;
    }
    if (strcmp(end, "abort") == 0) {
        abort();
    } else if (strcmp(end, "kill") == 0) {
        raise(SIGKILL);
    } else if (strcmp(end, "sleep") == 0) {
        sleep(60);
    }
}

int main(int argc, char **argv)
{
    const char *r = getenv("PMIX_RANK");

    rank = r ? atoi(r) : 0;
    if (argc >= 3 && strcmp(argv[1], "lines") == 0) {
        lines(atol(argv[2]), false);
    } else if (argc >= 3 && strcmp(argv[1], "both") == 0) {
        lines(atol(argv[2]), true);
    } else if (argc >= 3 && strcmp(argv[1], "bytes") == 0) {
        bytes(atol(argv[2]), argc >= 4 ? argv[3] : "exit");
    } else if (argc >= 3 && strcmp(argv[1], "partial") == 0) {
        write_all(1, "partial", 7);
        sleep((unsigned)atoi(argv[2]));
        write_all(1, "\n", 1);
    } else {
        fprintf(stderr, "usage: iof_writer lines|both|bytes|partial ARGS\n");
        return 2;
    }
    return 0;
}
