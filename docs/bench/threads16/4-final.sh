#!/usr/bin/env bash
# Final: main a9dae6a (old) against kernel-12 1ae2790 (new), frames
# examples built with --features rayon on the developer machine; 1M moving
# spheres, BATCH=1 (update_many) + par_pairs, 24 frames, alternating.
# noroute: kernel-12 with the grid build's routing off (ROUTE_FROM=99).
# pinst: kernel-12 with timing prints of the pair search's parts.
cd "$(dirname "$0")"
nproc; lscpu | grep -E "Model name"
f() { echo "== $1 $2 $3: $(RAYON_NUM_THREADS=$2 BATCH=1 MIN=0 ./frames-$3 $1 1000000 24 | tail -1)"; }
for t in 1 2 4 8 16; do for b in old new; do f ploose3 $t $b; done; done
for t in 4 8 16; do for b in noroute new; do f ploose3 $t $b; done; done
for s in poct3 pbsp3; do for t in 1 8 16; do for b in old new; do f $s $t $b; done; done; done
for t in 1 8 16; do
  echo "== pinst ploose3 threads $t"
  PH=1 RAYON_NUM_THREADS=$t BATCH=1 MIN=0 ./frames-pinst ploose3 1000000 8 2>&1 | grep -E "GRID|PAIRS build [0-9.]+ms|COLLECT|update" | tail -n 16
done
