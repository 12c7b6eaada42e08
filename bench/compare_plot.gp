# compare_plot.gp — latency and bandwidth vs message size, one line per tool.
# Called by compare.sh --sweep with:
#   latfile, bwfile  "size tern ucx mpich memcpy" rows (medians of the sweep rounds;
#                    memcpy: bw only, one core copying that size, NaN where not run)
#   outfile          PNG to write
#   rawlat           raw cache-line ping-pong one-way latency (us), "nan" if none
#   memcpy           single-thread memcpy 4 MiB (MB/s), "nan" if none
#   title            run label (host, date, cores)
set terminal pngcairo size 1400,560 font ",10"
set output outfile
set multiplot layout 1,2 title title

set logscale x 2
set logscale y
set xtics 16
set format x "%.0b%B"
set grid
set key top left

set title "One-way latency (ping-pong / 2)"
set xlabel "message size (bytes)"
set ylabel "latency (us)"
plot latfile using 1:2 with linespoints title "tern", \
     latfile using 1:3 with linespoints title "ucx\\_perftest tag\\_lat", \
     latfile using 1:4 with linespoints title "MPICH (mpi\\_bench)", \
     (rawlat eq "nan" ? NaN : real(rawlat)) with lines dashtype 2 title "raw cache line (64 B)"

set title "Unidirectional bandwidth (MB = 1e6 B)"
set ylabel "bandwidth (MB/s)"
set key bottom right
plot bwfile using 1:2 with linespoints title "tern (window 64)", \
     bwfile using 1:3 with linespoints title "ucx\\_perftest tag\\_bw", \
     bwfile using 1:4 with linespoints title "MPICH (mpi\\_bench, window 64)", \
     bwfile using 1:5 with lines dashtype 2 title "memcpy, one core (same size)", \
     (memcpy eq "nan" ? NaN : real(memcpy)) with lines dashtype 3 title "memcpy 4 MiB, one core"

unset multiplot
