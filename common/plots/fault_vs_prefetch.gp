# 05_prefetch_advise fault_vs_prefetch: managed memory moved by page faults, by a prefetch, and
# (for scale) a pinned cudaMemcpy, at several sizes; the PCIe link's limit as a dashed line where
# the bandwidth figure's data (beside this one's) knows it.
load "style.gp"
set title "Managed memory: faults vs prefetch vs cudaMemcpy (05\\_prefetch\\_advise)"
set logscale x 2
set xlabel "buffer size"
set ylabel "GB/s (1e9 bytes/s)"
set yrange [0:*]
set key top left
set offsets graph 0.04, graph 0.04, graph 0.75, 0  # five keys: more room above
bandwidth = data[1:strstrt(data, "fault_vs_prefetch.dat") - 1] . "bandwidth.dat"
link = NaN
if (strstrt(data, "fault_vs_prefetch.dat") > 0) {
    undefine STATS_*
    stats bandwidth index 0 using ($7 >= 50 ? $4 * 100 / $7 : NaN) nooutput
    if (exists("STATS_records") && STATS_records > 0) { link = STATS_mean }
}
if (link == link) {
    set arrow from graph 0, first link to graph 1, first link nohead dt 2 lw 2 lc rgb "#555555"
    set label sprintf("PCIe link: %.0f GB/s", link) at graph 0.97, first link offset 0, 0.8 right font ",16"
}
plot data using 1:5:xtic(2) with linespoints ls 2 title "cudaMemcpy pinned -> GPU", \
     "" using 1:4 with linespoints ls 3 title "prefetch to the GPU", \
     "" using 1:3 with linespoints ls 1 title "kernel faults pages in", \
     "" using 1:7 with linespoints ls 4 title "prefetch to the CPU", \
     "" using 1:6 with linespoints ls 5 title "CPU faults pages back"
