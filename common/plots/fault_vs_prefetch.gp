# 05_prefetch_advise fault_vs_prefetch: managed memory moved by page faults, by a prefetch, and
# (for scale) a pinned cudaMemcpy, at several sizes.
load "style.gp"
set title "Managed memory: faults vs prefetch vs cudaMemcpy (05\\_prefetch\\_advise)"
set logscale x 2
set xlabel "buffer size"
set ylabel "GB/s (1e9 bytes/s)"
set yrange [0:*]
set key top left
set offsets graph 0.04, graph 0.04, graph 0.75, 0  # five keys: more room above
plot data using 1:5:xtic(2) with linespoints ls 2 title "cudaMemcpy pinned -> GPU", \
     "" using 1:4 with linespoints ls 3 title "prefetch to the GPU", \
     "" using 1:3 with linespoints ls 1 title "kernel faults pages in", \
     "" using 1:7 with linespoints ls 4 title "prefetch to the CPU", \
     "" using 1:6 with linespoints ls 5 title "CPU faults pages back"
