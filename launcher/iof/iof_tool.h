/*
 * The wire protocol between ternrun and an attached tool (tern-iof), on a
 * Unix stream socket in ternrun's session directory.  Header-only: the tool
 * links nothing but libc.
 *
 * The tool sends one request line, at once after connecting:
 *     "TERN-IOF 1 ranks=all|R[,R...] streams=S[,S...] [stdin=1]\n"
 * (S: stdout stderr diag).  With stdin=1 (allowed only when ternrun runs
 * with --stdin-tool, and for one tool at a time) every byte the tool sends
 * after that line is the ranks' stdin, and its shutdown(SHUT_WR) their EOF.
 * ternrun answers with frames, each a struct tern_iof_frame followed by len
 * bytes: first one with rank TERN_IOF_FRAME_ATTACHED and len 0 (the copies
 * start here), then the bytes of stream (rank, tag) exactly as ternrun
 * forwarded them (whole lines unless ternrun runs with --iof-raw), and at
 * the end of the job one TERN_IOF_FRAME_END before the socket closes: a
 * socket closed without it means the tool was dropped (too slow) or
 * ternrun was stopped.  A request ternrun cannot serve gets one
 * TERN_IOF_FRAME_REFUSED frame carrying the reason.  Host byte order: both
 * ends are on one host.
 */
#ifndef TERN_IOF_TOOL_H
#define TERN_IOF_TOOL_H

#include <stdint.h>

#define TERN_IOF_TOOL_MAGIC "TERN-IOF 1"
#define TERN_IOF_FRAME_ATTACHED UINT32_MAX     /* len 0: copies start here */
#define TERN_IOF_FRAME_END (UINT32_MAX - 1)     /* len 0: the job ended, all was sent */
#define TERN_IOF_FRAME_REFUSED (UINT32_MAX - 2) /* len bytes: why; the socket closes */
#define TERN_IOF_TOOL_REQ_MAX 4096 /* longest request line */
/* bytes buffered for one tool before ternrun drops it */
#define TERN_IOF_TOOL_MAX (4 * 1024 * 1024)

struct tern_iof_frame {
    uint32_t rank;
    uint32_t tag; /* enum tern_iof_tag: 1 stdout, 2 stderr, 3 diag */
    uint32_t len;
};

#endif /* TERN_IOF_TOOL_H */
