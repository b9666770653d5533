#!/usr/bin/env bash
# Old (main a9dae6a) against new (kernel-12 at 95468d4, the batch update's
# passes on the threads) frames binaries, built with
# --features rayon on the developer machine: 1M moving spheres, 24 frames,
# BATCH=1 (update_many) + par_pairs, alternating per configuration.
cd "$(dirname "$0")"
nproc; lscpu | grep -E "Model name"
for s in ploose3 poct3 pbsp3; do
  for t in 1 2 4 8 16; do
    for b in old new; do
      echo "== $s $t $b: $(RAYON_NUM_THREADS=$t BATCH=1 MIN=0 ./frames-$b $s 1000000 24 | tail -1)"
    done
  done
done
