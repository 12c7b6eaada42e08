/* OSU-style bi-directional bandwidth: osu_bw.c with both ranks sending. */
#define OSU_BIBW 1
#include "osu_bw.c"
