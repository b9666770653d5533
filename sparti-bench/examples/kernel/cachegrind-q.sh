#!/usr/bin/env bash
# Instructions and mispredicted branches per query of one implementation of
# examples/kernel on the static 100k scene (11,000 queries minus 1,000, over
# 10,000: the build cancels out).
#   sparti-bench/examples/kernel/cachegrind-q.sh proto1 ray
#   sparti-bench/examples/kernel/cachegrind-q.sh parry box
K=${K:-/work/target-kernel/release/examples/kernel}
count() { valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes --cachegrind-out-file=/dev/null "$K" qprofile "$1" "$2" "$3" 2>&1 | awk '/I *refs/ {gsub(",","",$4); i=$4} /Mispredicts:/ {gsub(",","",$3); m=$3} END {print i, m}'; }
read -r i1 m1 < <(count "$1" "$2" 1000)
read -r i2 m2 < <(count "$1" "$2" 11000)
awk -v i1="$i1" -v i2="$i2" -v m1="$m1" -v m2="$m2" -v w="$1" -v q="$2" 'BEGIN { printf "%s %s: %.0f instructions and %.2f mispredicted branches per query\n", w, q, (i2-i1)/10000, (m2-m1)/10000 }'
