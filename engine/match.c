#include "engine/match.h"

tern_request_t *tern_match_posted(tern_worker_t *w, int src, uint64_t tag, uint16_t space)
{
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &w->posted)
    {
        tern_request_t *r = TERN_CONTAINER_OF(pos, tern_request_t, link);
        if (tern_match_accepts(r->match_src, r->match_tag, r->match_ignore, r->space, src, tag,
                               space)) {
            tern_list_del(pos);
            r->flags &= ~(uint32_t)TERN_REQF_POSTED;
            return r;
        }
    }
    return NULL;
}

tern_request_t *tern_peek_unexpected(tern_worker_t *w, int src, uint64_t tag, uint64_t ignore,
                                     uint16_t space)
{
    tern_list_t *pos;
    for (pos = w->unexpected.next; pos != &w->unexpected; pos = pos->next) {
        tern_request_t *r = TERN_CONTAINER_OF(pos, tern_request_t, link);
        if (tern_match_accepts(src, tag, ignore, space, r->peer, r->tag, r->space))
            return r;
    }
    return NULL;
}

tern_request_t *tern_match_unexpected(tern_worker_t *w, int src, uint64_t tag, uint64_t ignore,
                                      uint16_t space)
{
    tern_list_t *pos, *tmp;
    tern_list_for_each_safe(pos, tmp, &w->unexpected)
    {
        tern_request_t *r = TERN_CONTAINER_OF(pos, tern_request_t, link);
        if (tern_match_accepts(src, tag, ignore, space, r->peer, r->tag, r->space)) {
            tern_list_del(pos);
            r->flags &= ~(uint32_t)TERN_REQF_UNEXP;
            return r;
        }
    }
    return NULL;
}
