# Shared look of the course's figures: large type and thick lines, to be read on a projector.
# Each figure's script loads this, then plots `data` into `out` (both given with gnuplot -e).
set terminal pngcairo size 1280,800 font "sans,20" linewidth 3
set output out
set key top left box opaque
set offsets graph 0.04, graph 0.04, graph 0.25, 0  # room for the key above the lines
set grid xtics ytics lc rgb "#d0d0d0" lw 1
set style line 1 lc rgb "#d62728" pt 7 ps 1.5
set style line 2 lc rgb "#1f77b4" pt 5 ps 1.5
set style line 3 lc rgb "#2ca02c" pt 9 ps 1.5
set style line 4 lc rgb "#9467bd" pt 11 ps 1.5
set style line 5 lc rgb "#ff7f0e" pt 13 ps 1.5
