#!/bin/bash
# Device call 3: the whole frame (update_many + par_pairs, shuffled, 1M loose octree) before this session (base) and after (k13d).
cd "$(dirname "$0")"
for r in 1 2 3; do for th in 8 1; do for b in base k13d; do
  [ $th = 1 ] && [ $r = 3 ] && continue
  echo "$th $b $(BATCH=1 MIN=0 SHUFFLE=1 RAYON_NUM_THREADS=$th ./pframes-$b ploose3 1000000 12 | tail -1)"
done; done; done
for b in base k13d; do echo "16 $b $(BATCH=1 MIN=0 SHUFFLE=1 RAYON_NUM_THREADS=16 ./pframes-$b ploose3 1000000 12 | tail -1)"; done
