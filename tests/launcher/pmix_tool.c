/*
 * pmix_tool: a plain PMIx tool that attaches to a running ternrun.
 *
 *   pmix_tool FILE        PMIx_tool_init with PMIX_TOOL_ATTACHMENT_FILE=FILE;
 *                         prints "tool NSPACE:RANK", then the job's namespace
 *                         ("namespaces X"), namespace info ("nsinfo X CMDLINE")
 *                         and proc table ("proc R pid P state N (TEXT)") from
 *                         PMIx_Query_info (each answer one info keyed by the
 *                         query key, as PMIx 4.2 tools read it); PMIx_IOF_pull must be
 *                         refused; PMIx_tool_finalize; exit 0
 *   pmix_tool FILE stop   attaches, prints "tool stopping", then stops itself
 *                         (SIGSTOP): the job must go on without it
 *
 * Every check prints "FAIL: ..." and makes the exit status 1.
 */
#define _GNU_SOURCE 1

#include <pmix_tool.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/pmix_get.h" /* me: the tool's own name; fail() */
#include "tests/pmix_query.h"

/* "nsinfo NSPACE CMDLINE" per element of PMIX_QUERY_NAMESPACE_INFO */
static void print_nsinfo(const char *ns, const char *cmd, void *arg)
{
    (void)arg;
    printf("nsinfo %s %s\n", ns ? ns : "?", cmd ? cmd : "?");
}

/* the value of a one-key query's answer (PMIx 4.2 clients read it flat,
 * one info keyed by the query key), or NULL and a failure */
static const pmix_value_t *result(const char *what, pmix_status_t rc, const pmix_info_t *info,
                                  size_t ninfo, const char *key, pmix_data_type_t type)
{
    const char *const keys[] = {key, NULL};
    return query_expect_flat(what, rc, info, ninfo, keys, &type) ? &info[0].value : NULL;
}

static void on_output(size_t id, pmix_iof_channel_t channel, pmix_proc_t *source,
                      pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo)
{
    (void)id, (void)channel, (void)source, (void)payload, (void)info, (void)ninfo;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pmix_tool ATTACHMENT-FILE [stop]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_info_t attach;
    PMIX_INFO_LOAD(&attach, PMIX_TOOL_ATTACHMENT_FILE, argv[1], PMIX_STRING);
    pmix_status_t rc = PMIx_tool_init(&me, &attach, 1);
    PMIX_INFO_DESTRUCT(&attach);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_tool_init: %s", PMIx_Error_string(rc));
        return 1;
    }
    printf("tool %s:%u\n", me.nspace, (unsigned)me.rank);
    if (argc > 2 && strcmp(argv[2], "stop") == 0) {
        printf("tool stopping\n");
        raise(SIGSTOP);
        PMIx_tool_finalize();
        return 0;
    }

    pmix_query_t *q;
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    rc = PMIx_Query_info(q, 1, &info, &ninfo);
    const pmix_value_t *v =
        result("namespaces", rc, info, ninfo, PMIX_QUERY_NAMESPACES, PMIX_STRING);
    char job[PMIX_MAX_NSLEN + 1] = "";
    if (v != NULL) {
        snprintf(job, sizeof(job), "%s", v->data.string);
        printf("namespaces %s\n", job);
    }
    PMIX_INFO_FREE(info, ninfo);
    PMIX_QUERY_FREE(q, 1);

    /* the query that crashed ternrun (OpenPMIx's tool example asks it) */
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACE_INFO);
    info = NULL;
    ninfo = 0;
    rc = PMIx_Query_info(q, 1, &info, &ninfo);
    v = result("namespace info", rc, info, ninfo, PMIX_QUERY_NAMESPACE_INFO, PMIX_DATA_ARRAY);
    if (v != NULL)
        query_nsinfo("namespace info", v, print_nsinfo, NULL);
    PMIX_INFO_FREE(info, ninfo);
    PMIX_QUERY_FREE(q, 1);

    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_PROC_TABLE);
    PMIX_QUERY_QUALIFIERS_CREATE(&q[0], 1);
    PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_NSPACE, job, PMIX_STRING);
    info = NULL;
    ninfo = 0;
    rc = PMIx_Query_info(q, 1, &info, &ninfo);
    v = result("proc table", rc, info, ninfo, PMIX_QUERY_PROC_TABLE, PMIX_DATA_ARRAY);
    if (v != NULL && v->data.darray->type != PMIX_PROC_INFO) {
        fail("proc table: an array of %s", PMIx_Data_type_string(v->data.darray->type));
    } else if (v != NULL) {
        const pmix_proc_info_t *pi = v->data.darray->array;
        for (size_t i = 0; i < v->data.darray->size; i++)
            printf("proc %u pid %d state %d (%s)\n", (unsigned)pi[i].proc.rank, (int)pi[i].pid,
                   (int)pi[i].state, PMIx_Proc_state_string(pi[i].state));
    }
    PMIX_INFO_FREE(info, ninfo);
    PMIX_QUERY_FREE(q, 1);

    /* output copies come from tern-iof, not from PMIx: refused */
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, job, PMIX_RANK_WILDCARD);
    rc = PMIx_IOF_pull(&all, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, on_output, NULL, NULL);
    if (rc >= 0)
        fail("PMIx_IOF_pull was accepted: %s", PMIx_Error_string(rc));
    else
        printf("iof pull refused: %s\n", PMIx_Error_string(rc));

    rc = PMIx_tool_finalize();
    if (rc != PMIX_SUCCESS)
        fail("PMIx_tool_finalize: %s", PMIx_Error_string(rc));
    return failures ? 1 : 0;
}
