/*
 * Memory registration with a VC's netmod, through one registration cache
 * per netmod instance (engine/rcache.h), made on the first registration.
 * A worker's caches belong to its thread, like everything else of it.
 */
#include <stdio.h>

#include "engine/engine_internal.h"
#include "engine/netmod.h"
#include "engine/rcache.h"

static tern_status_t nm_reg(void *arg, void *addr, size_t len, void **handle)
{
    tern_netmod_inst_t *n = arg;
    return n->mem->mem_reg(n->state, addr, len, handle);
}

static void nm_dereg(void *arg, void *handle)
{
    tern_netmod_inst_t *n = arg;
    n->mem->mem_dereg(n->state, handle);
}

tern_status_t tern_mem_get(tern_vc_t *vc, const void *addr, size_t len, tern_mem_t *mem)
{
    tern_netmod_inst_t *n = vc->nm;
    if (n->mem == NULL)
        return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s (rank %d) registers no memory",
                          n->name, vc->rank);
    if (n->rcache == NULL) {
        tern_rcache_params_t p = {.name = n->name, .reg = nm_reg, .dereg = nm_dereg, .arg = n};
        tern_status_t st = tern_rcache_create(&p, &n->rcache);
        if (st != TERN_OK)
            return st;
    }
    mem->inst = n;
    return tern_rcache_get(n->rcache, addr, len, &mem->region);
}

void tern_mem_put(tern_mem_t *mem)
{
    tern_rcache_put(mem->inst->rcache, mem->region);
    mem->region = NULL;
}

tern_status_t tern_mem_rkey(const tern_mem_t *mem, const void *addr, size_t len, void *buf,
                            size_t *buflen)
{
    uintptr_t a = (uintptr_t)addr;
    if (a < mem->region->start || a > mem->region->end || len > mem->region->end - a)
        return tern_error(TERN_ERR_INVALID_PARAM, "remote key for %zu bytes at %p: outside "
                          "the registration [%#lx, %#lx)", len, addr,
                          (unsigned long)mem->region->start, (unsigned long)mem->region->end);
    const tern_nm_mem_ops_t *m = mem->inst->mem;
    if (m->rkey_pack == NULL)
        return tern_error(TERN_ERR_UNSUPPORTED, "netmod %s has no remote keys",
                          mem->inst->name);
    return m->rkey_pack(mem->inst->state, mem->region->handle, addr, len, buf, buflen);
}

void tern_mem_release(tern_netmod_inst_t *inst)
{
    if (inst->rcache != NULL)
        tern_rcache_destroy(inst->rcache);
    inst->rcache = NULL;
}

void tern_mem_progress(tern_worker_t *w)
{
    for (int i = 0; i < w->num_netmods; i++)
        if (w->netmods[i].rcache != NULL)
            tern_rcache_progress(w->netmods[i].rcache);
}
