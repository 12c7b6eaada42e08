/*
 * The engine suite without a launcher (tests/engine/addr_wire.sh): when
 * TERN_TEST_ADDR_DIR is set, engine_tests wires itself up with
 * tern_init_ex(TERN_WIREUP_ADDRESS) as rank TERN_TEST_RANK of
 * TERN_TEST_SIZE of job TERN_TEST_JOB, and the addresses go through files:
 * each worker's is written to DIR/<rank>.<worker> (a temporary name, then
 * rename: a reader never sees half of one), then every rank's, of every
 * worker, is read back (waited for, at most TERN_TEST_ADDR_WAIT_S seconds)
 * and inserted with tern_peer_insert, its own included, each rank starting
 * with the next rank's so that the inserts complete the job in a different
 * order everywhere.  No PMIx server exists: the script starts the ranks.
 *
 * The case "addresses" checks the public calls against docs/addresses.md:
 * the address's documented fields, a size query, inserting what was
 * inserted before (same ids), and the refusals: wrong magic, another
 * version, truncation (TERN_ERR_MALFORMED), an address whose only netmod
 * this build does not have, and one whose only card is of a netmod that
 * reaches no other job (TERN_ERR_UNREACHABLE, naming the netmod).
 *
 * The case "other_job" (run by name, TERN_TEST_OTHER_DIR set): this job's
 * rank 0 and another job's (the script starts both, each a job of its own)
 * write their worker-0 addresses to that directory under their job names,
 * insert each other's, and exchange a word and 1 MiB (a rendezvous) each
 * way with the peer id tern_peer_insert gave: an id after this job's
 * ranks, which is also the source of what arrives.  Prints "other_job:
 * peer P via NETMOD".
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/engine/cases.h"

#define ADDR_FILE_MAX 8192

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : dflt;
}

static int write_address(tern_worker_t *w, const char *dir, int rank)
{
    unsigned char buf[ADDR_FILE_MAX];
    size_t len = sizeof(buf);
    tern_status_t st = tern_worker_address(w, buf, &len);
    if (st != TERN_OK) {
        fprintf(stderr, "addr_wire: tern_worker_address: %s\n", tern_last_error());
        return -1;
    }
    char tmp[512], path[512];
    snprintf(tmp, sizeof(tmp), "%s/.%d.%d.tmp", dir, rank, tern_worker_index(w));
    snprintf(path, sizeof(path), "%s/%d.%d", dir, rank, tern_worker_index(w));
    FILE *f = fopen(tmp, "wb");
    if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "addr_wire: writing %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* DIR/<rank>.<worker>, waited for until deadline; its length, or -1 */
static long read_address(const char *dir, int rank, int worker, unsigned char *buf, time_t deadline)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%d.%d", dir, rank, worker);
    for (;;) {
        FILE *f = fopen(path, "rb");
        if (f != NULL) {
            size_t n = fread(buf, 1, ADDR_FILE_MAX, f);
            fclose(f);
            return (long)n;
        }
        if (time(NULL) > deadline) {
            fprintf(stderr, "addr_wire: no %s within the wait (did rank %d start?)\n", path, rank);
            return -1;
        }
        usleep(10000); /* another process writes it: nothing to poll */
    }
}

int th_init_by_address(th_t *t)
{
    const char *dir = getenv("TERN_TEST_ADDR_DIR");
    tern_init_params_t p;
    memset(&p, 0, sizeof(p));
    p.struct_size = sizeof(p);
    p.fields = TERN_INIT_F_WIREUP;
    p.wireup = TERN_WIREUP_ADDRESS;
    p.rank = atoi(env_or("TERN_TEST_RANK", "-1"));
    p.size = atoi(env_or("TERN_TEST_SIZE", "0"));
    p.job = env_or("TERN_TEST_JOB", "addr-wire");
    tern_status_t st = tern_init_ex(&p, &t->ctx);
    if (st != TERN_OK) {
        fprintf(stderr, "engine_tests: tern_init_ex: %s: %s\n", tern_strerror(st),
                tern_last_error());
        return -1;
    }
    /* every worker's address: worker 0 is the context's, the others are
     * taken for it and given back */
    tern_worker_t *w[64];
    int nw = 0;
    w[nw++] = tern_context_worker(t->ctx);
    while (nw < 64 && tern_worker_create(t->ctx, &w[nw]) == TERN_OK)
        nw++;
    int rc = 0;
    for (int k = 0; k < nw && rc == 0; k++)
        rc = write_address(w[k], dir, p.rank);
    for (int k = 1; k < nw; k++)
        tern_worker_destroy(w[k]);
    time_t deadline = time(NULL) + atoi(env_or("TERN_TEST_ADDR_WAIT_S", "60"));
    unsigned char buf[ADDR_FILE_MAX];
    for (int i = 1; i <= p.size && rc == 0; i++) {
        int r = (p.rank + i) % p.size; /* ours last */
        for (int k = 0; k < nw && rc == 0; k++) {
            long n = read_address(dir, r, k, buf, deadline);
            int peer = -1;
            if (n < 0) {
                rc = -1;
                break;
            }
            st = tern_peer_insert(t->ctx, buf, (size_t)n, &peer);
            if (st != TERN_OK || peer != r) {
                fprintf(stderr,
                        "engine_tests: tern_peer_insert of rank %d worker %d: %s: %s "
                        "(peer %d)\n",
                        r, k, tern_strerror(st), tern_last_error(), peer);
                rc = -1;
            }
        }
    }
    if (rc != 0) {
        tern_finalize(t->ctx);
        t->ctx = NULL;
    }
    return rc;
}

/* ---- the case "addresses" ---------------------------------------------------- */

static uint32_t le32_at(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return le32toh(v);
}

/* The address format's version (engine/address.h's TERN_ADDR_VERSION; 2
 * since the engine's packets carry 64-bit tags). */
#define ADDR_VERSION 2

/* An address of another job (job hash 0xdeadbeef, rank 3) with one card of
 * netmod `nm` (8 bytes), as docs/addresses.md lays it out. */
static size_t foreign(unsigned char *out, const char *nm)
{
    memset(out, 0, 64 + 24 + 8);
    memcpy(out, "TADR", 4);
    uint16_t v16 = htole16(ADDR_VERSION);
    memcpy(out + 4, &v16, 2);
    v16 = htole16(64);
    memcpy(out + 6, &v16, 2);
    uint32_t v32 = htole32(64 + 24 + 8);
    memcpy(out + 8, &v32, 4);
    v32 = htole32(0xdeadbeefu);
    memcpy(out + 12, &v32, 4);
    v32 = htole32(3);
    memcpy(out + 16, &v32, 4);
    v16 = htole16(1);
    memcpy(out + 22, &v16, 2);
    snprintf((char *)out + 64, 16, "%s", nm);
    v32 = htole32(8);
    memcpy(out + 64 + 16, &v32, 4);
    return 64 + 24 + 8;
}

static void expect_refused(th_t *t, const void *a, size_t n, tern_status_t want, const char *needle,
                           const char *what)
{
    int peer = 4711;
    tern_status_t st = tern_peer_insert(t->ctx, a, n, &peer);
    CHECK(t, st == want, "%s: status %d (%s), want %d", what, (int)st, tern_strerror(st),
          (int)want);
    CHECK(t, strstr(tern_last_error(), needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what,
          tern_last_error(), needle);
    CHECK(t, peer == 4711, "%s: peer id written (%d)", what, peer);
}

static int case_addresses(th_t *t)
{
    unsigned char a[ADDR_FILE_MAX], bad[ADDR_FILE_MAX];
    size_t need = 0, len = sizeof(a);
    CHECK_ST(t, tern_worker_address(t->w, NULL, &need), TERN_ERR_TRUNCATED);
    CHECK_ST(t, tern_worker_address(t->w, a, &len), TERN_OK);
    CHECK(t, need == len && len >= 64 && len % 8 == 0, "size query %zu, address %zu", need, len);
    CHECK(t, memcmp(a, "TADR", 4) == 0 && a[4] == ADDR_VERSION && a[5] == 0,
          "magic / version");
    CHECK(t, le32_at(a + 8) == len, "total_len %u of %zu", le32_at(a + 8), len);
    CHECK(t, (int)le32_at(a + 16) == t->rank, "rank field %u", le32_at(a + 16));
    CHECK(t, a[20] == 0 && a[21] == 0, "worker field of worker 0");
    CHECK(t, (int)le32_at(a + 56) == (int)getpid(), "pid field %u", le32_at(a + 56));
    int peer = -1;
    CHECK_ST(t, tern_peer_insert(t->ctx, a, len, &peer), TERN_OK);
    CHECK(t, peer == t->rank, "own address: peer %d", peer);

    /* this job's, but no rank or worker of it: refused, also once wired */
    memcpy(bad, a, len);
    uint32_t v32 = htole32((uint32_t)t->size);
    memcpy(bad + 16, &v32, 4);
    expect_refused(t, bad, len, TERN_ERR_INVALID_PARAM, "it has ranks 0..", "rank == size");
    memcpy(bad, a, len);
    bad[20] = 0xff; /* worker 255: beyond TERN_NUM_WORKERS */
    expect_refused(t, bad, len, TERN_ERR_INVALID_PARAM, "it has ranks 0..", "worker 255");

    memcpy(bad, a, len);
    bad[0] ^= 0x20;
    expect_refused(t, bad, len, TERN_ERR_MALFORMED, "not a tern address", "wrong magic");
    memcpy(bad, a, len);
    bad[4] = 7;
    expect_refused(t, bad, len, TERN_ERR_MALFORMED, "version 7", "another version");
    expect_refused(t, a, len - 8, TERN_ERR_MALFORMED, "truncated", "truncated");
    expect_refused(t, a, 20, TERN_ERR_MALFORMED, "truncated", "a header cut short");
    size_t n = foreign(bad, "foo");
    expect_refused(t, bad, n, TERN_ERR_UNREACHABLE, "foo", "only an unknown netmod");
    n = foreign(bad, "shm");
    expect_refused(t, bad, n, TERN_ERR_UNREACHABLE, "shm", "only a netmod without other jobs");
    return 0;
}

/* the file in dir that is not ours (nor a temporary one), waited for */
static long read_other(th_t *t, const char *dir, const char *job, unsigned char *buf)
{
    time_t deadline = time(NULL) + atoi(env_or("TERN_TEST_ADDR_WAIT_S", "60"));
    for (;;) {
        FILE *ls;
        char cmd[600], name[256] = "";
        snprintf(cmd, sizeof(cmd), "ls '%s'", dir);
        if ((ls = popen(cmd, "r")) != NULL) {
            while (fgets(name, sizeof(name), ls) != NULL) {
                name[strcspn(name, "\n")] = '\0';
                if (name[0] != '.' && strcmp(name, job) != 0)
                    break;
                name[0] = '\0';
            }
            pclose(ls);
        }
        if (name[0] != '\0') {
            char path[600];
            snprintf(path, sizeof(path), "%s/%s", dir, name);
            FILE *f = fopen(path, "rb");
            size_t n = f != NULL ? fread(buf, 1, ADDR_FILE_MAX, f) : 0;
            if (f != NULL)
                fclose(f);
            return (long)n;
        }
        if (time(NULL) > deadline) {
            CHECK(t, 0, "no other job's address in %s", dir);
            return -1;
        }
        usleep(10000);
    }
}

static int case_other_job(th_t *t)
{
    const char *dir = getenv("TERN_TEST_OTHER_DIR"), *job = env_or("TERN_TEST_JOB", "addr-wire");
    CHECK(t, dir != NULL, "TERN_TEST_OTHER_DIR is not set");
    if (dir == NULL)
        return 0;
    unsigned char a[ADDR_FILE_MAX];
    size_t len = sizeof(a);
    CHECK_ST(t, tern_worker_address(t->w, a, &len), TERN_OK);
    char tmp[600], path[600];
    snprintf(tmp, sizeof(tmp), "%s/.%s", dir, job);
    snprintf(path, sizeof(path), "%s/%s", dir, job);
    FILE *f = fopen(tmp, "wb");
    CHECK(t, f != NULL && fwrite(a, 1, len, f) == len && fclose(f) == 0 && rename(tmp, path) == 0,
          "writing %s", path);
    long n = read_other(t, dir, job, a);
    if (n < 0)
        return 0;
    int peer = -1, again = -1;
    CHECK_ST(t, tern_peer_insert(t->ctx, a, (size_t)n, &peer), TERN_OK);
    CHECK(t, peer >= t->size, "another job's peer id %d (this job has %d ranks)", peer, t->size);
    CHECK_ST(t, tern_peer_insert(t->ctx, a, (size_t)n, &again), TERN_OK);
    CHECK(t, again == peer, "the same address again: peer %d, then %d", peer, again);
    const size_t big = 1u << 20;
    unsigned char *sb = malloc(big), *rb = malloc(big);
    uint32_t word = (uint32_t)getpid(), got = 0;
    tern_recv_info_t info;
    tern_request_t *rr = NULL, *sr = NULL;
    th_fill(sb, big, word);
    tern_status_t rs = tern_irecv(t->w, &got, sizeof(got), peer, 11, 0, &info, &rr);
    tern_status_t ss = tern_isend(t->w, &word, sizeof(word), peer, 11, 0, &sr);
    CHECK_ST(t, th_finish(t, ss, sr, NULL), TERN_OK);
    CHECK_ST(t, th_finish(t, rs, rr, &info), TERN_OK);
    CHECK(t, info.source == peer, "the word came from %d, not %d", info.source, peer);
    rs = tern_irecv(t->w, rb, big, peer, 12, 0, &info, &rr);
    ss = tern_isend(t->w, sb, big, peer, 12, 0, &sr);
    CHECK_ST(t, th_finish(t, ss, sr, NULL), TERN_OK);
    CHECK_ST(t, th_finish(t, rs, rr, &info), TERN_OK);
    CHECK(t, info.source == peer && info.length == big && th_verify(rb, big, got) == (size_t)-1,
          "1 MiB from %d: source %d, %zu bytes", peer, info.source, info.length);
    const char *nm = tern_peer_netmod(t->ctx, peer);
    printf("other_job: peer %d via %s\n", peer, nm ? nm : "none");
    free(sb);
    free(rb);
    return 0;
}

const th_case_t th_addr_cases[] = {
    {"addresses", case_addresses},
    {NULL, NULL},
};

/* by name only */
const th_case_t th_addr_named_cases[] = {
    {"other_job", case_other_job},
    {NULL, NULL},
};
