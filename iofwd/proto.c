/*
 * iofwd wire format: encode, and decode with every field checked (proto.h).
 * Layouts are fixed and padded by hand (static asserts), so a message is
 * its struct's bytes after the header on the x86-64 / aarch64 hosts tern
 * runs on.
 */
#include "iofwd/proto.h"

#include <stddef.h>
#include <string.h>

#include "engine/log.h"

_Static_assert(sizeof(tern_io_hdr_t) == 16, "iofwd header layout");
_Static_assert(sizeof(tern_io_connect_t) == TERN_IO_JOB_MAX + 48 + TERN_IO_PATH_MAX,
               "CONNECT layout");
_Static_assert(sizeof(tern_io_connected_t) == 16, "CONNECTED layout");
_Static_assert(sizeof(tern_io_write_req_t) == 24, "WRITE_REQ layout");
_Static_assert(sizeof(tern_io_write_done_t) == 16, "WRITE_DONE layout");
_Static_assert(sizeof(tern_io_finished_t) == 16, "FINISHED layout");
_Static_assert(sizeof(tern_io_error_t) == TERN_IO_MSG_MAX + 8, "ERROR layout");

static const struct {
    const char *name;
    size_t body;
} types[TERN_IO_NTYPES] = {
    [TERN_IO_CONNECT] = {"CONNECT", sizeof(tern_io_connect_t)},
    [TERN_IO_CONNECTED] = {"CONNECTED", sizeof(tern_io_connected_t)},
    [TERN_IO_WRITE_REQ] = {"WRITE_REQ", sizeof(tern_io_write_req_t)},
    [TERN_IO_WRITE_DONE] = {"WRITE_DONE", sizeof(tern_io_write_done_t)},
    [TERN_IO_BYE] = {"BYE", 0},
    [TERN_IO_FINISHED] = {"FINISHED", sizeof(tern_io_finished_t)},
    [TERN_IO_ERROR] = {"ERROR", sizeof(tern_io_error_t)},
    [TERN_IO_PING] = {"PING", 0},
    [TERN_IO_PONG] = {"PONG", 0},
    [TERN_IO_HELD] = {"HELD", sizeof(tern_io_write_done_t)},
};

static int known(unsigned type)
{
    return type > 0 && type < TERN_IO_NTYPES;
}

const char *tern_io_type_name(enum tern_io_type type)
{
    return known((unsigned)type) ? types[type].name : "?";
}

size_t tern_io_size(enum tern_io_type type)
{
    return known((unsigned)type) ? sizeof(tern_io_hdr_t) + types[type].body : 0;
}

size_t tern_io_encode(const tern_io_msg_t *msg, void *buf, size_t cap)
{
    size_t n = tern_io_size(msg->type);
    if (n == 0 || n > cap)
        return 0;
    tern_io_hdr_t h = {.magic = TERN_IO_MAGIC, .version = TERN_IO_VERSION,
                       .type = (uint16_t)msg->type,
                       .len = (uint32_t)types[msg->type].body};
    memcpy(buf, &h, sizeof(h));
    memcpy((char *)buf + sizeof(h), &msg->u, types[msg->type].body);
    return n;
}

/* a NUL within the field, else the field is malformed */
static int terminated(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

static tern_status_t bad(const char *type, const char *field, const char *why)
{
    return tern_error(TERN_ERR_MALFORMED, "iofwd %s: %s %s", type, field, why);
}

static tern_status_t check_body(tern_io_msg_t *m)
{
    const char *t = tern_io_type_name(m->type);
    switch (m->type) {
    case TERN_IO_CONNECT: {
        const tern_io_connect_t *c = &m->u.connect;
        if (!terminated(c->job, sizeof(c->job)) || c->job[0] == '\0')
            return bad(t, "job", "is not a terminated, non-empty name");
        if (c->ranks == 0 || c->rank >= c->ranks)
            return bad(t, "rank", "is not below ranks (or ranks is 0)");
        if (c->pid <= 0)
            return bad(t, "pid", "is not a process id");
        if (c->buf_len == 0 || c->buf_addr == 0 || c->buf_addr + c->buf_len < c->buf_addr)
            return bad(t, "buffer", "is empty, NULL or wraps around");
        if (c->reserved != 0)
            return bad(t, "reserved", "is not 0");
        if (c->mode != TERN_IO_PER_RANK && c->mode != TERN_IO_SHARED)
            return bad(t, "mode", "is neither per-rank files nor a shared file");
        if (c->flags & ~TERN_IO_FLAG_SYNC)
            return bad(t, "flags", "has unknown bits");
        if ((c->mode == TERN_IO_SHARED) != (c->region != 0))
            return bad(t, "region", "is 0 for a shared file, or set for per-rank files");
        if (c->mode == TERN_IO_SHARED && c->region * c->ranks / c->ranks != c->region)
            return bad(t, "region", "times ranks overflows");
        if (!terminated(c->path, sizeof(c->path)) || c->path[0] != '/')
            return bad(t, "path", "is not a terminated absolute path");
        return TERN_OK;
    }
    case TERN_IO_CONNECTED:
        if (m->u.connected.credits == 0 || m->u.connected.staging == 0)
            return bad(t, "credits / staging", "is 0");
        return m->u.connected.reserved == 0 ? TERN_OK : bad(t, "reserved", "is not 0");
    case TERN_IO_WRITE_REQ: {
        const tern_io_write_req_t *w = &m->u.write_req;
        if (w->offset + w->len < w->offset)
            return bad(t, "offset + len", "wraps around");
        return TERN_OK;
    }
    case TERN_IO_WRITE_DONE:
    case TERN_IO_HELD:
        if (m->u.write_done.status > 0 || m->u.write_done.err < 0)
            return bad(t, "status / errno", "is out of range");
        return TERN_OK;
    case TERN_IO_FINISHED:
        if (m->u.finished.status > 0)
            return bad(t, "status", "is out of range");
        return m->u.finished.reserved == 0 ? TERN_OK : bad(t, "reserved", "is not 0");
    case TERN_IO_ERROR:
        if (m->u.error.status >= 0)
            return bad(t, "status", "is not an error");
        if (!terminated(m->u.error.msg, sizeof(m->u.error.msg)))
            return bad(t, "msg", "is not terminated");
        return TERN_OK;
    default:
        return TERN_OK; /* no body */
    }
}

tern_status_t tern_io_decode(const void *buf, size_t len, tern_io_msg_t *out)
{
    tern_io_hdr_t h;
    if (buf == NULL || len < sizeof(h))
        return tern_error(TERN_ERR_MALFORMED, "iofwd message of %zu bytes: shorter than its "
                          "header (%zu)", len, sizeof(h));
    memcpy(&h, buf, sizeof(h));
    if (h.magic != TERN_IO_MAGIC)
        return tern_error(TERN_ERR_MALFORMED, "iofwd message: magic %08x, not %08x", h.magic,
                          TERN_IO_MAGIC);
    if (h.version != TERN_IO_VERSION)
        return tern_error(TERN_ERR_MALFORMED, "iofwd message: version %u, this side speaks %u",
                          h.version, TERN_IO_VERSION);
    if (!known(h.type))
        return tern_error(TERN_ERR_MALFORMED, "iofwd message: unknown type %u", h.type);
    const char *t = types[h.type].name;
    if (h.reserved != 0)
        return bad(t, "header reserved", "is not 0");
    if (h.len != types[h.type].body || len != sizeof(h) + h.len)
        return tern_error(TERN_ERR_MALFORMED, "iofwd %s: body of %u bytes in %zu received, the "
                          "type has %zu", t, h.len, len - sizeof(h), types[h.type].body);
    memset(out, 0, sizeof(*out));
    out->type = (enum tern_io_type)h.type;
    memcpy(&out->u, (const char *)buf + sizeof(h), h.len);
    return check_body(out);
}
