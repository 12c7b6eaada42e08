/* OSU-style MPI_Put bandwidth (bench/osu/osu_rma.c has the method and options) */
#define OSU_RMA_PUT_BW
#include "osu_rma.c"
