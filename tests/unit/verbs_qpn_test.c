/*
 * Unit test of the verbs netmod's QPN -> VC map (netmods/verbs/verbs_qpn.c):
 * a map made for one peer (a singleton, a port server) takes many more QPs
 * (port clients, other jobs' ranks, retired QPs not reaped yet) and finds
 * each, through deletions too.  The map was fixed at twice the job's size:
 * the 16th QP of a singleton looped for ever looking for a free slot.
 */
#include <stdio.h>
#include <stdlib.h>

#include "netmods/verbs/verbs_internal.h"

#include "tests/unit/expect.h"

enum { N = 1000 };

int main(void)
{
    static tern_verbs_vc_t vcs[N];
    struct qpn_map *m = tern_verbs_qpn_map_new(1);
    EXPECT(m != NULL, "map");
    for (uint32_t i = 0; i < N; i++)
        EXPECT(tern_verbs_qpn_put(&m, 0x100 + i * 7, &vcs[i]) == TERN_OK, "put %u: %s", i,
               tern_last_error());
    for (uint32_t i = 0; i < N; i++)
        EXPECT(tern_verbs_qpn_get(m, 0x100 + i * 7) == &vcs[i], "get %u", i);
    for (uint32_t i = 0; i < N; i += 2)
        tern_verbs_qpn_del(m, 0x100 + i * 7);
    for (uint32_t i = 0; i < N; i++)
        EXPECT(tern_verbs_qpn_get(m, 0x100 + i * 7) == (i % 2 ? &vcs[i] : NULL),
               "get %u after deleting the even ones", i);
    for (uint32_t i = 0; i < N; i += 2) /* the slots freed are taken again */
        EXPECT(tern_verbs_qpn_put(&m, 0x100 + i * 7, &vcs[i]) == TERN_OK, "put %u again", i);
    for (uint32_t i = 0; i < N; i++)
        EXPECT(tern_verbs_qpn_get(m, 0x100 + i * 7) == &vcs[i], "get %u at the end", i);
    EXPECT(tern_verbs_qpn_get(m, 0) == NULL && tern_verbs_qpn_get(m, 0x99) == NULL,
           "an unknown QPN found");
    tern_verbs_qpn_map_free(m);
    if (failures == 0)
        printf("verbs_qpn_test: ok\n");
    return failures ? 1 : 0;
}
