#!/usr/bin/env python3
"""test_sweep_equivalence.py - bench/sweep_equivalence.py on the model probe (noise 0: every
ratio exactly 1, rankings agree, unavailable choices listed; with noise: ratios near 1) and on
a fake probe whose sweep ranks the choices opposite to fresh processes (inversions beyond
noise, DISAGREE); a failing run exits 1, too few choices or one repeat exit 2.
usage: test_sweep_equivalence.py MODEL_PROBE PLUGIN"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchtool import FAKE, check, finish, run_tool  # noqa: E402

PROBE, PLUGIN = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])


def run(args, d, env=None):
    return run_tool("sweep_equivalence", PLUGIN, args, d, env)


with tempfile.TemporaryDirectory() as d:
    sw = os.path.join(d, "sw.json")
    choices = [{"bytes": 43008, "algo": a, "proto": p, "ctas": c}
               for a in ["Ring", "Tree"] for p in ["LL", "LL128", "Simple"] for c in [1, 2, 4, 8]]
    choices.append({"bytes": 43008, "algo": "NVLS", "proto": "Simple"})
    with open(sw, "w") as f:
        json.dump({"schema": "nccltune-sweep/1", "choices": choices}, f)
    model = ["--probe", PROBE, "--model", "h200-nvlink-2gpu", "--iters", "20"]
    # 1. Model probe, noise 0: the sweep and the fresh processes must give the same numbers.
    p, doc = run(model + ["--repeats", "2", "--probe-arg=--noise", "--probe-arg=0",
                          "--sweep-file", sw], d)
    check(p.returncode == 0, f"model noise 0: exit {p.returncode}: {p.stderr[-500:]}")
    if doc:
        rows = doc["choices"]
        check(doc["schema"] == "nccltune-sweep-equivalence/1", "schema")
        check(doc["source"] == "model", f"source {doc['source']}")
        check(len(rows) == 25 and doc["available"] == 24, f"{len(rows)} rows, {doc['available']} ok")
        check(doc["runs"] == 2 * 26, f"runs {doc['runs']} (2 repeats x (1 sweep + 25 fresh))")
        nv = rows[24]
        check(nv["available"] is False and nv["stage"] == "env" and "not available" in nv["error"],
              f"NVLS row {nv}")
        ok = [r for r in rows if r["available"]]
        check(all(abs(r["ratio"] - 1) < 1e-9 and abs(r["ci95"][0] - 1) < 1e-9 for r in ok),
              "noise 0: every ratio and interval exactly 1")
        check(all(r["same_nccl"] is True for r in ok), "what NCCL ran agrees")
        check(all(len(r["sweep_us"]) == 2 and r["sweep_us"][0] > 1 for r in ok), "sweep_us")
        rk = doc["rankings"][0]
        check(rk["pairs"] == 276 and rk["inversions"] == 0, f"ranking {rk}")
        check(abs(rk["spearman"] - 1) < 1e-9, f"spearman {rk['spearman']}")
        # Ring/LL/8 is the model's fastest of these at 43008 B on 2 H200s.
        check(rk["best_sweep"] == 3 and rk["best_fresh"] == 3, f"best {rk}")
        check(doc["agree"] is True, "agree")
        check(doc["ratio_outside_1"] == [], "no ratio outside 1")
        check("Ring/LL/8" in p.stdout and "AGREE" in p.stdout, "table printed")
    # 2. Model probe with noise, the default 24 choices: ratios near 1, interval brackets.
    p, doc = run(model + ["--repeats", "3"], d)
    check(p.returncode == 0, f"model noisy: exit {p.returncode}: {p.stderr[-500:]}")
    if doc:
        ok = [r for r in doc["choices"] if r["available"]]
        check(len(doc["choices"]) == 24 and len(ok) == 24, "24 default choices, all ok")
        check(all(0.9 < r["ratio"] < 1.1 for r in ok), "noisy ratios within 10%")
        check(all(r["ci95"][0] < r["ratio"] < r["ci95"][1] for r in ok), "interval brackets ratio")
        check(doc["rankings"][0]["spearman"] > 0.9, f"spearman {doc['rankings'][0]['spearman']}")
        check(len(set(r["sweep_us"][0] for r in ok)) > 12, "noisy values differ")
    # 3. A fake probe whose sweep reverses the fresh order: inversions beyond noise.
    fake = ["--probe", FAKE, "--iters", "10", "--repeats", "3"]
    log = os.path.join(d, "order.log")
    p, doc = run(fake, d, {"FAKE_LOG": log})
    with open(log) as f:
        order = f.read().split()
    blocks = [order[k * 25:(k + 1) * 25] for k in range(3)]
    check(len(order) == 75 and all(b.count("sweep") == 1 for b in blocks), "one sweep per repeat")
    check(len(set(b.index("sweep") for b in blocks)) > 1 and len(set(map(tuple, blocks))) == 3,
          f"runs interleaved in a new order per repeat: {[b.index('sweep') for b in blocks]}")
    check(p.returncode == 0, f"fake: exit {p.returncode}: {p.stderr[-500:]}")
    if doc:
        rk = doc["rankings"][0]
        # 24 choices, 6 per CTA count: pairs with different CTAs = 276 - 4 x 15 = 216.
        check(rk["inversions"] == 216, f"inversions {rk['inversions']}")
        check(len(rk["inversions_beyond_noise"]) == 216, f"beyond {len(rk['inversions_beyond_noise'])}")
        check(rk["agree"] is False and doc["agree"] is False, "fake disagrees")
        check(rk["spearman"] < -0.9, f"spearman {rk['spearman']}")
        check("DISAGREE" in p.stdout, "DISAGREE printed")
        r0 = doc["choices"][0]  # ctas 1: sweep 11 + jitter, fresh 29 + jitter
        check(abs(r0["sweep_median"] - 11) < 0.1 and abs(r0["fresh_median"] - 29) < 0.1,
              f"fake medians {r0['sweep_median']} {r0['fresh_median']}")
        check(abs(r0["ratio"] - 11 / 29) < 0.01, f"fake ratio {r0['ratio']}")
        check(len(doc["ratio_outside_1"]) == 24, "every fake ratio excludes 1")
        check(r0["same_nccl"] is True, "decision compare ignores case")
    # 4. Failures.
    p, doc = run(fake, d, {"FAKE_FAIL_FRESH": "1"})
    check(p.returncode == 0 and doc is not None, f"failing fresh runs: exit {p.returncode}")
    if doc:
        check(doc["sweep_ok_fresh_failed"] == list(range(24)), "fresh failures listed")
        check(doc["choices"][0]["stage"] == "fresh: init" and doc["agree"] is False,
              f"fresh failure row {doc['choices'][0]}")
        check("failed in a fresh process" in p.stdout, "fresh failures printed")
    p, doc = run(fake, d, {"FAKE_FAIL_SWEEP": "1"})
    check(p.returncode == 1 and "fake sweep failure" in p.stderr and doc is None,
          f"failing sweep run: exit {p.returncode}")
    few = os.path.join(d, "few.json")
    with open(few, "w") as f:
        json.dump({"schema": "nccltune-sweep/1", "choices": choices[:5]}, f)
    p, _ = run(fake + ["--sweep-file", few], d)
    check(p.returncode == 2 and "fewer than --min-choices" in p.stderr, f"5 choices: {p.returncode}")
    p, _ = run(fake[:4] + ["--repeats", "1"], d)
    check(p.returncode == 2, f"one repeat: exit {p.returncode}")

finish("sweep_equivalence")
