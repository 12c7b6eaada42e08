/*
 * Unit test of the netmod registry and its capability tables (no job):
 * a descriptor with every required slot registers; one built for another
 * ABI, without a core table, with a required slot missing, or with half a
 * capability table (an LMT table without start_send, a wait table without
 * disarm, remote keys packed but never unpacked, a conn table without
 * vc_init_remote, a core table without card) is refused with an error naming the netmod and the slot,
 * and stays out of the registry; an absent table is an absent capability
 * (the instance's pointer is NULL); the core's optional slots get typed
 * no-ops, poll stays NULL.  Every built netmod passed the same check.
 */
#include <stdio.h>
#include <string.h>

#include "engine/netmod.h"

#include "tests/unit/expect.h"

static bool t_reachable(tern_context_t *ctx, int rank)
{
    return true;
}
static tern_status_t t_init(tern_worker_t *w, const void *config, void **shared, void **state)
{
    *state = NULL;
    return TERN_OK;
}
static tern_status_t t_state(void *state)
{
    return TERN_OK;
}
static tern_status_t t_vc_card(void *state, tern_vc_t *vc, const void *card, size_t len)
{
    return TERN_OK;
}
static tern_status_t t_card(void *state, void *buf, size_t *len)
{
    *len = 0;
    return TERN_OK;
}
static tern_status_t t_vc(tern_vc_t *vc)
{
    return TERN_OK;
}
static tern_status_t t_istart(tern_vc_t *vc, const void *hdr, size_t hdrlen, const void *data,
                              size_t len, tern_request_t **sreq)
{
    *sreq = NULL;
    return TERN_OK;
}
static tern_status_t t_noncontig(tern_vc_t *vc, tern_request_t *sreq, const void *hdr,
                                 size_t hdrlen)
{
    return TERN_OK;
}
static unsigned t_modes(void *state)
{
    return 1u << TERN_LMT_COOP;
}
static int t_choose(tern_vc_t *vc, size_t len)
{
    return TERN_LMT_COOP;
}
static tern_status_t t_initiate(tern_vc_t *vc, tern_request_t *sreq, int *mode, void *cookie,
                                size_t *cookie_len)
{
    *cookie_len = 0;
    return TERN_OK;
}
static tern_status_t t_cookie(tern_vc_t *vc, tern_request_t *r, const void *c, size_t n)
{
    return TERN_OK;
}
static tern_status_t t_done(tern_vc_t *vc, tern_request_t *r)
{
    return TERN_OK;
}
static int t_wait_fd(void *state)
{
    return -1;
}
static bool t_arm(void *state)
{
    return true;
}
static void t_disarm(void *state) {}
static tern_status_t t_reg(void *state, void *addr, size_t len, void **memh)
{
    return TERN_OK;
}
static void t_dereg(void *state, void *memh) {}
static tern_status_t t_rkey_pack(void *state, void *memh, const void *addr, size_t len, void *buf,
                                 size_t *buflen)
{
    return TERN_OK;
}
static tern_status_t t_remote(void *state, tern_vc_t *vc, uint32_t job, int rank,
                              const void *card, size_t len)
{
    return TERN_OK;
}
static const char *t_port_unable(void *state)
{
    return NULL;
}

static const tern_nm_core_ops_t core_full = {
    .reachable = t_reachable,
    .init = t_init,
    .finalize = t_state,
    .card = t_card,
    .vc_init = t_vc_card,
    .vc_destroy = t_vc,
    .vc_terminate = t_vc,
    .istart_contig_msg = t_istart,
    .send_noncontig = t_noncontig,
};

static const tern_nm_lmt_ops_t lmt_full = {
    .modes = t_modes,
    .choose = t_choose,
    .initiate = t_initiate,
    .start_recv = t_cookie,
    .start_send = t_cookie,
    .handle_cookie = t_cookie,
    .done_send = t_done,
    .done_recv = t_done,
};

static const tern_nm_conn_ops_t conn_full = {.vc_init_remote = t_remote};

static const tern_nm_wait_ops_t wait_full = {
    .wait_fd = t_wait_fd,
    .arm = t_arm,
    .disarm = t_disarm,
};

/* What each refused descriptor gets wrong, and words its error must have. */
typedef struct bad_case {
    const char *what;
    tern_netmod_desc_t desc;
    const char *words[3];
} bad_case_t;

static bool has_words(const char *msg, const char *const *words)
{
    for (int i = 0; i < 3 && words[i] != NULL; i++)
        if (strstr(msg, words[i]) == NULL)
            return false;
    return true;
}

static tern_status_t t_rma_reg(void *s, void *a, size_t l, unsigned acc, void **h)
{
    (void)s, (void)a, (void)l, (void)acc, (void)h;
    return TERN_ERR_UNSUPPORTED;
}
static void t_rma_dereg(void *s, void *h) { (void)s, (void)h; }
static tern_status_t t_rma_pack(void *s, void *h, void *b, size_t *l)
{
    (void)s, (void)h, (void)b, (void)l;
    return TERN_ERR_UNSUPPORTED;
}
static tern_status_t t_rma_flush(tern_vc_t *vc, tern_request_t *p)
{
    (void)vc, (void)p;
    return TERN_OK;
}
static tern_status_t t_rma_op(tern_vc_t *vc, tern_request_t *r, const void *k, size_t kl)
{
    (void)vc, (void)r, (void)k, (void)kl;
    return TERN_ERR_UNSUPPORTED;
}

int main(void)
{
    int before = tern_netmod_count();
    /* the built netmods registered at load time: each passed the check */
    for (int i = 0; i < before; i++)
        EXPECT(tern_netmod_check(tern_netmod_get(i)) == TERN_OK, "built netmod %s: %s",
               tern_netmod_get(i)->name, tern_last_error());
    EXPECT(tern_netmod_check(&tern_netmod_self) == TERN_OK, "self: %s", tern_last_error());

    /* half tables, built from the full ones with one slot taken out */
    tern_nm_core_ops_t core_no_send = core_full;
    core_no_send.send_noncontig = NULL;
    tern_nm_core_ops_t core_no_init = core_full;
    core_no_init.init = NULL;
    tern_nm_core_ops_t core_no_card = core_full;
    core_no_card.card = NULL;
    tern_nm_lmt_ops_t lmt_half = lmt_full;
    lmt_half.start_send = NULL;
    tern_nm_lmt_ops_t lmt_no_modes = lmt_full;
    lmt_no_modes.modes = NULL;
    const tern_nm_wait_ops_t wait_half = {.wait_fd = t_wait_fd, .arm = t_arm};
    const tern_nm_mem_ops_t mem_half_keys = {
        .mem_reg = t_reg, .mem_dereg = t_dereg, .rkey_pack = t_rkey_pack};
    const tern_nm_mem_ops_t mem_no_dereg = {.mem_reg = t_reg};
    const tern_nm_conn_ops_t conn_half = {.port_unable = t_port_unable};
    const tern_nm_rma_ops_t rma_no_flush = {.reg = t_rma_reg, .dereg = t_rma_dereg,
                                            .pack = t_rma_pack, .put = t_rma_op,
                                            .get = t_rma_op};
    tern_nm_rma_ops_t rma_half_amo = rma_no_flush;
    rma_half_amo.flush = t_rma_flush;
    rma_half_amo.amo = t_rma_op; /* amo without amo_local */

    const bad_case_t bad[] = {
        {"another ABI",
         {.abi = TERN_NETMOD_ABI + 1, .name = "t-abi", .core = &core_full},
         {"t-abi", "ABI"}},
        {"no ABI given", {.name = "t-noabi", .core = &core_full}, {"t-noabi", "ABI 0"}},
        {"no core table", {.abi = TERN_NETMOD_ABI, .name = "t-nocore"}, {"t-nocore", "core"}},
        {"core without send_noncontig",
         {.abi = TERN_NETMOD_ABI, .name = "t-core", .core = &core_no_send},
         {"t-core", "core", "without send_noncontig"}},
        {"core without init",
         {.abi = TERN_NETMOD_ABI, .name = "t-init", .core = &core_no_init},
         {"t-init", "core", "without init"}},
        {"core without card",
         {.abi = TERN_NETMOD_ABI, .name = "t-card", .core = &core_no_card},
         {"t-card", "core", "without card"}},
        {"half an LMT table",
         {.abi = TERN_NETMOD_ABI, .name = "t-lmt", .core = &core_full, .lmt = &lmt_half},
         {"t-lmt", "lmt", "without start_send"}},
        {"LMT table without modes",
         {.abi = TERN_NETMOD_ABI, .name = "t-modes", .core = &core_full, .lmt = &lmt_no_modes},
         {"t-modes", "lmt", "without modes"}},
        {"wait table without disarm",
         {.abi = TERN_NETMOD_ABI, .name = "t-wait", .core = &core_full, .wait = &wait_half},
         {"t-wait", "wait", "without disarm"}},
        {"remote keys packed, never unpacked",
         {.abi = TERN_NETMOD_ABI, .name = "t-rkey", .core = &core_full, .mem = &mem_half_keys},
         {"t-rkey", "mem", "without rkey_unpack"}},
        {"mem table without mem_dereg",
         {.abi = TERN_NETMOD_ABI, .name = "t-dereg", .core = &core_full, .mem = &mem_no_dereg},
         {"t-dereg", "mem", "without mem_dereg"}},
        {"rma table without flush",
         {.abi = TERN_NETMOD_ABI, .name = "t-rma", .core = &core_full, .rma = &rma_no_flush},
         {"t-rma", "rma", "without flush"}},
        {"rma table with amo but no amo_local",
         {.abi = TERN_NETMOD_ABI, .name = "t-amo", .core = &core_full, .rma = &rma_half_amo},
         {"t-amo", "rma", "amo_local"}},
        {"conn table without vc_init_remote",
         {.abi = TERN_NETMOD_ABI, .name = "t-conn", .core = &core_full, .conn = &conn_half},
         {"t-conn", "conn", "without vc_init_remote"}},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const bad_case_t *c = &bad[i];
        tern_status_t st = tern_netmod_register(&c->desc);
        EXPECT(st == TERN_ERR_UNSUPPORTED, "%s: registered (status %d)", c->what, st);
        EXPECT(has_words(tern_last_error(), c->words),
               "%s: the error does not name the "
               "netmod and the slot: %s",
               c->what, tern_last_error());
        EXPECT(tern_netmod_find(c->desc.name) == NULL, "%s: in the registry", c->what);
        tern_netmod_inst_t inst;
        st = tern_netmod_instantiate(&inst, &c->desc);
        EXPECT(st == TERN_ERR_UNSUPPORTED, "%s: instantiated (status %d)", c->what, st);
        tern_netmod_inst_release(&inst);
    }
    EXPECT(tern_netmod_count() == before, "%d netmods after the refusals, %d before",
           tern_netmod_count(), before);

    /* whole tables register; an absent one stays absent in the instance */
    static const tern_netmod_desc_t good = {.abi = TERN_NETMOD_ABI,
                                            .name = "t-good",
                                            .priority = -1,
                                            .reach = "nothing",
                                            .core = &core_full,
                                            .lmt = &lmt_full,
                                            .wait = &wait_full,
                                            .conn = &conn_full};
    EXPECT(tern_netmod_register(&good) == TERN_OK, "whole tables: %s", tern_last_error());
    EXPECT(tern_netmod_find("t-good") == &good, "t-good is not in the registry");
    EXPECT(tern_netmod_count() == before + 1, "%d netmods", tern_netmod_count());
    EXPECT(tern_netmod_get(tern_netmod_count() - 1) == &good, "lowest priority is not last");
    EXPECT(tern_netmod_register(&good) == TERN_ERR_UNSUPPORTED, "registered twice");
    EXPECT(strstr(tern_last_error(), "t-good") != NULL, "duplicate: %s", tern_last_error());
    tern_netmod_inst_t inst;
    EXPECT(tern_netmod_instantiate(&inst, &good) == TERN_OK, "instantiate: %s", tern_last_error());
    EXPECT(inst.lmt == &lmt_full && inst.wait == &wait_full && inst.mem == NULL &&
               inst.conn == &conn_full,
           "the instance's tables are not the descriptor's");
    EXPECT(inst.core.wireup_done != NULL && inst.core.check_peers != NULL &&
               inst.core.counters != NULL,
           "an optional core slot has no typed no-op");
    EXPECT(inst.core.poll == NULL, "poll was given a default: the engine would poll it");
    EXPECT(inst.core.wireup_done(NULL) == TERN_OK && inst.core.counters(NULL, NULL, 0) == 0,
           "the no-ops do something");
    EXPECT(inst.core.istart_contig_msg == t_istart, "the core table was not copied");
    tern_netmod_inst_release(&inst);

    if (failures == 0)
        printf("netmod_registry_test: all passed\n");
    return failures ? 1 : 0;
}
