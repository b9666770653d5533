#!/usr/bin/env bash
# Instructions and mispredicted branches per object per frame of one
# implementation of examples/kernel (6 frames minus 1 frame, over 5N).
#   sparti-bench/examples/kernel/cachegrind.sh proto1 100000
#   KERNEL_NO_AVX=1 sparti-bench/examples/kernel/cachegrind.sh proto1 100000
# usage: cg.sh IMPL N  -> instructions and mispredicts per object per frame (6 frames minus 1 frame, /5N)
K=${K:-/work/target-kernel/release/examples/kernel}
count() { valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes --cachegrind-out-file=/dev/null "$K" profile "$1" "$2" "$3" 2>&1 | awk '/I *refs/ {gsub(",","",$4); i=$4} /Mispredicts:/ {gsub(",","",$3); m=$3} END {print i, m}'; }
read -r i1 m1 < <(count $1 $2 1)
read -r i6 m6 < <(count $1 $2 6)
awk -v i1="$i1" -v i6="$i6" -v m1="$m1" -v m6="$m6" -v n="$2" -v w="$1" 'BEGIN { printf "%s N=%d: %.0f instructions and %.2f mispredicted branches per object per frame (scene motion included)\n", w, n, (i6-i1)/(5*n), (m6-m1)/(5*n) }'
