# mpi_compare_plot.gp — tern's MPI layer against tern's core, MPICH and
# Open MPI: one panel per test, figure vs message size, one line per tool.
# Called by mpi_compare.sh with:
#   prefix   data files are prefix-<test>.dat, rows "size tern ternmpi mpich ompi"
#            (medians of the rounds; NaN where a tool has no figure)
# Each tool keeps its line type in every panel.
#   outfile  PNG to write
#   title    run label (host, date, cores, rounds)
#   tests    the tests that ran, space-separated with spaces around (" lat bw ")
set terminal pngcairo size 1800,900 font ",10"
set output outfile
set multiplot layout 2,3 title title

set logscale x 2
set logscale y
set xtics 16
set format x "%.0b%B"
set grid
set xlabel "message size (bytes)"

panel(test) = sprintf("%s-%s.dat", prefix, test)
has(test) = strstrt(tests, " ".test." ") > 0

if (has("lat")) {
    set key top left
    set title "One-way latency (ping-pong / 2)"
    set ylabel "latency (us)"
    plot panel("lat") using 1:2 with linespoints lt 1 title "tern core (tern\\_bench)", \
         panel("lat") using 1:3 with linespoints lt 2 lw 2 title "tern MPI layer", \
         panel("lat") using 1:4 with linespoints lt 3 title "MPICH", \
         panel("lat") using 1:5 with linespoints lt 4 title "Open MPI"
}

if (has("bw")) {
    set key bottom right
    set title "Unidirectional bandwidth (window 64; MB = 1e6 B)"
    set ylabel "bandwidth (MB/s)"
    plot panel("bw") using 1:2 with linespoints lt 1 title "tern core (tern\\_bench)", \
         panel("bw") using 1:3 with linespoints lt 2 lw 2 title "tern MPI layer", \
         panel("bw") using 1:4 with linespoints lt 3 title "MPICH", \
         panel("bw") using 1:5 with linespoints lt 4 title "Open MPI"
}

if (has("bibw")) {
    set key bottom right
    set title "Bi-directional bandwidth (both directions)"
    set ylabel "bandwidth (MB/s)"
    plot panel("bibw") using 1:2 with linespoints lt 1 title "tern core (tern\\_bench)", \
         panel("bibw") using 1:3 with linespoints lt 2 lw 2 title "tern MPI layer", \
         panel("bibw") using 1:4 with linespoints lt 3 title "MPICH", \
         panel("bibw") using 1:5 with linespoints lt 4 title "Open MPI"
}

if (has("mr")) {
    set key bottom left
    set title "Message rate (window 64)"
    set ylabel "messages/s"
    plot panel("mr") using 1:2 with linespoints lt 1 title "tern core (tern\\_bench)", \
         panel("mr") using 1:3 with linespoints lt 2 lw 2 title "tern MPI layer", \
         panel("mr") using 1:4 with linespoints lt 3 title "MPICH", \
         panel("mr") using 1:5 with linespoints lt 4 title "Open MPI"
}

if (has("allreduce")) {
    set key top left
    set title "MPI\\_Allreduce latency (MPI\\_SUM, 2 ranks, mean of the ranks)"
    set ylabel "latency (us)"
    plot panel("allreduce") using 1:3 with linespoints lt 2 lw 2 title "tern MPI layer", \
         panel("allreduce") using 1:4 with linespoints lt 3 title "MPICH", \
         panel("allreduce") using 1:5 with linespoints lt 4 title "Open MPI"
}

unset multiplot
