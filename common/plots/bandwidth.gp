# 02_pinned bandwidth: cudaMemcpy GB/s against size, for each kind of host memory, with the
# PCIe link's limit per direction as a dashed line where the section could read it (column 7 is
# the pinned rate as a whole percentage of the link, so the link is column 4 * 100 / column 7,
# averaged over the sizes that reach half of it, where the rounding matters least).
load "style.gp"
set multiplot layout 1,2 title "cudaMemcpy bandwidth by host memory kind (02\\_pinned bandwidth)"
set logscale x 2
set xlabel "copy size"
set ylabel "GB/s (1e9 bytes/s)"
set yrange [0:*]
set key top left
set xtics rotate by -90 font ",14"
do for [block = 0:1] {
    link = NaN
    undefine STATS_*
    stats data index block using ($7 >= 50 ? $4 * 100 / $7 : NaN) nooutput
    if (exists("STATS_records") && STATS_records > 0) { link = STATS_mean }
    set title (block == 0 ? "host -> device" : "device -> host")
    unset arrow
    unset label
    if (link == link) {
        set yrange [0:link * 1.65]
        set arrow from graph 0, first link to graph 1, first link nohead dt 2 lw 2 lc rgb "#555555"
        set label sprintf("PCIe link: %.0f GB/s", link) at graph 0.97, first link offset 0, 0.8 right font ",16"
    } else {
        set yrange [0:*]
    }
    plot data index block using 1:3:xtic(2) with linespoints ls 1 title "pageable", \
         "" index block using 1:4 with linespoints ls 2 title "pinned", \
         "" index block using 1:5 with linespoints ls 3 title "write-combined", \
         "" index block using 1:6 with linespoints ls 4 title "registered"
}
unset multiplot
