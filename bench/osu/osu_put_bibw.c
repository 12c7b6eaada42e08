/* OSU-style MPI_Put bi-directional bandwidth (bench/osu/osu_rma.c has the method and options) */
#define OSU_RMA_PUT_BIBW
#include "osu_rma.c"
