#!/usr/bin/env python3
"""Write the journal.jsonl of the fixture sessions (measured/, model/, noconfig/,
defaults-best/). The results.json files next to them are written by hand; this script only
saves typing the run records. The figures are invented test data, not measurements.
Run it from this folder: python3 make_fixtures.py"""
import json
import random

FP_PCIE = {
    "schema": "nccltune-fingerprint/1", "source": "measured",
    "host": "fixture-box", "kernel": "6.8.0-45-generic",
    "driver": "580.159.04", "cuda_runtime": "13.0", "cuda_driver": "13.0",
    "nccl_version": "2.28.9", "gpu_count": 8,
    "gpus": [{"index": i, "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
              "bus_id": "00000000:%02X:00.0" % (0x18 + 0x10 * i), "uuid": "GPU-fixture-%d" % i}
             for i in range(8)],
    "topology": [["X" if i == j else ("NODE" if (i < 4) == (j < 4) else "SYS")
                  for j in range(8)] for i in range(8)],
}


def header(probe, fp):
    return {"schema": "nccltune-journal/1", "type": "session", "version": "0.1.0",
            "created": "2026-11-29T12:00:00Z", "seed": 1, "strategy": "bo", "budget": 40,
            "time_limit_s": 0, "timeout_s": 0, "probe": probe,
            "space": None,
            "workload": {"schema": "nccltune-workload/1", "dtype": "bf16",
                         "collectives": [{"op": "allreduce", "bytes": 43008, "count": 122}]},
            "pinned": {}, "fingerprint": fp, "warm_start": None}


def run(n, phase, env, outcome, obj):
    return {"type": "run", "run": n, "phase": phase, "point": None, "env": env,
            "outcome": outcome, "objective_us": obj, "wall_s": 3.1, "exit_status":
            0 if outcome == "ok" else 1, "signal": 0, "error": "" if outcome == "ok" else
            "no algorithm/protocol available", "stderr_tail": "", "report": None}


def session(seed, base, tree_fails, all_fail=False, slower=False, extra=(), final=None):
    """40 runs of a random search, then `extra` (env, objective) search runs, then the
    final re-measurement: the baseline and `final` (env, objective) interleaved 3 times."""
    rng = random.Random(seed)
    recs = [run(1, "baseline", {}, "ok", base)]
    protos = ["LL", "LL128", "Simple", None]
    algos = ["Ring", "Tree", None]
    scale = {"LL": 0.13, "LL128": 0.4, "Simple": 0.6, None: 1.0}
    if slower:
        scale = {k: 1.3 + v for k, v in scale.items()}
    for n in range(2, 41):
        env = {}
        p = rng.choice(protos)
        a = rng.choice(algos)
        if p:
            env["NCCL_PROTO"] = p
        if a:
            env["NCCL_ALGO"] = a
        ch = rng.randint(1, 16)
        env["NCCL_MAX_NCHANNELS"] = str(ch)
        if rng.random() < 0.5:
            env["NCCL_BUFFSIZE"] = str(1 << rng.randint(17, 22))
        if all_fail or (tree_fails and a == "Tree"):
            recs.append(run(n, "search", env, "capture", None))
            continue
        obj = base * scale[p] * (1 + 0.04 * ch) * rng.uniform(0.9, 1.15)
        recs.append(run(n, "search", env, "ok", round(obj, 1)))
    n = 41
    for env, obj in extra:
        recs.append(run(n, "search", env, "ok", obj))
        n += 1
    for rep in range(3):
        if final is None:
            break
        recs.append(run(n, "final", {}, "ok", round(base * (1 + 0.01 * rep), 1)))
        recs.append(run(n + 1, "final", final[0], "ok", round(final[1] * (1 - 0.01 * rep), 1)))
        n += 2
    return recs


def write(folder, probe, fp, recs):
    with open(folder + "/journal.jsonl", "w") as f:
        f.write(json.dumps(header(probe, fp)) + "\n")
        for r in recs:
            f.write(json.dumps(r) + "\n")


FP_MODEL = dict(FP_PCIE, source="model", model="pcie-gen5-8gpu", host="fixture-model")
BEST_MEASURED = {"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring", "NCCL_MAX_NCHANNELS": "2",
                 "NCCL_BUFFSIZE": "131072", "NCCL_NTHREADS": "64"}
BEST_MODEL = {"NCCL_PROTO": "LL", "NCCL_MAX_NCHANNELS": "7"}
write("measured", ["nccltune-probe", "--launch", "threads"], FP_PCIE,
      session(1, 24400.0, True,
              extra=[(BEST_MEASURED, 2880.0),
                     ({"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring", "NCCL_MAX_NCHANNELS": "1"}, 3010.5)],
              final=(BEST_MEASURED, 2850.0)))
write("model", ["nccltune-model-probe", "--model", "pcie-gen5-8gpu"], FP_MODEL,
      session(2, 20100.0, True, extra=[(BEST_MODEL, 2512.5)], final=(BEST_MODEL, 2512.5)))
write("noconfig", ["nccltune-probe"], FP_PCIE, session(3, 24400.0, True, all_fail=True))
write("defaults-best", ["nccltune-probe"], FP_PCIE, session(4, 2400.0, False, slower=True,
      final=({}, 2400.0)))
print(json.dumps(FP_PCIE))
