/*
 * The wire protocol between ternrun and an attached tool (tern-iof), on a
 * Unix stream socket in ternrun's session directory.  Header-only: the tool
 * links nothing but libc.
 *
 * The tool sends one request line, at once after connecting:
 *     "TERN-IOF 1 ranks=all|R[,R...] streams=S[,S...]\n"   (S: stdout stderr diag)
 * ternrun answers with frames, each a struct tern_iof_frame followed by len
 * bytes: first one with rank TERN_IOF_FRAME_ATTACHED and len 0 (the copies
 * start here), then the bytes of stream (rank, tag) exactly as ternrun
 * forwarded them (whole lines unless ternrun runs with --iof-raw).  The end
 * of the job closes the socket.  Host byte order: both ends are on one host.
 */
#ifndef TERN_IOF_TOOL_H
#define TERN_IOF_TOOL_H

#include <stdint.h>

#define TERN_IOF_TOOL_MAGIC "TERN-IOF 1"
#define TERN_IOF_FRAME_ATTACHED UINT32_MAX
#define TERN_IOF_TOOL_REQ_MAX 4096 /* longest request line */
/* bytes buffered for one tool before ternrun drops it */
#define TERN_IOF_TOOL_MAX (4 * 1024 * 1024)

struct tern_iof_frame {
    uint32_t rank;
    uint32_t tag; /* enum tern_iof_tag: 1 stdout, 2 stderr, 3 diag */
    uint32_t len;
};

#endif /* TERN_IOF_TOOL_H */
