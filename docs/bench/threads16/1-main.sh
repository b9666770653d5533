#!/usr/bin/env bash
# Thread scaling of the 1M frame (update_many + par_pairs), sparti's `frames`
# example built with --features rayon on the developer machine.
cd "$(dirname "$0")"
nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|MHz" ; free -g | head -2
TIMEFORMAT='    time: %R s wall, %U s user, %S s sys'
for round in 1 2; do
  for s in ploose3 poct3 pbsp3; do
    for t in 1 2 4 8 16; do
      echo "== round $round $s 1000000 24 threads $t"
      time (RAYON_NUM_THREADS=$t BATCH=1 MIN=0 ./frames $s 1000000 24)
    done
  done
done
for t in 1 2 4 8 16; do
  echo "== ploose2 1000000 24 threads $t"
  time (RAYON_NUM_THREADS=$t BATCH=1 MIN=0 ./frames ploose2 1000000 24)
done
for t in 1 4 16; do
  echo "== queries loose rays threads $t"
  RAYON_NUM_THREADS=$t ./queries loose rays
  echo "== queries loose boxes threads $t"
  RAYON_NUM_THREADS=$t ./queries loose boxes
done
