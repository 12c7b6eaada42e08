/*
 * tern PMIx host server: PMIx_Log.
 *
 * OpenPMIx 4.2's server library hands a client's PMIx_Log to the host (this
 * module's .log) rather than to its own plog framework: without a host
 * function the request was accepted and dropped.  Channels:
 *   PMIX_LOG_STDOUT / PMIX_LOG_STDERR   the message on ternrun's stdout /
 *                                       stderr, one write of one line
 *                                       (newline added), so it never splits
 *                                       a line the IOF writes;
 *   PMIX_LOG_SYSLOG / _LOCAL_SYSLOG /   syslog(3) at PMIX_LOG_SYSLOG_PRI
 *   _GLOBAL_SYSLOG                      (LOG_ERR by default, as PMIx says),
 *                                       identity "ternrun"; one node, so
 *                                       global is local;
 *   email, global datastore, job record refused: PMIX_ERR_NOT_SUPPORTED,
 *                                       and a line naming the channel.
 * Directives: PMIX_LOG_ONCE (stop at the first channel that took it),
 * PMIX_LOG_TAG_OUTPUT ("stdout: " / "stderr: " before the message),
 * PMIX_LOG_TIMESTAMP_OUTPUT (the request's PMIX_LOG_TIMESTAMP, else now,
 * as YYYY-MM-DD HH:MM:SS before it).
 * Status: success when every channel asked for took it (or one did, with
 * PMIX_LOG_ONCE); PMIX_ERR_PARTIAL_SUCCESS when some did and some were
 * refused; PMIX_ERR_NOT_SUPPORTED when none could; PMIX_ERR_BAD_PARAM for a
 * channel whose value is not a string.
 * Runs on PMIx's progress thread; write(2) and syslog(3) are thread-safe.
 * The answer goes back from a thread of its own (tern_srv_answer_op), never
 * from inside the call: OpenPMIx's plog framework holds a lock around the
 * upcall that its completion callback takes too (an answer given at once
 * hung the client's PMIx_Log and the server's progress thread).
 */
#include "pmix/server/server_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static bool is_key(const pmix_info_t *i, const char *key)
{
    return strncmp(i->key, key, PMIX_MAX_KEYLEN) == 0;
}

static bool flag(const pmix_info_t dirs[], size_t n, const char *key)
{
    for (size_t k = 0; k < n; k++)
        if (is_key(&dirs[k], key))
            return dirs[k].value.type != PMIX_BOOL || dirs[k].value.data.flag;
    return false;
}

static int syslog_priority(const pmix_info_t dirs[], size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (is_key(&dirs[k], PMIX_LOG_SYSLOG_PRI) && dirs[k].value.type == PMIX_INT)
            return dirs[k].value.data.integer & LOG_PRIMASK;
    return LOG_ERR;
}

/* "YYYY-MM-DD HH:MM:SS " of the request's timestamp (data or directive),
 * else of now */
static void stamp(const pmix_info_t data[], size_t ndata, const pmix_info_t dirs[], size_t ndirs,
                  char *buf, size_t len)
{
    time_t t = time(NULL);
    for (size_t k = 0; k < ndata + ndirs; k++) {
        const pmix_info_t *i = k < ndata ? &data[k] : &dirs[k - ndata];
        if (is_key(i, PMIX_LOG_TIMESTAMP) && i->value.type == PMIX_TIME)
            t = i->value.data.time;
    }
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%d %H:%M:%S ", &tm);
}

/* one write of the whole line (a pipe keeps it whole up to PIPE_BUF) */
static bool write_line(int fd, const char *prefix, const char *msg)
{
    size_t pl = strlen(prefix), ml = strlen(msg);
    bool nl = ml == 0 || msg[ml - 1] != '\n';
    char *line = malloc(pl + ml + 2);
    if (line == NULL)
        return false;
    memcpy(line, prefix, pl);
    memcpy(line + pl, msg, ml);
    if (nl)
        line[pl + ml] = '\n';
    size_t len = pl + ml + (nl ? 1 : 0), off = 0;
    while (off < len) {
        ssize_t w = write(fd, line + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    free(line);
    return off == len;
}

void tern_srv_log_request(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
                          const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                          void *cbdata)
{
    static const char *const refused_channels[] = {PMIX_LOG_EMAIL, PMIX_LOG_GLOBAL_DATASTORE,
                                                   PMIX_LOG_JOB_RECORD};
    bool once = flag(directives, ndirs, PMIX_LOG_ONCE);
    bool tag = flag(directives, ndirs, PMIX_LOG_TAG_OUTPUT);
    char when[32] = "";
    if (flag(directives, ndirs, PMIX_LOG_TIMESTAMP_OUTPUT))
        stamp(data, ndata, directives, ndirs, when, sizeof(when));
    size_t took = 0, refused = 0, bad = 0;
    for (size_t k = 0; k < ndata && !(once && took > 0); k++) {
        const pmix_info_t *i = &data[k];
        bool out = is_key(i, PMIX_LOG_STDOUT), err = is_key(i, PMIX_LOG_STDERR);
        bool sys = is_key(i, PMIX_LOG_SYSLOG) || is_key(i, PMIX_LOG_LOCAL_SYSLOG) ||
                   is_key(i, PMIX_LOG_GLOBAL_SYSLOG);
        if (out || err || sys) {
            if (i->value.type != PMIX_STRING || i->value.data.string == NULL) {
                tern_srv_log(0, "PMIx_Log from %s:%u: %s wants a string", client->nspace,
                             (unsigned)client->rank, i->key);
                bad++;
                continue;
            }
            const char *msg = i->value.data.string;
            if (sys) {
                openlog("ternrun", LOG_PID, LOG_USER);
                syslog(syslog_priority(directives, ndirs), "%s:%u: %s", client->nspace,
                       (unsigned)client->rank, msg);
                took++;
                continue;
            }
            char prefix[64];
            snprintf(prefix, sizeof(prefix), "%s%s", when, tag ? (out ? "stdout: " : "stderr: ")
                                                               : "");
            if (write_line(out ? STDOUT_FILENO : STDERR_FILENO, prefix, msg))
                took++;
            else
                refused++;
            continue;
        }
        for (size_t c = 0; c < sizeof(refused_channels) / sizeof(refused_channels[0]); c++)
            if (is_key(i, refused_channels[c])) {
                tern_srv_log(0, "PMIx_Log from %s:%u to %s: not supported (ternrun logs to "
                             "stdout, stderr and syslog)", client->nspace,
                             (unsigned)client->rank, i->key);
                refused++;
            }
        /* anything else (PMIX_LOG_SOURCE, PMIX_LOG_TIMESTAMP, ...) is about
         * the message, not a channel */
    }
    pmix_status_t st = bad > 0                   ? PMIX_ERR_BAD_PARAM
                       : took > 0 && refused > 0 && !once ? PMIX_ERR_PARTIAL_SUCCESS
                       : took > 0                ? PMIX_SUCCESS
                                                 : PMIX_ERR_NOT_SUPPORTED;
    /* inline only if no thread starts: better a stuck request than a lost one */
    if (cbfunc != NULL && tern_srv_answer_op(cbfunc, cbdata, st) != 0) {
        tern_srv_log(0, "PMIx_Log: no thread to answer from; answering inline");
        cbfunc(st, cbdata);
    }
}
