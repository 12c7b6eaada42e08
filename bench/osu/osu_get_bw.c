/* OSU-style MPI_Get bandwidth (bench/osu/osu_rma.c has the method and options) */
#define OSU_RMA_GET_BW
#include "osu_rma.c"
