/* OSU-style MPI_Put latency (bench/osu/osu_rma.c has the method and options) */
#define OSU_RMA_PUT_LATENCY
#include "osu_rma.c"
