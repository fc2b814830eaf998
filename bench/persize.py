#!/usr/bin/env python3
"""persize.py - per-size plugin deployment against today's best global environment, on
a serving workload (decode: 122 all-reduces of 43,008 B per step; prefill guard: one
all-reduce of 117,440,512 B), on every built-in model. MODEL numbers, not measurements.

For each model two sessions are tuned: "global", the way nccltune tuned before per-size
deployment (examples/space-pcie.json: NCCL_ALGO/NCCL_PROTO as process-wide variables
next to the same process-level ones, --bytes 43008, no guard), and
"per-size" (examples/space-pcie-per-size.json: per-size rules through nccltune's plugin
plus process-level variables, --guard 117440512: guards checked, no-effect variables
dropped). Their recommendations (exports/env.json, the per-size one with the plugin and
its table) and NCCL's defaults are then run side by side in one loop, interleaved over
ROUNDS rounds with the model's noise: decode step time (122 x the 43,008 B latency) and
the guard's latency over the baseline's, each a mean with a 95% t-interval.

Usage: bench/persize.py BUILD_DIR OUT.md [--rounds N] [--budget N]
"""
import json
import math
import os
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile

T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}
DECODE, OPS, GUARD = 43008, 122, 117440512


def die(msg):
    print("persize.py: " + msg, file=sys.stderr)
    sys.exit(2)


def ci(xs):
    m = statistics.mean(xs)
    if len(xs) < 2:
        return m, float("nan")
    return m, T95.get(len(xs) - 1, 2.0) * statistics.stdev(xs) / math.sqrt(len(xs))


def tune(nt, src, model, out, budget, per_size):
    args = [nt, "run", "--model", model, "--budget", str(budget), "--seed", "1",
            "--bytes", str(DECODE), "--ops", str(OPS), "--out", out, "--quiet"]
    if per_size:
        args += ["--space", os.path.join(src, "examples", "space-pcie-per-size.json"),
                 "--guard", str(GUARD)]
    else:   # the default space is per-size now (the model probe sweeps): name the global one
        args += ["--space", os.path.join(src, "examples", "space-pcie.json")]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        die("%s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr[-400:]))
    with open(os.path.join(out, "exports", "env.json")) as f:
        env = json.load(f)["env"]
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    return env, res


def probe(pb, model, env, seed):
    e = {k: v for k, v in os.environ.items() if not k.startswith("NCCL")}
    e.update(env)
    p = subprocess.run([pb, "--model", model, "--bytes", "%d,%d" % (DECODE, GUARD),
                        "--ops", "%d,1" % OPS, "--seed", str(seed)],
                       capture_output=True, text=True, env=e)
    if p.returncode != 0:
        die("probe %s %r: exit %d: %s" % (model, env, p.returncode, p.stderr[-300:]))
    rep = json.loads(p.stdout)
    us = {r["bytes"]: r["us"]["median"] for r in rep["results"]}
    return us[DECODE] * OPS, us[GUARD]


def bench_model(nt, pb, src, model, tmp, rounds, budget):
    genv, gres = tune(nt, src, model, os.path.join(tmp, model + "-global"), budget, False)
    penv, pres = tune(nt, src, model, os.path.join(tmp, model + "-persize"), budget, True)
    confs = [("NCCL defaults", {}), ("global best", genv), ("per-size", penv)]
    step = {c[0]: [] for c in confs}
    guard = {c[0]: [] for c in confs}
    for r in range(rounds):
        for j in range(len(confs)):
            name, env = confs[(j + r) % len(confs)]
            s, g = probe(pb, model, env, 1000 + r * 10 + j)
            step[name].append(s)
            guard[name].append(g)
    rows = []
    for name, env in confs:
        ratios = [g / b for g, b in zip(guard[name], guard["NCCL defaults"])]
        rows.append((name, env, ci(step[name]), ci(ratios)))
    return rows, gres, pres


def fmt_env(env):
    keep = {k: v for k, v in env.items() if k not in ("NCCL_TUNER_PLUGIN", "NCCLTUNE_TUNER_TABLE")}
    s = " ".join("%s=%s" % kv for kv in sorted(keep.items())) or "(nothing)"
    if "NCCL_TUNER_PLUGIN" in env:
        s += " + plugin table"
    return s


def main():
    argv = sys.argv[1:]
    rounds, budget = 5, 60
    while len(argv) > 2:
        if argv[-2] == "--rounds":
            rounds = int(argv[-1])
        elif argv[-2] == "--budget":
            budget = int(argv[-1])
        else:
            die("usage: bench/persize.py BUILD_DIR OUT.md [--rounds N] [--budget N]")
        argv = argv[:-2]
    if len(argv) != 2:
        die("usage: bench/persize.py BUILD_DIR OUT.md [--rounds N] [--budget N]")
    build, outmd = argv
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    nt = os.path.join(build, "cli", "nccltune")
    pb = os.path.join(build, "models", "nccltune-model-probe")
    for x in (nt, pb):
        if not os.access(x, os.X_OK):
            die("%s is not built" % x)
    models = subprocess.run([pb, "--list-models"], capture_output=True, text=True,
                            check=True).stdout.split()
    lines = ["# Per-size plugin deployment against today's best global environment: MODEL numbers",
             "", "**MODEL numbers, not measurements**: every figure below comes from "
             "nccltune's machine models.", "",
             "Command: `bench/persize.py %s %s --rounds %d --budget %d` (from the repository "
             "root)." % (build, outmd, rounds, budget), "",
             "Serving workload: decode %d all-reduces of %d B per step (step time = %d x its "
             "latency), prefill guard one all-reduce of %d B. `global best`: a session of "
             "`examples/space-pcie.json` (NCCL_ALGO/NCCL_PROTO process-wide) at `--bytes %d` "
             "without guards (how nccltune tuned before per-size deployment); `per-size`: `examples/space-pcie-per-size.json` with `--guard "
             "%d` (rules through the plugin, guards checked, no-effect variables dropped). "
             "Both budget %d, seed 1; then NCCL's defaults and both recommendations are run "
             "side by side, %d interleaved rounds (rotating order, the model's noise, a new "
             "seed per run). Mean and 95%% t-interval." % (OPS, DECODE, OPS, GUARD, DECODE,
                                                          GUARD, budget, rounds), ""]
    # A fixed folder: the model probe mixes the plugin table's path into its noise seed, so
    # a per-size session's figures depend on where it runs; a fixed path repeats exactly.
    tmp = os.path.join(tempfile.gettempdir(), "nccltune-persize-%d" % os.getuid())
    if os.path.lexists(tmp):
        st = os.lstat(tmp)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            die("%s: not a folder of yours; remove it" % tmp)
        shutil.rmtree(tmp)
    os.mkdir(tmp, 0o700)
    try:
        for m in models:
            rows, gres, pres = bench_model(nt, pb, src, m, tmp, rounds, budget)
            lines += ["## MODEL %s" % m, "",
                      "| configuration | what it sets | decode step (MODEL) | prefill guard vs "
                      "NCCL's defaults (MODEL) |", "| --- | --- | --- | --- |"]
            for name, env, (sm, sh), (gm, gh) in rows:
                lines.append("| %s | %s | %.1f us +- %.1f | %.2fx +- %.2f |" %
                             (name, fmt_env(env), sm, sh, gm, gh))
            dropped = [a["why"] for a in pres.get("ablation", []) if a.get("dropped")]
            if dropped:
                lines += ["", "per-size session, dropped: " + "; ".join(dropped)]
            if (gres.get("guards") or {}).get("verdict"):
                lines += ["", "global session guards: " + gres["guards"]["verdict"]]
            lines.append("")
            print("persize.py: %s done" % m, file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with open(outmd + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(outmd + ".tmp", outmd)


if __name__ == "__main__":
    main()
