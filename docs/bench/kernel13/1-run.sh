#!/bin/bash
# Device check, session 13 of issue 10: single-thread A/B of the queries and the frame, and thread scaling.
cd "$(dirname "$0")"
O=${OUT:-/tmp/out}
mkdir -p $O
nproc > $O/info.txt; lscpu | grep "Model name" >> $O/info.txt
t0=$(date +%s)
# 1. ray and box queries vs parry: 4 builds, 3 rounds, alternating.
for r in 1 2 3; do for b in base k13 k13b k13c; do
  ./bench-$b --workload ray,box --out $O/rb-$b-$r > /dev/null 2>&1
  echo "$r $b $(grep -E '^\| 100,000' $O/rb-$b-$r/results.md | awk -F'|' '{printf "%s %s %s %s %s| ", $3,$4,$5,$6,$(NF-1)}')" >> $O/rb.txt
done; done
echo "rb $(( $(date +%s) - t0 )) s" >> $O/info.txt
# 2. one-thread frame at 1M (per-object updates, slot order), base vs k13c.
for r in 1 2 3; do for s in loose3 oct3 loose2; do for b in base k13c; do
  echo "$r $s $b $(./pframes-$b $s 1000000 10 | tail -1)" >> $O/frames.txt
done; done; done
echo "frames $(( $(date +%s) - t0 )) s" >> $O/info.txt
# 3. the whole frame on threads (update_many + par_pairs), 1M, shuffled.
for th in 1 8 16; do for b in base k13c; do
  echo "$th $b $(BATCH=1 MIN=0 SHUFFLE=1 RAYON_NUM_THREADS=$th ./pframes-$b ploose3 1000000 12 | tail -1)" >> $O/threads.txt
done; done
echo "threads $(( $(date +%s) - t0 )) s" >> $O/info.txt
