/*
 * What the PMIx test probes (tests/launcher/pmix_probe.c,
 * tests/multinode/mn_probe.c) share: the probe's identity `me` (set by its
 * PMIx_Init), the failure count and fail(), and the PMIx getters.  Include
 * after <pmix.h>, <stdarg.h>, <stdio.h>, <stdlib.h> and <string.h>.  Test
 * code only.  The getters are inline: a probe uses the ones it needs.
 */
#ifndef TERN_TEST_PMIX_GET_H
#define TERN_TEST_PMIX_GET_H

static pmix_proc_t me;
static int failures;

/* record a failed check: "FAIL: rank R: ..." on stdout */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    char line[512];

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    printf("FAIL: rank %u: %s\n", (unsigned)me.rank, line);
    fflush(stdout);
    failures++;
}

static inline pmix_value_t *get(pmix_rank_t rank, const char *key)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_Get(%s, rank %d): %s", key, rank == PMIX_RANK_WILDCARD ? -1 : (int)rank,
             PMIx_Error_string(rc));
        return NULL;
    }
    return v;
}

static inline long get_uint(pmix_rank_t rank, const char *key)
{
    pmix_value_t *v = get(rank, key);
    long out = -1;

    if (v == NULL) {
        return -1;
    }
    switch (v->type) {
    case PMIX_UINT32:
        out = (long)v->data.uint32;
        break;
    case PMIX_UINT16:
        out = v->data.uint16;
        break;
    case PMIX_PROC_RANK:
        out = (long)v->data.rank;
        break;
    default:
        fail("%s has unexpected type %s", key, PMIx_Data_type_string(v->type));
    }
    PMIX_VALUE_RELEASE(v);
    return out;
}

static inline char *get_str(pmix_rank_t rank, const char *key)
{
    pmix_value_t *v = get(rank, key);
    char *out = NULL;

    if (v == NULL) {
        return NULL;
    }
    if (v->type == PMIX_STRING && v->data.string != NULL) {
        out = strdup(v->data.string);
    } else {
        fail("%s has unexpected type %s", key, PMIx_Data_type_string(v->type));
    }
    PMIX_VALUE_RELEASE(v);
    return out;
}

#endif
