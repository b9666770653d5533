#!/usr/bin/env python3
"""A 2D crowd scene with a query file, for `sparti tune` and `sparti bench`:
3,000 discs (radius 0.5 to 2) walking in a 300 x 300 yard for 20 frames,
and 400 queries each frame (300 nearest-hit rays of range 200, 100 circles
of radius 15). Writes crowd2d.csv and crowd2d.queries in the current
folder; seeded, so the same files every time.

    python3 scripts/crowd-scene.py && sparti tune crowd2d.csv --quick
"""
import math
import random

random.seed(7)
N, F, W = 3000, 20, 300.0
objs = []
for i in range(N):
    objs.append([random.uniform(0, W), random.uniform(0, W), random.uniform(-1, 1),
                 random.uniform(-1, 1), random.uniform(0.5, 2.0)])
with open("crowd2d.csv", "w") as f:
    f.write("frame,id,kind,x,y,r\n")
    for fr in range(F):
        for i, o in enumerate(objs):
            f.write(f"{fr},{i},circle,{o[0]:.3f},{o[1]:.3f},{o[4]:.3f}\n")
            o[0] = min(max(o[0] + o[2], 0), W)
            o[1] = min(max(o[1] + o[3], 0), W)
with open("crowd2d.queries", "w") as f:
    for q in range(300):
        x, y = random.uniform(0, W), random.uniform(0, W)
        a = random.uniform(0, 2 * math.pi)
        f.write(f"nearest {x:.2f} {y:.2f} {math.cos(a):.4f} {math.sin(a):.4f} 200\n")
    for q in range(100):
        x, y = random.uniform(0, W), random.uniform(0, W)
        f.write(f"sphere {x:.2f} {y:.2f} 15\n")
