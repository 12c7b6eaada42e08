/*
 * Unit test of the status codes (tern/status.h) without a job: every public
 * code has a text of its own and falls in the range its group documents;
 * values that are no code (the gaps, the removed codes, past the last range)
 * read "unknown status" and belong to no group; engine/sock's private
 * statuses lie below the public range, in no group, with texts for the logs.
 *
 * Then the thread's message (engine/log.h): a message formatted from the
 * previous one comes out whole (tern_error used to vsnprintf the thread's
 * buffer into itself: "no such job known to the launcher (job no-such-job:
 * no such job ... (ailed: NOT-FOUND)"), tern_error_wrap nests it as the
 * cause, chains stay inside the buffer, and a thread that recorded nothing
 * gets no ": " tail.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <tern/status.h>

#include "engine/log.h"
#include "engine/sock/sock.h"

#include "tests/unit/expect.h"

enum group { ARG, RESOURCE, PEER, LOCAL, NO_RESULT, NGROUPS };

static const char *const group_name[NGROUPS] = {"argument", "resource", "peer", "local",
                                                "no result"};

/* Every public error code and the group the header puts it in. */
static const struct {
    tern_status_t code;
    const char *name;
    enum group group;
} codes[] = {
#define C(code, group) {code, #code, group}
    C(TERN_ERR_INVALID_PARAM, ARG),
    C(TERN_ERR_INVALID_RANK, ARG),
    C(TERN_ERR_INVALID_TAG, ARG),
    C(TERN_ERR_TRUNCATED, ARG),
    C(TERN_ERR_AGAIN, RESOURCE),
    C(TERN_ERR_NO_MEMORY, RESOURCE),
    C(TERN_ERR_NO_SHM_SPACE, RESOURCE),
    C(TERN_ERR_NO_RESOURCE, RESOURCE),
    C(TERN_ERR_PEER_FAILED, PEER),
    C(TERN_ERR_UNREACHABLE, PEER),
    C(TERN_ERR_CONN_REFUSED, PEER),
    C(TERN_ERR_CONN_RESET, PEER),
    C(TERN_ERR_CONN_CLOSED, PEER),
    C(TERN_ERR_HOST_UNREACH, PEER),
    C(TERN_ERR_REMOTE_ACCESS, PEER),
    C(TERN_ERR_MALFORMED, PEER),
    C(TERN_ERR_PMIX, LOCAL),
    C(TERN_ERR_SHM, LOCAL),
    C(TERN_ERR_IO, LOCAL),
    C(TERN_ERR_NO_DEVICE, LOCAL),
    C(TERN_ERR_ADDR_IN_USE, LOCAL),
    C(TERN_ERR_UNSUPPORTED, LOCAL),
    C(TERN_ERR_TIMED_OUT, NO_RESULT),
    C(TERN_ERR_INTERRUPTED, NO_RESULT),
    C(TERN_ERR_NOT_FOUND, NO_RESULT),
    C(TERN_ERR_CANCELED, NO_RESULT),
#undef C
};
#define NCODES (sizeof(codes) / sizeof(codes[0]))

/* The documented ranges: group g is [range_lo[g], range_hi[g]]. */
static const int range_hi[NGROUPS] = {-1, -20, -40, -60, -80};
static const int range_lo[NGROUPS] = {-19, -39, -59, -79, -99};

/* Which predicates claim s, as a bit per group. */
static unsigned claimed_by(tern_status_t s)
{
    return (unsigned)(tern_status_is_arg_error(s) != 0) << ARG |
           (unsigned)(tern_status_is_resource_error(s) != 0) << RESOURCE |
           (unsigned)(tern_status_is_peer_error(s) != 0) << PEER |
           (unsigned)(tern_status_is_local_error(s) != 0) << LOCAL |
           (unsigned)(tern_status_is_no_result(s) != 0) << NO_RESULT;
}

static int listed(int v)
{
    for (size_t i = 0; i < NCODES; i++)
        if ((int)codes[i].code == v)
            return 1;
    return 0;
}

#define INNER "PMIx_Get(pmix.job.size) for no-such-job.4294967294 failed: NOT-FOUND"

/* The previous message as an argument (taken before the call: the guard
 * refuses tern_last_error() written inside tern_error's arguments). */
static void check_previous_as_argument(void)
{
    tern_error(TERN_ERR_PMIX, "%s", INNER);
    const char *prev = tern_last_error();
    tern_status_t st = tern_error(
        TERN_ERR_NOT_FOUND, "job %s: no such job known to the launcher (%s)", "no-such-job", prev);
    EXPECT(st == TERN_ERR_NOT_FOUND, "tern_error returned %d", (int)st);
    EXPECT(strcmp(tern_last_error(),
                  "job no-such-job: no such job known to the launcher (" INNER ")") == 0,
           "message built from the previous one is garbled: \"%s\"", tern_last_error());
}

static void check_wrap(void)
{
    tern_error(TERN_ERR_PMIX, "%s", INNER);
    tern_status_t st = tern_error_wrap(TERN_ERR_NOT_FOUND,
                                       "job %s: no such job known to the "
                                       "launcher",
                                       "no-such-job");
    EXPECT(st == TERN_ERR_NOT_FOUND, "tern_error_wrap returned %d", (int)st);
    EXPECT(strcmp(tern_last_error(),
                  "job no-such-job: no such job known to the launcher: " INNER) == 0,
           "wrapped: \"%s\"", tern_last_error());
    /* three levels, outermost first */
    tern_error(TERN_ERR_IO, "writev: Broken pipe");
    tern_error_wrap(TERN_ERR_CONN_RESET, "tcp send to rank %d", 3);
    tern_error_wrap(TERN_ERR_PEER_FAILED, "connection to rank %d failed", 3);
    EXPECT(strcmp(tern_last_error(),
                  "connection to rank 3 failed: tcp send to rank 3: writev: Broken pipe") == 0,
           "three levels: \"%s\"", tern_last_error());
    /* a chain longer than the buffer: cut, terminated, the outer part kept */
    char big[700];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    tern_error(TERN_ERR_IO, "%s", big);
    for (int i = 0; i < 5; i++)
        tern_error_wrap(TERN_ERR_IO, "level %d", i);
    size_t n = strlen(tern_last_error());
    EXPECT(n > 0 && n < 512, "chain of %zu bytes", n);
    EXPECT(strncmp(tern_last_error(), "level 4: level 3: level 2: level 1: level 0: xxx", 48) == 0,
           "long chain: \"%.60s...\"", tern_last_error());
    /* a message that fills the buffer by itself gets no cause appended */
    tern_error(TERN_ERR_IO, "cause");
    tern_error_wrap(TERN_ERR_IO, "%s", big);
    EXPECT(strlen(tern_last_error()) == 511 && strstr(tern_last_error(), "cause") == NULL,
           "full message: %zu bytes", strlen(tern_last_error()));
}

/* A thread that recorded nothing: the message alone. */
static void *fresh_thread(void *arg)
{
    (void)arg;
    tern_error_wrap(TERN_ERR_TIMED_OUT, "first error of this thread");
    EXPECT(strcmp(tern_last_error(), "first error of this thread") == 0, "fresh thread: \"%s\"",
           tern_last_error());
    return NULL;
}

int main(void)
{
    static const char unknown[] = "unknown status";

    check_previous_as_argument();
    check_wrap();
    pthread_t th;
    if (pthread_create(&th, NULL, fresh_thread, NULL) == 0)
        pthread_join(th, NULL);
    else
        EXPECT(0, "pthread_create failed");

    EXPECT(strcmp(tern_strerror(TERN_OK), "success") == 0, "TERN_OK: %s", tern_strerror(TERN_OK));
    EXPECT(strcmp(tern_strerror(TERN_INPROGRESS), unknown) != 0, "TERN_INPROGRESS has no text");
    EXPECT(claimed_by(TERN_OK) == 0 && claimed_by(TERN_INPROGRESS) == 0,
           "OK / INPROGRESS classified as errors");

    /* each code: its own text, inside its group's range, claimed by that group only */
    for (size_t i = 0; i < NCODES; i++) {
        int v = (int)codes[i].code;
        enum group g = codes[i].group;
        const char *text = tern_strerror(codes[i].code);
        EXPECT(text != NULL && strcmp(text, unknown) != 0, "%s (%d) has no text", codes[i].name, v);
        for (size_t j = 0; j < i; j++)
            EXPECT(codes[j].code != codes[i].code &&
                       strcmp(tern_strerror(codes[j].code), text) != 0,
                   "%s and %s share a value or a text", codes[j].name, codes[i].name);
        EXPECT(v <= range_hi[g] && v >= range_lo[g], "%s = %d outside the %s range %d..%d",
               codes[i].name, v, group_name[g], range_hi[g], range_lo[g]);
        EXPECT(claimed_by(codes[i].code) == 1u << g, "%s (%d): predicates say %#x, want %s",
               codes[i].name, v, claimed_by(codes[i].code), group_name[g]);
        EXPECT(v > TERN_ERR_LAST, "%s = %d at or below TERN_ERR_LAST", codes[i].name, v);
    }

    /* every value from TERN_OK down past TERN_ERR_LAST: a listed code has a
     * text, anything else (the gaps, the removed codes) is unknown; the
     * predicates follow the ranges, gaps included */
    for (int v = 0; v >= TERN_ERR_LAST - 10; v--) {
        tern_status_t s = (tern_status_t)v;
        if (v < 0 && !listed(v))
            EXPECT(strcmp(tern_strerror(s), unknown) == 0, "%d is no code but reads \"%s\"", v,
                   tern_strerror(s));
        unsigned want = 0;
        for (int g = 0; g < NGROUPS; g++)
            if (v <= range_hi[g] && v >= range_lo[g])
                want |= 1u << g;
        EXPECT(claimed_by(s) == want, "%d: predicates say %#x, ranges %#x", v, claimed_by(s), want);
    }
    EXPECT(strcmp(tern_strerror((tern_status_t)2), unknown) == 0, "2 has a text");

    /* the codes this numbering removed, at their old values: CANCELED (-14),
     * CMA_REFUSED (-17), BUSY (-18), NO_PORT (-25); SOCK_CLOSED (-24) and
     * BUSY live on privately in engine/sock, below the public range */
    const int removed[] = {-14, -17, -18, -24, -25};
    for (size_t i = 0; i < sizeof(removed) / sizeof(removed[0]); i++)
        EXPECT(strcmp(tern_strerror((tern_status_t)removed[i]), unknown) == 0,
               "removed value %d reads \"%s\"", removed[i],
               tern_strerror((tern_status_t)removed[i]));

    const tern_status_t priv[] = {TERN_SOCK_ERR_BUSY, TERN_SOCK_ERR_CLOSED};
    for (size_t i = 0; i < sizeof(priv) / sizeof(priv[0]); i++) {
        EXPECT(priv[i] < TERN_ERR_LAST && claimed_by(priv[i]) == 0,
               "private status %d inside the public range", (int)priv[i]);
        EXPECT(strcmp(tern_strerror(priv[i]), unknown) != 0, "private status %d has no text",
               (int)priv[i]);
    }

    if (failures == 0)
        printf("status_test: %zu codes, ranges and texts ok; nested messages whole\n", NCODES);
    return failures ? 1 : 0;
}
