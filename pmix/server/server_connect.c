/*
 * tern PMIx host server: connect / disconnect and process groups.
 *
 * The PMIx server library runs these as collectives among the local
 * participants (as it runs a fence) and calls the host once all of them
 * have entered.  With one node (ternrun), every participant is a rank of a
 * namespace this server registered (the first job or a spawned one), and
 * the server library holds every local proc's posted keys already, so
 * there is nothing to exchange: the host completes at once, and the procs
 * can PMIx_Get each other's keys.
 *   connect, disconnect         success when every proc is of a namespace
 *                               the host runs; another one is
 *                               PMIX_ERR_NOT_SUPPORTED with a line naming it.
 *                               The host is told (hooks.connection): the
 *                               process events of connected namespaces go
 *                               to each other
 *   group construct / destruct  likewise; PMIX_GROUP_ASSIGN_CONTEXT_ID gets a
 *                               PMIX_GROUP_CONTEXT_ID unique in this server
 *                               (1, 2, ...), the same for every member
 * Answers go back from a thread of their own (tern_srv_answer_*).
 */
#include "pmix/server/server_internal.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* every proc in a namespace of the host; else log what asked for whom */
static bool job_only(const pmix_proc_t procs[], size_t nprocs, const char *what)
{
    for (size_t i = 0; i < nprocs; i++) {
        struct tern_srv_proc one;
        bool known = tern_srv_hooks.procs != NULL
                         ? tern_srv_hooks.procs(tern_srv_hooks.ctx, procs[i].nspace, &one, 1) >= 0
                         : tern_srv_hooks.nspace != NULL &&
                               strncmp(procs[i].nspace, tern_srv_hooks.nspace, PMIX_MAX_NSLEN) == 0;
        if (!known) {
            tern_srv_log(0, "PMIx %s with %s:%u: not a namespace of this launcher (one node: "
                         "only its jobs can take part)", what, procs[i].nspace,
                         (unsigned)procs[i].rank);
            return false;
        }
    }
    return true;
}

/* success, told through cbfunc from another thread (or done at once) */
static pmix_status_t op_done(pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    if (cbfunc != NULL && tern_srv_answer_op(cbfunc, cbdata, PMIX_SUCCESS) == 0)
        return PMIX_SUCCESS;
    return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t tern_srv_connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                               size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)info, (void)ninfo;
    if (!job_only(procs, nprocs, "connect"))
        return PMIX_ERR_NOT_SUPPORTED;
    tern_srv_log(2, "PMIx connect of %zu proc(s): one node, nothing to exchange", nprocs);
    if (tern_srv_hooks.connection != NULL)
        tern_srv_hooks.connection(tern_srv_hooks.ctx, procs, nprocs, true);
    return op_done(cbfunc, cbdata);
}

pmix_status_t tern_srv_disconnect(const pmix_proc_t procs[], size_t nprocs,
                                  const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)info, (void)ninfo;
    if (!job_only(procs, nprocs, "disconnect"))
        return PMIX_ERR_NOT_SUPPORTED;
    if (tern_srv_hooks.connection != NULL)
        tern_srv_hooks.connection(tern_srv_hooks.ctx, procs, nprocs, false);
    return op_done(cbfunc, cbdata);
}

pmix_status_t tern_srv_group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[],
                             size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                             pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    static _Atomic size_t next_context = 1;
    const char *what = op == PMIX_GROUP_CONSTRUCT ? "group construct" : "group destruct";
    if (op != PMIX_GROUP_CONSTRUCT && op != PMIX_GROUP_DESTRUCT)
        return PMIX_ERR_NOT_SUPPORTED;
    if (!job_only(procs, nprocs, what))
        return PMIX_ERR_NOT_SUPPORTED;
    bool want_id = false;
    for (size_t k = 0; k < ndirs && op == PMIX_GROUP_CONSTRUCT; k++)
        if (PMIX_CHECK_KEY(&directives[k], PMIX_GROUP_ASSIGN_CONTEXT_ID))
            want_id = directives[k].value.type != PMIX_BOOL || directives[k].value.data.flag;
    if (cbfunc == NULL)
        return PMIX_ERR_BAD_PARAM;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    if (want_id) {
        size_t id = atomic_fetch_add(&next_context, 1);
        PMIX_INFO_CREATE(info, 1);
        if (info == NULL)
            return PMIX_ERR_NOMEM;
        ninfo = 1;
        PMIX_INFO_LOAD(&info[0], PMIX_GROUP_CONTEXT_ID, &id, PMIX_SIZE);
        tern_srv_log(2, "PMIx group %s of %zu proc(s): context id %zu", grp, nprocs, id);
    }
    if (tern_srv_answer_info(cbfunc, cbdata, PMIX_SUCCESS, info, ninfo) == 0)
        return PMIX_SUCCESS;
    PMIX_INFO_FREE(info, ninfo);
    return PMIX_ERR_OUT_OF_RESOURCE;
}
