#!/usr/bin/env python3
"""test_sweep_overhead.py - bench-sweep-overhead runs a tiny grid and prints one row per
(strategy, outer, inner) with pruner obs = outer x (1 + inner), a timing in every measured
column and "-" for the all-fed column beyond --flat-max; a bad option exits 2. No timing is
checked. usage: test_sweep_overhead.py BENCH_SWEEP_OVERHEAD"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchtool import check, finish  # noqa: E402

prog = sys.argv[1]

p = subprocess.run([prog, "--strategy", "random", "--strategy", "bo", "--outer", "5",
                    "--outer", "8", "--inner", "2", "--reps", "2", "--flat-max", "20"],
                   capture_output=True, text=True)
check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
rows = [r.split("|")[1:-1] for r in p.stdout.splitlines() if re.match(r"\| (bo|random) \|", r)]
check(len(rows) == 4, f"{len(rows)} rows:\n{p.stdout}")
for r in rows:
    f = [x.strip() for x in r]
    outer, inner, pobs = int(f[1]), int(f[2]), int(f[3])
    check(pobs == outer * (1 + inner), f"pruner obs {f}")
    check(float(f[4]) >= 0 and float(f[5]) > 0, f"timings {f}")
    check((f[6] == "-") == (pobs > 20), f"flat column {f}")
check("MEASURED" in p.stdout and "MODEL" in p.stdout, "labels")
p = subprocess.run([prog, "--outer", "x"], capture_output=True, text=True)
check(p.returncode == 2 and "--outer" in p.stderr, f"bad option: {p.returncode}")
finish("sweep_overhead")
