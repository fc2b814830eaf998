#!/usr/bin/env python3
"""fake_probe.py - a probe for tests/bench: latency = FAKE_SWEEP_BASE + ctas in a sweep and
FAKE_FRESH_BASE - ctas in a fresh process (the table's rule), plus 0.001 x NCCLTUNE_RUN, so
a sweep that ranks choices opposite to fresh processes can be tested. FAKE_FAIL_FRESH=1
makes a fresh process fail at stage init, FAKE_FAIL_SWEEP=1 a sweep at capture; FAKE_LOG=FILE appends "sweep" or the
table path per run (the order of runs); FAKE_INIT_S and FAKE_CHOICE_S: seconds each
run sleeps, and a sweep sleeps per choice (wall time); phases_s: nccl_init 0.2, timing
0.01 per case."""
import json
import os
import sys
import time

args = sys.argv[1:]


def arg(name, default=None):
    return args[args.index(name) + 1] if name in args else default


time.sleep(float(os.environ.get("FAKE_INIT_S", "0")))
jit = 0.001 * int(os.environ.get("NCCLTUNE_RUN", "0"))
sizes = [int(b) for b in arg("--bytes", "43008").split(",")]
phases = {"cuda_init": 0.1, "nccl_init": 0.2, "timing": 0.01}
rep = {"schema": "nccltune-probe/1", "ok": True, "nranks": 2, "source": "model",
       "phases_s": phases,
       "results": [{"bytes": b, "ops": 1, "samples": 10, "correct": True,
                    "us": {"median": 50.0 + jit}} for b in sizes]}
if "--sweep" in args and os.environ.get("FAKE_FAIL_SWEEP") == "1":
    print(json.dumps({"schema": "nccltune-probe/1", "ok": False, "stage": "capture",
                      "error": "fake sweep failure"}))
    sys.exit(1)
if "--sweep" in args:
    with open(arg("--sweep")) as f:
        doc = json.load(f)
    rep["sweep"] = []
    time.sleep(float(os.environ.get("FAKE_CHOICE_S", "0")) * len(doc["choices"]))
    phases["timing"] = 0.01 * len(doc["choices"])
    for i, c in enumerate(doc["choices"]):
        us = float(os.environ.get("FAKE_SWEEP_BASE", "10")) + (c.get("ctas") or 0) + jit
        rep["sweep"].append({"index": i, "bytes": c["bytes"], "algo": c.get("algo"),
                             "proto": c.get("proto"), "ctas": c.get("ctas") or 0, "ok": True,
                             "samples": 10, "us": {"median": us},
                             "nccl": {"algo": c.get("algo"), "proto": c.get("proto"),
                                      "ctas": c.get("ctas")}})
elif "NCCLTUNE_TUNER_TABLE" in os.environ:
    if os.environ.get("FAKE_FAIL_FRESH") == "1":
        print(json.dumps({"schema": "nccltune-probe/1", "ok": False, "stage": "init",
                          "error": "fake failure"}))
        sys.exit(1)
    with open(os.environ["NCCLTUNE_TUNER_TABLE"]) as f:
        rule = [ln.split() for ln in f if ln.startswith("allreduce")][0]
    ctas = int(rule[7])
    rep["results"][0]["us"]["median"] = float(os.environ.get("FAKE_FRESH_BASE", "30")) - ctas + jit
    rep["results"][0]["nccl"] = {"algo": rule[5].capitalize(), "proto": rule[6], "ctas": ctas}
if os.environ.get("FAKE_LOG"):
    with open(os.environ["FAKE_LOG"], "a") as f:
        f.write(("sweep" if "--sweep" in args else os.environ["NCCLTUNE_TUNER_TABLE"]) + "\n")
print(json.dumps(rep))
