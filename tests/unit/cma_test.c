/*
 * Unit test of the same-host copy's mechanics (engine/cma.c), between this
 * process and forked children, no job:
 *   - host identity (the engine's, engine/address.c, which the cookies
 *     carry): this process's is known; a child in a new network namespace
 *     (root only) has another one, differing in the namespace alone;
 *   - cookies: OFFER / KEY / HELLO filled and parsed back (inline segments
 *     and the iovec array's address), and refused with TERN_ERR_MALFORMED
 *     when truncated, of another kind, version or magic, or inconsistent;
 *   - the copy step: a 9 MiB get from a child's 3000 uneven segments into
 *     1500 local ones (the segments past the inline ones read from the
 *     child's iovec array; several steps of at most 4 MiB and 64 segments),
 *     a put into a child that checks what it received, the test hook
 *     refusing once 1 MiB has moved (-EPERM), a
 *     real refusal by the kernel (a reader without CAP_SYS_PTRACE and a
 *     non-dumpable target: -EPERM), a bad remote address (-EFAULT),
 *     segments shorter than the transfer (-EMSGSIZE) and a peer that has
 *     exited (-ESRCH);
 *   - TERN_CMA_THRESHOLD-style sizes: the word, suffixes, bad values.
 * Every child is bounded by alarm() and reaped.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/cma.h"
#include "engine/log.h"

#include "tests/unit/expect.h"

static uint8_t pat(uint64_t seed, size_t i)
{
    return (uint8_t)(((seed + 1) * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull) >> 56);
}

/* A child that runs prep(), says so on a pipe, then waits for one byte on
 * go (or EOF) and exits with what check() says.  Returns its pid once prep
 * has run. */
static pid_t child(int go[2], void (*prep)(void), int (*check)(void))
{
    int ready[2];
    if (pipe(go) != 0 || pipe(ready) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        alarm(60);
        close(go[1]);
        close(ready[0]);
        if (prep != NULL)
            prep();
        char c = 1;
        ssize_t n = write(ready[1], &c, 1);
        n += read(go[0], &c, 1);
        (void)n;
        _exit(check != NULL ? check() : 0);
    }
    close(go[0]);
    close(ready[1]);
    char c;
    ssize_t n = read(ready[0], &c, 1);
    (void)n;
    close(ready[0]);
    return pid;
}

static int finish_child(int go[2], pid_t pid)
{
    char c = 1;
    ssize_t n = write(go[1], &c, 1);
    (void)n;
    close(go[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- host identity --------------------------------------------------------- */

static void test_host(void)
{
    /* a child in a network namespace of its own: another "host".  It reads
     * the (once per process) identity before this process has: run first. */
    int p[2];
    if (pipe(p) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        alarm(30);
        int ok = unshare(CLONE_NEWNET) == 0 ? 1 : 0;
        tern_host_id_t c = *tern_host_self();
        ssize_t n = write(p[1], &ok, sizeof(ok));
        n += write(p[1], &c, sizeof(c));
        _exit(n == (ssize_t)(sizeof(ok) + sizeof(c)) ? 0 : 1);
    }
    close(p[1]);
    int ok = 0;
    tern_host_id_t c;
    ssize_t n = read(p[0], &ok, sizeof(ok));
    n += read(p[0], &c, sizeof(c));
    close(p[0]);
    waitpid(pid, NULL, 0);
    const tern_host_id_t *h = tern_host_self();
    EXPECT(tern_host_same(h, h), "this process's host identity is known (a boot id)");
    EXPECT(n == (ssize_t)(sizeof(ok) + sizeof(c)), "the child said its identity");
    if (ok == 1) {
        EXPECT(!tern_host_same(h, &c), "a new network namespace is another host");
        EXPECT(memcmp(h->boot_id, c.boot_id, 16) == 0 && h->pid_ns == c.pid_ns &&
                   h->net_ns != c.net_ns,
               "only the network namespace differs");
    } else {
        printf("note: unshare(CLONE_NEWNET) not permitted here: the namespace part was not run\n");
    }
}

/* ---- cookies ----------------------------------------------------------------- */

static void test_cookies(void)
{
    char buf[64];
    struct iovec iov[20];
    for (int i = 0; i < 20; i++) {
        iov[i].iov_base = buf + i;
        iov[i].iov_len = (size_t)i + 1;
    }
    tern_cursor_t cur;
    tern_cursor_init(&cur, iov, 20);
    tern_cma_cookie_t c, back;
    size_t len = tern_cma_cookie_fill(&c, TERN_CMA_OFFER, &cur, 210);
    EXPECT(len == TERN_CMA_COOKIE_HDR + TERN_CMA_INLINE * sizeof(tern_cma_seg_t),
           "20 segments: %zu bytes, 12 inline", len);
    EXPECT(tern_cma_cookie_parse(&c, len, TERN_CMA_OFFER, &back, "rank 1") == TERN_OK,
           "an OFFER parses: %s", tern_last_error());
    EXPECT(back.pid == getpid() && back.iovcnt == 20 && back.len == 210 &&
               back.iov_addr == (uint64_t)(uintptr_t)iov &&
               back.seg[11].base == (uint64_t)(uintptr_t)(buf + 11) && back.seg[11].len == 12 &&
               tern_host_same(&back.host, tern_host_self()),
           "the OFFER says what was filled");

    tern_cursor_init(&cur, iov, 1);
    len = tern_cma_cookie_fill(&c, TERN_CMA_KEY, &cur, 1);
    EXPECT(len == TERN_CMA_COOKIE_HDR + sizeof(tern_cma_seg_t), "one segment: %zu bytes", len);
    EXPECT(tern_cma_cookie_parse(&c, len, TERN_CMA_KEY, &back, "rank 1") == TERN_OK, "a KEY");
    EXPECT(tern_cma_cookie_parse(&c, len, TERN_CMA_OFFER, &back, "rank 1") == TERN_ERR_MALFORMED &&
               strstr(tern_last_error(), "another kind") != NULL &&
               strstr(tern_last_error(), "rank 1") != NULL,
           "a KEY is not an OFFER: %s", tern_last_error());
    EXPECT(tern_cma_cookie_parse(&c, len - 1, TERN_CMA_KEY, &back, "rank 1") == TERN_ERR_MALFORMED,
           "truncated");
    EXPECT(tern_cma_cookie_parse(&c, 10, TERN_CMA_KEY, &back, "rank 1") == TERN_ERR_MALFORMED,
           "shorter than the header");

    len = tern_cma_cookie_fill(&c, TERN_CMA_HELLO, NULL, 5);
    EXPECT(len == TERN_CMA_COOKIE_HDR, "a HELLO is a header");
    EXPECT(tern_cma_cookie_parse(&c, len, TERN_CMA_HELLO, &back, "rank 1") == TERN_OK &&
               back.len == 5 && back.iovcnt == 0,
           "a HELLO parses");
    tern_cma_cookie_t bad = c;
    bad.magic ^= 1;
    EXPECT(tern_cma_cookie_parse(&bad, len, TERN_CMA_HELLO, &back, "rank 1") == TERN_ERR_MALFORMED,
           "bad magic");
    bad = c;
    bad.version = 9;
    EXPECT(tern_cma_cookie_parse(&bad, len, TERN_CMA_HELLO, &back, "rank 1") ==
                   TERN_ERR_MALFORMED &&
               strstr(tern_last_error(), "another version") != NULL,
           "another version");
    bad = c;
    bad.pid = 0;
    EXPECT(tern_cma_cookie_parse(&bad, len, TERN_CMA_HELLO, &back, "rank 1") == TERN_ERR_MALFORMED,
           "no pid");
    bad = c;
    bad.iovcnt = 3; /* says 3 inline segments, carries none */
    EXPECT(tern_cma_cookie_parse(&bad, len, TERN_CMA_HELLO, &back, "rank 1") == TERN_ERR_MALFORMED,
           "segments missing");
}

/* ---- the copy ------------------------------------------------------------------- */

enum { NS = 3000, NR = 1500 };
static uint8_t *remote;     /* the child's copy differs from ours after fork */
static struct iovec *rsegs; /* NS uneven segments of remote, one-byte gaps */
static size_t total;

static void setup_remote(void)
{
    total = 0;
    for (int i = 0; i < NS; i++)
        total += (size_t)(i % 13) * 613 + 1;
    remote = malloc(total + NS);
    rsegs = malloc(NS * sizeof(*rsegs));
    size_t off = 0;
    for (int i = 0; i < NS; i++) {
        rsegs[i].iov_base = remote + off + (size_t)i;
        rsegs[i].iov_len = (size_t)(i % 13) * 613 + 1;
        off += rsegs[i].iov_len;
    }
}

/* child: its data is pattern 1 in segment order */
static void fill_remote(void)
{
    size_t k = 0;
    for (int i = 0; i < NS; i++)
        for (size_t j = 0; j < rsegs[i].iov_len; j++)
            ((uint8_t *)rsegs[i].iov_base)[j] = pat(1, k++);
}

/* child after a put: pattern 2 expected */
static int check_remote(void)
{
    size_t k = 0;
    for (int i = 0; i < NS; i++)
        for (size_t j = 0; j < rsegs[i].iov_len; j++)
            if (((uint8_t *)rsegs[i].iov_base)[j] != pat(2, k++))
                return 3;
    return 0;
}

static void local_segs(uint8_t *buf, struct iovec *l)
{
    size_t per = total / NR;
    for (int i = 0; i < NR; i++) {
        l[i].iov_base = buf + (size_t)i * per + (size_t)i * 2;
        l[i].iov_len = i == NR - 1 ? total - per * (NR - 1) : per;
    }
}

static void test_get_put(void)
{
    setup_remote();
    EXPECT(total > 2 * TERN_CMA_STEP, "the transfer needs several steps (%zu bytes)", total);
    uint8_t *lbuf = malloc(total + 2 * NR);
    struct iovec *l = malloc(NR * sizeof(*l)), *segs = malloc(NS * sizeof(*segs));
    local_segs(lbuf, l);

    /* get: the child's pattern 1 into our 1500 segments */
    int go[2];
    pid_t pid = child(go, fill_remote, NULL);
    memset(remote, 0, total + NS); /* ours differs from the child's */
    int rc = tern_cma_read_iov(pid, (uint64_t)(uintptr_t)rsegs, segs, NS, TERN_CMA_FAULT_OFF);
    EXPECT(rc == 0 && memcmp(segs, rsegs, NS * sizeof(*segs)) == 0,
           "the child's iovec array read: %d", rc);
    tern_cursor_t cur;
    tern_cursor_init(&cur, l, NR);
    tern_cma_xfer_t x = {
        .pid = pid, .write = false, .want = total, .fault_after = TERN_CMA_FAULT_OFF};
    tern_cursor_init(&x.peer, segs, NS);
    int steps = 0;
    ssize_t got;
    while ((got = tern_cma_step(&x, &cur)) > 0)
        steps++;
    EXPECT(got == 0 && x.done == total && cur.pos == total, "get: %zd after %llu bytes", got,
           (unsigned long long)x.done);
    EXPECT(steps >= 3, "get in %d steps (at most 4 MiB and 64 segments each)", steps);
    size_t k = 0, bad = SIZE_MAX;
    for (int i = 0; i < NR && bad == SIZE_MAX; i++)
        for (size_t j = 0; j < l[i].iov_len; j++, k++)
            if (((uint8_t *)l[i].iov_base)[j] != pat(1, k)) {
                bad = k;
                break;
            }
    EXPECT(bad == SIZE_MAX, "get: byte %zu differs", bad);

    /* the hook: the first step moves, the next one is refused */
    tern_cursor_init(&cur, l, NR);
    x = (tern_cma_xfer_t){.pid = pid, .want = total, .fault_after = 1u << 20};
    tern_cursor_init(&x.peer, segs, NS);
    while ((got = tern_cma_step(&x, &cur)) > 0)
        ;
    EXPECT(got == -EPERM && tern_cma_refusal(got) && x.done >= 1u << 20 &&
               x.done < (1u << 20) + TERN_CMA_STEP && cur.pos == x.done,
           "the hook refuses once 1 MiB has moved: %zd after %llu bytes", got,
           (unsigned long long)x.done);
    EXPECT(tern_cma_read_iov(pid, (uint64_t)(uintptr_t)rsegs, segs, NS, 0) == -EPERM,
           "a hook at 0 refuses the iovec array too");

    /* a remote range that is not mapped */
    struct iovec nowhere = {(void *)(uintptr_t)4096, 4096};
    tern_cursor_init(&cur, l, NR);
    x = (tern_cma_xfer_t){.pid = pid, .want = 4096, .fault_after = TERN_CMA_FAULT_OFF};
    tern_cursor_init(&x.peer, &nowhere, 1);
    got = tern_cma_step(&x, &cur);
    EXPECT(got == -EFAULT, "unmapped remote range: %zd", got);
    /* segments that end before the transfer */
    tern_cursor_init(&cur, l, NR);
    x = (tern_cma_xfer_t){.pid = pid, .want = total, .fault_after = TERN_CMA_FAULT_OFF};
    tern_cursor_init(&x.peer, segs, 2);
    while ((got = tern_cma_step(&x, &cur)) > 0)
        ;
    EXPECT(got == -EMSGSIZE && x.done == segs[0].iov_len + segs[1].iov_len,
           "short segments: %zd after %llu", got, (unsigned long long)x.done);
    EXPECT(finish_child(go, pid) == 0, "get child");

    /* the peer has gone */
    tern_cursor_init(&cur, l, NR);
    x = (tern_cma_xfer_t){.pid = pid, .want = total, .fault_after = TERN_CMA_FAULT_OFF};
    tern_cursor_init(&x.peer, segs, NS);
    got = tern_cma_step(&x, &cur);
    EXPECT(got == -ESRCH, "exited peer: %zd", got);

    /* put: our pattern 2 into the child, which checks it */
    pid = child(go, NULL, check_remote);
    k = 0;
    for (int i = 0; i < NR; i++)
        for (size_t j = 0; j < l[i].iov_len; j++)
            ((uint8_t *)l[i].iov_base)[j] = pat(2, k++);
    tern_cursor_init(&cur, l, NR);
    x = (tern_cma_xfer_t){
        .pid = pid, .write = true, .want = total, .fault_after = TERN_CMA_FAULT_OFF};
    tern_cursor_init(&x.peer, rsegs, NS);
    while ((got = tern_cma_step(&x, &cur)) > 0)
        ;
    EXPECT(got == 0 && x.done == total, "put: %zd after %llu", got, (unsigned long long)x.done);
    EXPECT(finish_child(go, pid) == 0, "the child found what was put");
    free(lbuf);
    free(l);
    free(segs);
}

/* A real refusal: the target is not dumpable and the reader (a child of
 * ours) has no CAP_SYS_PTRACE, as in a container. */
static void nondumpable(void)
{
    prctl(PR_SET_DUMPABLE, 0);
}

static void test_kernel_refusal(void)
{
    int go[2];
    pid_t target = child(go, nondumpable, NULL);
    int p[2];
    if (pipe(p) != 0)
        return;
    pid_t reader = fork();
    if (reader == 0) {
        alarm(30);
        struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct data[2];
        int ok = syscall(SYS_capget, &hdr, data) == 0;
        data[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
        data[CAP_SYS_PTRACE / 32].permitted &= ~(1u << (CAP_SYS_PTRACE % 32));
        ok = ok && syscall(SYS_capset, &hdr, data) == 0;
        char buf[64];
        struct iovec l = {buf, sizeof(buf)}, r = {(void *)remote, sizeof(buf)};
        tern_cma_xfer_t x = {.pid = target, .want = sizeof(buf), .fault_after = TERN_CMA_FAULT_OFF};
        tern_cursor_init(&x.peer, &r, 1);
        tern_cursor_t cur;
        tern_cursor_init(&cur, &l, 1);
        ssize_t got = ok ? tern_cma_step(&x, &cur) : -1;
        ssize_t n = write(p[1], &got, sizeof(got));
        _exit(ok && n == sizeof(got) ? 0 : 1);
    }
    close(p[1]);
    ssize_t got = 0;
    ssize_t n = read(p[0], &got, sizeof(got));
    close(p[0]);
    int status = 0;
    waitpid(reader, &status, 0);
    EXPECT(n == sizeof(got) && got == -EPERM && tern_cma_refusal(got),
           "the kernel refuses a non-dumpable target to a reader without CAP_SYS_PTRACE: %zd", got);
    finish_child(go, target);
}

static void test_sizes(void)
{
    uint64_t v = 0;
    EXPECT(tern_cma_parse_size("X", "auto", "auto", &v) == TERN_OK && v == UINT64_MAX, "auto");
    EXPECT(tern_cma_parse_size("X", "OFF", "off", &v) == TERN_OK && v == UINT64_MAX, "OFF");
    EXPECT(tern_cma_parse_size("X", "0", "auto", &v) == TERN_OK && v == 0, "0");
    EXPECT(tern_cma_parse_size("X", "64k", "auto", &v) == TERN_OK && v == 65536, "64k");
    EXPECT(tern_cma_parse_size("X", "3M", "auto", &v) == TERN_OK && v == 3u << 20, "3M");
    EXPECT(tern_cma_parse_size("X", "2g", "auto", &v) == TERN_OK && v == 2ull << 30, "2g");
    v = 7;
    EXPECT(tern_cma_parse_size("TERN_X", "-1", "auto", &v) == TERN_ERR_INVALID_PARAM && v == 7 &&
               strstr(tern_last_error(), "TERN_X=\"-1\"") != NULL,
           "negative refused, naming the variable: %s", tern_last_error());
    EXPECT(tern_cma_parse_size("X", "12q", "auto", &v) == TERN_ERR_INVALID_PARAM, "12q");
    EXPECT(tern_cma_parse_size("X", "", "auto", &v) == TERN_ERR_INVALID_PARAM, "empty");
    EXPECT(tern_cma_parse_size("X", "99999999999999999g", "auto", &v) == TERN_ERR_INVALID_PARAM,
           "too large");
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    test_host();
    test_cookies();
    test_get_put();
    test_kernel_refusal();
    test_sizes();
    if (failures == 0)
        printf("cma_test: all passed\n");
    return failures ? 1 : 0;
}
