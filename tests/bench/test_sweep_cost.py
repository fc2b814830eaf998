#!/usr/bin/env python3
"""test_sweep_cost.py - bench/sweep_cost.py on the model probe (labelled model, no phases,
every choice ok) and on a fake probe that sleeps a fixed time per process and per sweep
choice (deterministic lower bounds on the walls, its phases summed), a failing run exits 1.
usage: test_sweep_cost.py MODEL_PROBE PLUGIN"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchtool import FAKE, check, finish, run_tool  # noqa: E402

PROBE, PLUGIN = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])


def run(args, d, env=None):
    return run_tool("sweep_cost", PLUGIN, args, d, env)


with tempfile.TemporaryDirectory() as d:
    p, doc = run(["--probe", PROBE, "--model", "h200-nvlink-2gpu", "--choices", "30",
                  "--repeats", "2", "--iters", "20"], d)
    check(p.returncode == 0, f"model: exit {p.returncode}: {p.stderr[-500:]}")
    if doc:
        w = doc["wall_s"]
        check(doc["schema"] == "nccltune-sweep-cost/1" and doc["label"] == "model", "label model")
        check(doc["choices"] == 30 and doc["runs"] == 2 * 32, f"runs {doc['runs']}")
        check(doc["sweep_not_ok"] == 0, "every model choice ok")
        check(doc["phases_s"] is None and "no phases_s" in p.stdout, "model: no phases")
        check(w["sweep"] > 0 and w["fresh_total"] > 0, f"walls {w}")
        check(abs(w["fresh_per_process"] * 30 - w["fresh_total"]) < 1e-9, "per process")
        check(abs(w["marginal_per_choice"] * 30 - (w["sweep"] - w["plain"])) < 1e-9, "marginal")
        check("model numbers" in p.stdout, "table says model")
    env = {"FAKE_INIT_S": "0.05", "FAKE_CHOICE_S": "0.02"}
    p, doc = run(["--probe", FAKE, "--choices", "5", "--repeats", "1", "--iters", "10"], d, env)
    check(p.returncode == 0, f"fake: exit {p.returncode}: {p.stderr[-500:]}")
    if doc:
        w = doc["wall_s"]
        check(doc["label"] == "measured" and doc["runs"] == 7, f"fake label/runs {doc['runs']}")
        check(w["sweep"] >= 0.05 + 5 * 0.02 and w["plain"] >= 0.05, f"sweep walls {w}")
        check(w["fresh_total"] >= 5 * 0.05 and w["fresh_per_process"] >= 0.05, f"fresh {w}")
        check(abs(w["speedup"] - w["fresh_total"] / w["sweep"]) < 1e-9, f"speedup {w}")
        ph = doc["phases_s"]
        check(ph is not None and abs(ph["sweep"]["timing"] - 0.05) < 1e-9,
              f"sweep phases {ph and ph['sweep']}")
        check(ph is not None and abs(ph["fresh_per_process"]["nccl_init"] - 0.2) < 1e-9,
              f"fresh phases {ph and ph['fresh_per_process']}")
        check("nccl_init" in p.stdout, "phase table printed")
    # counted over every repeat: 3 choices x 2 repeats
    p, doc = run(["--probe", FAKE, "--choices", "3", "--repeats", "2"], d,
                 {"FAKE_FAIL_FRESH": "1"})
    check(p.returncode == 0 and doc and doc["fresh_failed"] == 6, f"fresh failures {p.returncode}"
          f" {doc and doc['fresh_failed']}")
    p, doc = run(["--probe", FAKE, "--choices", "3", "--repeats", "1"], d,
                 {"FAKE_FAIL_SWEEP": "1"})
    check(p.returncode == 1 and doc is None and "fake sweep failure" in p.stderr,
          f"sweep failure {p.returncode}")
finish("sweep_cost")
