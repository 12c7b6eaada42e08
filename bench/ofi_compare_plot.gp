# ofi_compare_plot.gp — Open MPI over tern's libfabric provider against its
# peers (bench/ofi_compare.sh): one panel per test, figure vs message size,
# one line per tool.  Called with:
#   prefix   data files are prefix-<test>.dat, rows "size V1 V2 ..." (medians
#            of the rounds; NaN where a tool has no figure), one column per
#            word of names, the subject (Open MPI over tern) first
#   names    the tools' titles, one word each (no spaces)
#   tests    the tests that ran, space-separated with spaces around (" lat bw ")
#   outfile  PNG to write
#   title    run label (host, date, cores, rounds)
# Each tool keeps its line type in every panel; the subject's line is thicker.
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
n = words(names)

if (has("lat")) {
    set key top left
    set title "One-way latency (ping-pong / 2)"
    set ylabel "latency (us)"
    plot for [i = 1:n] panel("lat") using 1:i + 1 with linespoints lt i lw (i == 1 ? 2 : 1) title word(names, i)
}

if (has("bw")) {
    set key bottom right
    set title "Unidirectional bandwidth (window 64; MB = 1e6 B)"
    set ylabel "bandwidth (MB/s)"
    plot for [i = 1:n] panel("bw") using 1:i + 1 with linespoints lt i lw (i == 1 ? 2 : 1) title word(names, i)
}

if (has("bibw")) {
    set key bottom right
    set title "Bi-directional bandwidth (both directions)"
    set ylabel "bandwidth (MB/s)"
    plot for [i = 1:n] panel("bibw") using 1:i + 1 with linespoints lt i lw (i == 1 ? 2 : 1) title word(names, i)
}

if (has("mr")) {
    set key bottom left
    set title "Message rate (window 64)"
    set ylabel "messages/s"
    plot for [i = 1:n] panel("mr") using 1:i + 1 with linespoints lt i lw (i == 1 ? 2 : 1) title word(names, i)
}

if (has("allreduce")) {
    set key top left
    set title "MPI\\_Allreduce latency (MPI\\_SUM, 2 ranks, mean of the ranks)"
    set ylabel "latency (us)"
    plot for [i = 1:n] panel("allreduce") using 1:i + 1 with linespoints lt i lw (i == 1 ? 2 : 1) title word(names, i)
}

unset multiplot
