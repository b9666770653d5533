#!/usr/bin/env bash
# Instructions and mispredicted branches per object per frame of the
# dynamic-pairs workload (sparti/examples/frames.rs), counted by
# valgrind's cachegrind: repeatable on a shared machine, where times drift.
# The figures are the difference between a run of 6 frames and one of 1
# frame, over 5 frames and N objects, so the scene's setup cancels out.
#
#   scripts/frame-profile.sh loose3 100000     # structure, N
#   MIN=4 scripts/frame-profile.sh loose3 100000   # minimum node size 4
#
# Structures: oct3, loose3, bsp3, quad2, loose2, bsp2.
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-loose3}"
n="${2:-100000}"
cargo build --release --quiet -p sparti --example frames
bin=target/release/examples/frames
count() {
    valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes \
        --cachegrind-out-file=/dev/null "$bin" "$which" "$n" "$1" 2>&1 |
        awk '/I *refs/ {gsub(",","",$4); i=$4} /Mispredicts:/ {gsub(",","",$3); m=$3} END {print i, m}'
}
read -r i1 m1 < <(count 1)
read -r i6 m6 < <(count 6)
awk -v i1="$i1" -v i6="$i6" -v m1="$m1" -v m6="$m6" -v n="$n" -v w="$which" 'BEGIN {
    printf "%s N=%d: %.0f instructions and %.1f mispredicted branches per object per frame\n",
        w, n, (i6 - i1) / (5 * n), (m6 - m1) / (5 * n) }'
