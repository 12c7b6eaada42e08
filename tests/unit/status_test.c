/*
 * Unit test of the status codes (tern/status.h) without a job: every public
 * code has a text of its own and falls in the range its group documents;
 * values that are no code (the gaps, the removed codes, past the last range)
 * read "unknown status" and belong to no group; engine/sock's private
 * statuses lie below the public range, in no group, with texts for the logs.
 */
#include <stdio.h>
#include <string.h>

#include <tern/status.h>

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

int main(void)
{
    static const char unknown[] = "unknown status";

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
        printf("status_test: %zu codes, ranges and texts ok\n", NCODES);
    return failures ? 1 : 0;
}
