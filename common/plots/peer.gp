# 01_uva peer_bandwidth: one-way cudaMemcpyPeer GB/s with peer access, a row per sending GPU.
load "style.gp"
set title "Peer copies with peer access, GB/s (01\\_uva peer\\_bandwidth)"
set xlabel "to GPU"
set ylabel "from GPU"
stats data matrix nooutput
set xrange [-0.5:STATS_size_x - 0.5]
set yrange [STATS_size_y - 0.5:-0.5]
set xtics 1
set ytics 1
unset grid
unset key
set palette defined (0 "#ffffff", 1 "#9ecae1", 2 "#2171b5")
set cbrange [0:*]
set cblabel "GB/s"
# The diagonal (a GPU to itself) is not measured: 0 in the data, "-" on the map.
plot data matrix with image, \
     "" matrix using 1:2:($3 > 0 ? sprintf("%.0f", $3) : "-") with labels font ",24"
