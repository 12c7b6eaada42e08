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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void fail(const char *what, pmix_status_t rc)
{
    printf("FAIL: %s: %s\n", what, PMIx_Error_string(rc));
    failures++;
}

/* the value of a one-key query's answer: PMIx 4.2 clients read it flat,
 * one info keyed by the query key */
static const pmix_value_t *result(const pmix_info_t *info, size_t ninfo, const char *key)
{
    if (ninfo != 1 || strcmp(info[0].key, key) != 0) {
        printf("FAIL: %s: %zu answers, the first %s\n", key, ninfo, ninfo ? info[0].key : "-");
        failures++;
        return NULL;
    }
    return &info[0].value;
}

/* "nsinfo NSPACE CMDLINE" per element of PMIX_QUERY_NAMESPACE_INFO: an
 * array of infos, each an array {PMIX_NSPACE, PMIX_CMD_LINE} */
static void print_nsinfo(const pmix_value_t *v)
{
    const pmix_data_array_t *outer = v->data.darray;
    if (v->type != PMIX_DATA_ARRAY || outer == NULL || outer->type != PMIX_INFO) {
        fail("namespace info: not an array of infos", PMIX_ERR_BAD_PARAM);
        return;
    }
    const pmix_info_t *el = outer->array;
    for (size_t n = 0; n < outer->size; n++) {
        const pmix_data_array_t *in = el[n].value.data.darray;
        if (el[n].value.type != PMIX_DATA_ARRAY || in == NULL || in->type != PMIX_INFO) {
            fail("namespace info: an element is not an array of infos", PMIX_ERR_BAD_PARAM);
            return;
        }
        const pmix_info_t *it = in->array;
        const char *ns = "?", *cmd = "?";
        for (size_t m = 0; m < in->size; m++) {
            if (it[m].value.type != PMIX_STRING)
                continue;
            if (PMIX_CHECK_KEY(&it[m], PMIX_NSPACE))
                ns = it[m].value.data.string;
            else if (PMIX_CHECK_KEY(&it[m], PMIX_CMD_LINE))
                cmd = it[m].value.data.string;
        }
        printf("nsinfo %s %s\n", ns, cmd);
    }
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
    pmix_proc_t me;
    pmix_info_t attach;
    PMIX_INFO_LOAD(&attach, PMIX_TOOL_ATTACHMENT_FILE, argv[1], PMIX_STRING);
    pmix_status_t rc = PMIx_tool_init(&me, &attach, 1);
    PMIX_INFO_DESTRUCT(&attach);
    if (rc != PMIX_SUCCESS) {
        fail("PMIx_tool_init", rc);
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
    const pmix_value_t *v = result(info, ninfo, PMIX_QUERY_NAMESPACES);
    char job[PMIX_MAX_NSLEN + 1] = "";
    if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_STRING) {
        fail("query namespaces", rc);
    } else {
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
    if (rc != PMIX_SUCCESS)
        fail("query namespace info", rc);
    else if ((v = result(info, ninfo, PMIX_QUERY_NAMESPACE_INFO)) != NULL)
        print_nsinfo(v);
    PMIX_INFO_FREE(info, ninfo);
    PMIX_QUERY_FREE(q, 1);

    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_PROC_TABLE);
    PMIX_QUERY_QUALIFIERS_CREATE(&q[0], 1);
    PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_NSPACE, job, PMIX_STRING);
    info = NULL;
    ninfo = 0;
    rc = PMIx_Query_info(q, 1, &info, &ninfo);
    v = result(info, ninfo, PMIX_QUERY_PROC_TABLE);
    if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_DATA_ARRAY ||
        v->data.darray->type != PMIX_PROC_INFO) {
        fail("query proc table", rc);
    } else {
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
        fail("PMIx_IOF_pull was accepted", rc);
    else
        printf("iof pull refused: %s\n", PMIx_Error_string(rc));

    rc = PMIx_tool_finalize();
    if (rc != PMIX_SUCCESS)
        fail("PMIx_tool_finalize", rc);
    return failures ? 1 : 0;
}
