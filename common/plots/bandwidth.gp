# 02_pinned bandwidth: cudaMemcpy GB/s against size, for each kind of host memory.
load "style.gp"
set multiplot layout 1,2 title "cudaMemcpy bandwidth by host memory kind (02\\_pinned bandwidth)"
set logscale x 2
set xlabel "copy size"
set ylabel "GB/s (1e9 bytes/s)"
set yrange [0:*]
set key top left
set title "host -> device"
plot data index 0 using 1:3:xtic(2) with linespoints ls 1 title "pageable", \
     "" index 0 using 1:4 with linespoints ls 2 title "pinned", \
     "" index 0 using 1:5 with linespoints ls 3 title "write-combined", \
     "" index 0 using 1:6 with linespoints ls 4 title "registered"
set title "device -> host"
plot data index 1 using 1:3:xtic(2) with linespoints ls 1 title "pageable", \
     "" index 1 using 1:4 with linespoints ls 2 title "pinned", \
     "" index 1 using 1:5 with linespoints ls 3 title "write-combined", \
     "" index 1 using 1:6 with linespoints ls 4 title "registered"
unset multiplot
