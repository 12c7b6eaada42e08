/*
 * ofi_ops ROLE DIR [safe] CASE...: ROLE A or B; DIR where the two write
 * their names (name.A, name.B); "safe" opens the domain FI_THREAD_SAFE
 * (else FI_THREAD_DOMAIN); CASE "all" or names from ofi_ops_cases.c.
 * Prints "ok CASE" per case and "FAIL ..." per failed check; exit 1 on
 * any.  Outside a PMIx job, so each process is a job of one and reaches
 * the other through the name it inserts (tern_peer_insert underneath).
 */
#include <unistd.h>

#include "tests/ofi/ofi_ops.h"

int failures;

struct tep T;
fi_addr_t PEER;
int ROLE;
static uint64_t sync_seq;

#define SYNC_TAG 0xff00000000000000ull

void sync_peer(void)
{
    char out = 's', in = 0;
    struct fi_context sc, rc;
    uint64_t tag = SYNC_TAG | sync_seq++;
    /* FI_COMPLETION: a completion under FI_SELECTIVE_COMPLETION too */
    struct iovec ri = {&in, 1}, si = {&out, 1};
    struct fi_msg_tagged rm = {
        .msg_iov = &ri, .iov_count = 1, .addr = PEER, .tag = tag, .context = &rc};
    struct fi_msg_tagged sm = {
        .msg_iov = &si, .iov_count = 1, .addr = PEER, .tag = tag, .context = &sc};
    CHECK_RET(fi_trecvmsg(T.ep, &rm, FI_COMPLETION), 0, "sync: fi_trecvmsg");
    CHECK_RET(fi_tsendmsg(T.ep, &sm, FI_COMPLETION), 0, "sync: fi_tsendmsg");
    wait_ok(&sc, "sync send", NULL);
    wait_ok(&rc, "sync receive", NULL);
}

struct fi_cq_err_entry wait_ok(void *ctx, const char *what, fi_addr_t *src)
{
    struct fi_cq_err_entry e;
    memset(&e, 0, sizeof(e));
    if (!tep_wait(&T, ctx, &e, src, WAIT_S)) {
        printf("FAIL: no completion for %s in %.0f s\n", what, WAIT_S);
        exit(1); /* the rest would wait for it too */
    }
    return e;
}

void reopen(enum fi_cq_format format, uint64_t bind_flags)
{
    tep_close_ep(&T);
    int ret = tep_open_ep(&T, format, bind_flags);
    if (ret != 0) {
        printf("FAIL: reopen the endpoint: %s\n", fi_strerror(-ret));
        exit(1);
    }
}

static void exchange_names(const char *dir)
{
    char name[8192], path[4096], tmp[4200];
    size_t len = sizeof(name);
    int ret = fi_getname(&T.ep->fid, name, &len);
    if (ret != 0) {
        printf("FAIL: fi_getname: %s\n", fi_strerror(-ret));
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/name.%c", dir, IS_A ? 'A' : 'B');
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (f == NULL || fwrite(name, 1, len, f) != len || fclose(f) != 0 || rename(tmp, path) != 0) {
        printf("FAIL: writing %s\n", path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/name.%c", dir, IS_A ? 'B' : 'A');
    double end = now_s() + 60;
    while ((f = fopen(path, "rb")) == NULL) {
        if (now_s() > end) {
            printf("FAIL: no %s after 60 s\n", path);
            exit(1);
        }
        usleep(10000);
    }
    len = fread(name, 1, sizeof(name), f);
    fclose(f);
    ret = fi_av_insert(T.av, name, 1, &PEER, 0, NULL);
    if (ret != 1) {
        printf("FAIL: fi_av_insert of the peer's name (%zu bytes): %d\n", len, ret);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 4 || (strcmp(argv[1], "A") != 0 && strcmp(argv[1], "B") != 0)) {
        fprintf(stderr, "usage: ofi_ops A|B DIR [safe] CASE...\n");
        return 2;
    }
    ROLE = argv[1][0] == 'B';
    int first = 3;
    bool safe = strcmp(argv[3], "safe") == 0;
    if (safe)
        first++;
    struct fi_info *h = tern_hints(), *fi = NULL;
    h->caps = FI_TAGGED | FI_MSG | FI_SEND | FI_RECV | FI_DIRECTED_RECV | FI_SOURCE | FI_RMA |
              FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    h->domain_attr->threading = safe ? FI_THREAD_SAFE : FI_THREAD_DOMAIN;
    h->domain_attr->av_type = FI_AV_TABLE;
    int ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &fi);
    fi_freeinfo(h);
    if (ret != 0) {
        printf("FAIL: fi_getinfo: %s\n", fi_strerror(-ret));
        return 1;
    }
    T.info = fi;
    if ((ret = tep_open_ep(&T, FI_CQ_FORMAT_TAGGED, 0)) != 0) {
        printf("FAIL: open the endpoint: %s\n", fi_strerror(-ret));
        return 1;
    }
    exchange_names(argv[2]);
    sync_peer();
    for (int i = first; i < argc; i++) {
        bool all = strcmp(argv[i], "all") == 0, found = false;
        for (const struct ops_case *c = ops_cases; c->name != NULL; c++) {
            if (!all && strcmp(argv[i], c->name) != 0)
                continue;
            if (all && strcmp(c->name, "threads") == 0)
                continue; /* its own run: FI_THREAD_SAFE */
            found = true;
            int before = failures;
            c->fn();
            sync_peer();
            printf("%s %s\n", failures == before ? "ok" : "FAIL", c->name);
        }
        if (!found) {
            printf("FAIL: no case %s\n", argv[i]);
            failures++;
        }
    }
    tep_close(&T);
    fi_freeinfo(fi);
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
