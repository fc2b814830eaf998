#!/usr/bin/env python3
"""test_unattended.py - bench/unattended.py: its landscape layer (a flaky condition that
always fires spoils a plain run and a sweep choice, one that never fires changes nothing;
a scale rule multiplies the latencies of its size under its setting only), and --quick
end to end (a crash landscape's failures at the thread counts next to its best safe
deployment's): every session scored, no deployment faster than the best safe one
unless it is unsafe or slows the guard. Usage: test_unattended.py BUILD."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from types import SimpleNamespace

import benchtool

build = os.path.abspath(sys.argv[1])
spec = importlib.util.spec_from_file_location(
    "unattended", os.path.join(benchtool.SRC, "bench", "unattended.py"))
ua = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ua)
args = SimpleNamespace(src=os.path.abspath(benchtool.SRC),
                       probe=os.path.join(build, "models", "nccltune-model-probe"),
                       plugin=os.path.join(build, "plugin", "libnccl-tuner-nccltune.so"))

with tempfile.TemporaryDirectory() as d:
    layer_py = os.path.join(d, "layer.py")
    with open(layer_py, "w") as f:
        f.write(ua.LAYER)
    model = "pcie-gen5-8gpu"
    env = {"NCCL_NTHREADS": "256"}
    plain = ua.probe_json(args, [args.probe, "--model", model, "--noise", "0", "--bytes",
                                 "%d,%d" % (ua.DECODE, ua.GUARD), "--ops", "%d,1" % ua.OPS], env)
    nccl = plain["results"][0]["nccl"]

    def layered(layer, extra=None, e=env):
        lf = os.path.join(d, "l.json")
        with open(lf, "w") as f:
            json.dump(layer, f)
        cmd = [sys.executable, layer_py, args.probe, lf, "--model", model, "--noise", "0",
               "--bytes", "%d,%d" % (ua.DECODE, ua.GUARD), "--ops", "%d,1" % ua.OPS] + (extra or [])
        p = subprocess.run(cmd, env=ua.clean_env(dict(e, NCCLTUNE_RUN="3")),
                           capture_output=True, text=True)
        return p.returncode, json.loads(p.stdout)

    flaky = {"algo": nccl["algo"], "proto": nccl["proto"], "nthreads": "256", "seed": 1}
    rc, rep = layered({"flaky": dict(flaky, p=1.0)})
    benchtool.check(rc == 1 and not rep["ok"] and rep["stage"] == "verify",
                    "a flaky condition with p 1 did not spoil the plain run: %r" % rep)
    rc, rep = layered({"flaky": dict(flaky, p=0.0)})
    benchtool.check(rc == 0 and rep["results"][0]["us"] == plain["results"][0]["us"],
                    "p 0 changed the report")
    rc, rep = layered({"flaky": dict(flaky, p=1.0)}, e={"NCCL_NTHREADS": "128"})
    benchtool.check(rc == 0 and rep["ok"], "the flaky condition fired at another thread count")
    scale = [{"env": env, "bytes": ua.GUARD, "factor": 1.5}]
    rc, rep = layered({"scale": scale})
    g0, g1 = plain["results"][1]["us"]["median"], rep["results"][1]["us"]["median"]
    benchtool.check(abs(g1 / g0 - 1.5) < 1e-9, "scale 1.5 gave %r" % (g1 / g0))
    benchtool.check(rep["results"][0]["us"] == plain["results"][0]["us"], "scale hit 43 KB")
    benchtool.check(abs(ua.layer_factor({"scale": scale}, env, ua.GUARD) - 1.5) < 1e-12 and
                    ua.layer_factor({"scale": scale}, {}, ua.GUARD) == 1.0, "layer_factor")
    # a sweep choice: the flaky pair forced at 256 threads sums wrong in the sweep
    sw = os.path.join(d, "sw.json")
    with open(sw, "w") as f:
        json.dump({"schema": "nccltune-sweep/1", "rounds": 1, "choices": [
            {"bytes": ua.DECODE, "algo": nccl["algo"], "proto": nccl["proto"], "ctas": 2}]}, f)
    rc, rep = layered({"flaky": dict(flaky, p=1.0)}, ["--sweep", sw],
                      dict(env, NCCL_TUNER_PLUGIN=args.plugin))
    benchtool.check(rc == 0 and rep["sweep"][0]["ok"] is False and
                    rep["sweep"][0]["stage"] == "verify", "the sweep choice was not spoiled: %r"
                    % rep.get("sweep"))

    out = os.path.join(d, "q.json")
    p = subprocess.run([sys.executable, os.path.join(benchtool.SRC, "bench", "unattended.py"),
                        "--build", build, "--quick", "--json", out], capture_output=True, text=True)
    benchtool.check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr[-600:]))
    doc = json.load(open(out)) if os.path.exists(out) else {"sessions": [], "landscapes": []}
benchtool.check(len(doc["landscapes"]) == 2 and len(doc["sessions"]) == 4,
                "%d landscapes, %d sessions" % (len(doc["landscapes"]), len(doc["sessions"])))
for f in doc["landscapes"]:
    benchtool.check(f["best_safe_us"] <= f["defaults_us"] * (1 + 1e-9), "%r" % f)
    benchtool.check((f["class"] == "flaky") == bool(f["flaky"]), "flaky condition: %r" % f)
    if f["class"] == "crash":   # next to the optimum: at its neighbouring thread counts
        nt = f["best_safe"]["env"].get("NCCL_NTHREADS")
        ts = [rl["when"]["env"]["NCCL_NTHREADS"] for rl in f["rules"]]
        benchtool.check(ts and nt not in ts and all(rl["stage"] == "capture" for rl in f["rules"]),
                        "crash rules %r next to %r" % (f["rules"], nt))
        i = ua.THREADS.index(nt) if nt else len(ua.THREADS)
        benchtool.check(set(ts) == set(ua.THREADS[max(0, i - 1):i] + ua.THREADS[i + 1:i + 2]),
                        "crash rules at %r, best at %r" % (ts, nt))
for r in doc["sessions"]:
    benchtool.check(r["runs"] <= r["budget"], "%r: more processes than the budget" % r)
    benchtool.check(r["regret"] is None or r["regret"] >= -1e-9 or r["unsafe"] or
                    r["guard_ratio"] > ua.GUARD_ALLOWED,
                    "%r: faster than the best safe deployment yet safe" % r)
benchtool.finish("bench-unattended")
