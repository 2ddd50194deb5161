# 06_vmm growable: the time to double a buffer, by cudaMalloc + copy and by mapping one more VMM
# chunk, and the device memory each holds at its peak.
load "style.gp"
set multiplot layout 1,2 title "Growing a device buffer by doubling (06\\_vmm growable)"
set logscale x 2
set xtics rotate by -45 font ",16"
set xlabel "grown to"
set title "time of the step"
set logscale y 10
set ylabel "ms"
plot data using 1:3:xtic(2) with linespoints ls 1 title "cudaMalloc + copy", \
     "" using 1:5 with linespoints ls 2 title "VMM: map a chunk"
set title "device memory at the step's peak"
unset logscale y
set ylabel "peak / new size"
set yrange [0:2]
plot data using 1:($4/$1):xtic(2) with linespoints ls 1 title "cudaMalloc + copy", \
     "" using 1:($6/$1) with linespoints ls 2 title "VMM"
unset multiplot
