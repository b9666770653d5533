#!/usr/bin/env bash
# Where the parallel pair search's time goes at 1M (kernel-12 at 48dd362,
# its join still on one thread, + timing
# prints): the grid's build, the tasks, the join of their results.
cd "$(dirname "$0")"
for t in 1 4 8 16; do
  echo "== ploose3 threads $t"
  PH=1 RAYON_NUM_THREADS=$t BATCH=1 MIN=0 ./frames-pinst ploose3 1000000 8 2>&1 | grep -E "PAIRS build [0-9.]+ms|COLLECT|update" | tail -7
done
