/* Intrusive doubly linked list (circular, with a head sentinel). */
#ifndef TERN_ENGINE_LIST_H
#define TERN_ENGINE_LIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tern_list {
    struct tern_list *prev, *next;
} tern_list_t;

#define TERN_CONTAINER_OF(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

static inline void tern_list_init(tern_list_t *h) { h->prev = h->next = h; }
static inline bool tern_list_empty(const tern_list_t *h) { return h->next == h; }

static inline void tern_list_push_tail(tern_list_t *h, tern_list_t *e)
{
    e->prev = h->prev;
    e->next = h;
    h->prev->next = e;
    h->prev = e;
}

static inline void tern_list_push_head(tern_list_t *h, tern_list_t *e)
{
    tern_list_push_tail(h->next, e); /* before the first */
}

static inline void tern_list_del(tern_list_t *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->prev = e->next = e;
}

static inline tern_list_t *tern_list_pop_head(tern_list_t *h)
{
    tern_list_t *e = h->next;
    if (e == h)
        return NULL;
    tern_list_del(e);
    return e;
}

#define tern_list_for_each_safe(pos, tmp, head) \
    for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); (pos) = (tmp), (tmp) = (pos)->next)

#endif
