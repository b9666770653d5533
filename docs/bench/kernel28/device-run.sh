#!/bin/bash
# Thread scaling of the whole frame (update_many + end_frame + par_pairs) at 1M,
# then the single-thread pairs3d workload of sparti-bench, on the idle 16-core machine.
B=.devbin
L=$OUT/threads.txt
{
echo "== machine"; nproc; lscpu | grep -E "Model name|Socket|Core|Thread|NUMA|MHz|L2|L3" ; uptime; free -g | head -2
} > $L 2>&1
run() { # structure threads round
  TIMEFORMAT="wall %R s, user %U s, sys %S s"
  s=$( { time env BATCH=1 MIN=0 RAYON_NUM_THREADS=$2 $B/frames $1 1000000 10; } 2>&1 )
  echo "$1 threads=$2 round=$3: $(echo "$s" | tr '\n' ' ')" >> $L
}
for r in 1 2 3; do
  for t in 1 2 4 8 16; do run ploose3 $t $r; done
done
for r in 1 2; do
  for t in 1 2 4 8 16; do run poct3 $t $r; run pbsp3 $t $r; done
done
echo "== threads done at $(date)" >> $L
cat $L
timeout ${BENCH_S:-300} $B/sparti-bench --workload pairs3d --sizes 10000,100000,1000000 --out $OUT/bench > $OUT/bench.txt 2>&1
echo "bench rc=$?" >> $OUT/bench.txt
tail -40 $OUT/bench.txt
