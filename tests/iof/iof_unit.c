/*
 * The IOF engine's operations without a launcher: pull (formats, shared
 * sinks), the line assembler through close, push to stdin with EOF, flush
 * with a timeout, complete giving up on a silent source, and flow control
 * (a stream is not read while its sink is full).
 */
#include "launcher/iof/iof_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                        \
            printf(__VA_ARGS__);                                                               \
            printf("\n");                                                                      \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static void xpipe(int p[2])
{
    if (pipe2(p, O_CLOEXEC) != 0) {
        perror("pipe");
        exit(99);
    }
}

static void put(int fd, const char *s)
{
    if (write(fd, s, strlen(s)) != (ssize_t)strlen(s)) {
        perror("write");
        exit(99);
    }
}

/* rounds of the engine's loop, each waiting at most wait_ms */
static void spin_wait(struct tern_iof *iof, int rounds, int wait_ms)
{
    struct pollfd pfd[64];

    for (int i = 0; i < rounds; i++) {
        size_t n = tern_iof_poll_prepare(iof, pfd, 64);

        poll(pfd, n, n > 0 ? wait_ms : 0);
        tern_iof_progress(iof, pfd, n);
    }
}

static void spin(struct tern_iof *iof, int rounds)
{
    spin_wait(iof, rounds, 10);
}

static size_t slurp(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    ssize_t n;

    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    while (len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) > 0) {
        len += (size_t)n;
    }
    buf[len] = '\0';
    return len;
}

static void test_lines_and_tags(void)
{
    struct tern_iof_format plain = {0}, tagged = {.tag = true};
    struct tern_iof *iof = tern_iof_create(2, false);
    int s0[2], s1[2], out[2], tag[2];
    char buf[4096];

    xpipe(s0);
    xpipe(s1);
    xpipe(out);
    xpipe(tag);
    CHECK(tern_iof_source(iof, 0, TERN_IOF_STDOUT, s0[0]) == 0, "source 0");
    CHECK(tern_iof_source(iof, 1, TERN_IOF_STDOUT, s1[0]) == 0, "source 1");
    CHECK(tern_iof_source(iof, 1, TERN_IOF_STDIN, s1[0]) == -EINVAL, "stdin is not a source");
    CHECK(tern_iof_pull(iof, TERN_IOF_ALL_RANKS, TERN_IOF_STDOUT, out[1], true, &plain) == 0,
          "pull all");
    CHECK(tern_iof_pull(iof, 1, TERN_IOF_STDOUT, tag[1], true, &tagged) == 0, "pull rank 1");

    put(s0[1], "a1\na2-start");
    spin(iof, 3);
    put(s1[1], "b1\nb2");
    spin(iof, 3);
    put(s0[1], "-end\n");
    spin(iof, 3);
    slurp(out[0], buf, sizeof(buf));
    CHECK(strcmp(buf, "a1\nb1\na2-start-end\n") == 0, "whole lines only, got [%s]", buf);

    /* close emits the partial line of rank 1 */
    tern_iof_close(iof, 1, TERN_IOF_STDOUT);
    slurp(out[0], buf, sizeof(buf));
    CHECK(strcmp(buf, "b2") == 0, "close emits the partial line, got [%s]", buf);
    slurp(tag[0], buf, sizeof(buf));
    CHECK(strcmp(buf, "[1,stdout] b1\n[1,stdout] b2") == 0, "tagged, got [%s]", buf);

    close(s0[1]);
    close(s1[1]);
    CHECK(tern_iof_complete(iof, 1000, -1) == 0, "complete");
    tern_iof_destroy(iof);
    close(out[0]);
    close(tag[0]);
}

static void test_push(void)
{
    struct tern_iof *iof = tern_iof_create(3, false);
    int src[2], in0[2], in2[2];
    char buf[64];

    xpipe(src);
    xpipe(in0);
    xpipe(in2);
    CHECK(tern_iof_push(iof, src[0], 0, in0[1]) == 0, "push to 0");
    CHECK(tern_iof_push(iof, src[0], 2, in2[1]) == 0, "push to 2");
    CHECK(tern_iof_push(iof, src[0], 2, in2[1]) == -EINVAL, "push twice to 2");
    put(src[1], "input");
    close(src[1]);
    spin(iof, 4);
    CHECK(read(in0[0], buf, sizeof(buf)) == 5 && memcmp(buf, "input", 5) == 0, "rank 0 input");
    CHECK(read(in0[0], buf, sizeof(buf)) == 0, "rank 0 EOF after the source's EOF");
    CHECK(read(in2[0], buf, sizeof(buf)) == 5 && memcmp(buf, "input", 5) == 0, "rank 2 input");
    CHECK(read(in2[0], buf, sizeof(buf)) == 0, "rank 2 EOF");
    tern_iof_destroy(iof);
    close(src[0]);
    close(in0[0]);
    close(in2[0]);
}

static long ms_since(const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void test_flow_flush_complete(void)
{
    struct tern_iof_format plain = {0};
    struct tern_iof *iof = tern_iof_create(1, false);
    int src[2], out[2];
    static char line[4096], sink[8 << 20];
    size_t written = 0, got;
    struct timespec t0;
    struct iof_sink *s;

    xpipe(src);
    xpipe(out);
    tern_iof_source(iof, 0, TERN_IOF_STDOUT, src[0]);
    tern_iof_pull(iof, 0, TERN_IOF_STDOUT, out[1], true, &plain);
    s = iof->sinks[0];
    memset(line, 'x', sizeof(line) - 1);
    line[sizeof(line) - 1] = '\n';
    fcntl(src[1], F_SETFL, O_NONBLOCK);
    /* nobody reads out[0]: the writer must end up blocked, ternrun bounded */
    for (int i = 0; i < 4000; i++) {
        ssize_t n = write(src[1], line, sizeof(line));

        if (n > 0) {
            written += (size_t)n;
        }
        spin_wait(iof, 1, 0);
    }
    CHECK(written < 4000 * sizeof(line), "the writer was never held back");
    CHECK(s->buf.len <= TERN_IOF_SINK_HIGH + IOF_READ_CHUNK, "sink grew to %zu", s->buf.len);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(tern_iof_flush(iof, 100) == -ETIMEDOUT, "flush with a stuck reader times out");
    CHECK(ms_since(&t0) < 2000, "flush timeout honoured");

    /* a reader now: every byte the writer got in arrives */
    got = 0;
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        ssize_t n = read(out[0], sink, sizeof(sink));

        if (n > 0) {
            got += (size_t)n;
        }
        spin(iof, 1);
        if (got >= written || ms_since(&t0) > 10000) {
            break;
        }
    }
    CHECK(got == written, "read back %zu of %zu bytes", got, written);
    /* complete: the writer is kept open but silent: given up after idle_ms */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(tern_iof_complete(iof, 200, -1) == 0, "complete with a silent open source");
    CHECK(ms_since(&t0) >= 150 && ms_since(&t0) < 3000, "complete gave up after %ld ms",
          ms_since(&t0));
    CHECK(iof->streams[0].fd < 0, "source closed by complete");
    tern_iof_destroy(iof);
    close(src[1]);
    close(out[0]);
}

int main(void)
{
    test_lines_and_tags();
    test_push();
    test_flow_flush_complete();
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
