#!/usr/bin/env python3
"""sweep_regret.py - the two-level search against one configuration per probe process,
side by side at equal budgets (issue 17), on the built-in machine MODELS. Every number it
prints is a MODEL number, except the probe seconds, which are measured wall time of the
model probe on this machine.

Both arms search the same per-size default space (the file the sessions are given is
the tuner's own per-size default, read back from the journal header of a 2-run session
without --space, so it cannot drift from tuner/space/; docs/formats.md) with bo, the same seeds and the same
--budget (probe processes):
  * sweep: `nccltune run --probe "nccltune-model-probe --model M --seed K"`: the probe says
    "sweep", so the session is two-level (one --sweep process per outer point);
  * plain: the same probe behind a wrapper that refuses --capabilities (a probe that
    cannot sweep): one configuration per process, its per-size rules through the plugin.
What each session recommends (results.json best.env, and exports/nccl-tuner.table for
its rules; NCCL's defaults when nothing is recommended) is evaluated with
`nccltune-model-probe --noise 0`: its true time per step. Regret = true / reference - 1,
where the reference is the best true time of ANY recommendation of either arm on that
model (plus NCCL's defaults): the best configuration known, NOT an exhaustive optimum of
the per-size space (1.7 million points per model; not computed here), so these regrets
are lower bounds on the regret against the true optimum.

Probe time of a session: the sum of its journal runs' wall_s (every probe process,
final rounds included). Output: Markdown on stdout, progress on stderr. --quick: two
models, 3 seeds, budget 20 (for tests); --json FILE also writes every session's row and
the summary. Exit 0, 1 on a failure, 2 on bad options."""
import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # benchlib, beside it
from benchlib import BenchError, clean_env  # noqa: E402

MODELS = ["pcie-gen5-8gpu", "nvlink-h200-8gpu", "pcie-4gpu-switch", "pcie-2x4-islands",
          "h200-nvlink-2gpu"]
QUICK_MODELS = ["pcie-gen5-8gpu", "nvlink-h200-8gpu"]
BYTES, OPS, DTYPE = 43008, 122, "bf16"
NO_CAPS = """#!/bin/sh
# a probe that cannot sweep: refuses --capabilities, else the model probe as is
for a in "$@"; do [ "$a" = --capabilities ] && { echo 'no such option' >&2; exit 2; }; done
exec "%s" "$@"
"""


def default_space(args, tmp):
    """The tuner's own per-size default space (what a session with a sweeping probe and
    no --space searches), as its journal header records it: one 2-run model session."""
    d = os.path.join(tmp, "default-space")
    cmd = [args.nt, "run", "--probe", "%s --model %s" % (args.probe, MODELS[0]), "--budget",
           "2", "--bytes", str(BYTES), "--ops", str(OPS), "--out", d, "--quiet"]
    p = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True)
    if p.returncode not in (0, 4):
        raise BenchError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr[-600:]))
    with open(os.path.join(d, "journal.jsonl")) as f:
        space = json.loads(f.readline()).get("space")
    if not isinstance(space, dict) or not any(k.startswith("rule.") for k in
                                              space.get("params", {})):
        raise BenchError("%s: the journal header has no per-size default space" % d)
    return space


def true_us(args, model, nccl_env, table):
    """Noise-free time per step of the variables nccl_env with the plugin table file
    `table` (None: no rules) on `model`; None when it fails on the modelled machine."""
    extra = dict(nccl_env)
    if table:
        extra["NCCL_TUNER_PLUGIN"] = args.plugin
        extra["NCCLTUNE_TUNER_TABLE"] = table
    cmd = [args.probe, "--model", model, "--noise", "0", "--bytes", str(BYTES),
           "--ops", str(OPS), "--dtype", DTYPE]
    p = subprocess.run(cmd, env=clean_env(extra), capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise BenchError("%s with %s: exit %d: %s" % (" ".join(cmd), extra, p.returncode,
                                                      p.stderr.strip()[-300:]))
    rep = json.loads(p.stdout)
    if not rep.get("ok"):
        return None
    return rep["results"][0]["us"]["median"] * OPS


def one_session(args, arm, model, seed, budget, tmp):
    d = os.path.join(tmp, "%s-%s-%d-%d" % (arm, model, seed, budget))
    probe = args.probe if arm == "sweep" else args.nocaps
    cmd = [args.nt, "run", "--probe", "%s --model %s --seed %d" % (probe, model, seed),
           "--space", args.space, "--strategy", "bo", "--budget", str(budget),
           "--seed", str(seed), "--bytes", str(BYTES), "--ops", str(OPS), "--out", d,
           "--quiet"]
    p = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True)
    if p.returncode not in (0, 4):
        raise BenchError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr[-600:]))
    with open(os.path.join(d, "results.json")) as f:
        res = json.load(f)
    runs, wall, inner = 0, 0.0, 0
    with open(os.path.join(d, "journal.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "run":
                runs += 1
                wall += r.get("wall_s") or 0
                inner += len(r.get("inner") or [])
    best = res.get("best") or {}
    recommended = res.get("verdict") == "recommended"
    table = os.path.join(d, "exports", "nccl-tuner.table")
    env = best.get("env") or {} if recommended else {}
    tab = table if recommended and best.get("rules") and os.path.exists(table) else None
    if recommended and best.get("rules") and not tab:
        raise BenchError("%s: best has rules but no exports/nccl-tuner.table" % d)
    us = true_us(args, model, env, tab)
    if us is None:
        raise BenchError("%s: the recommendation fails on the model at noise 0" % d)
    if not args.keep:
        shutil.rmtree(d, ignore_errors=True)
    return {"arm": arm, "model": model, "seed": seed, "budget": budget, "true": us,
            "runs": runs, "probe_s": wall, "inner": inner}


def pct(v):
    return "%.1f%%" % (100 * v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--budgets", default="60")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the session folders")
    ap.add_argument("--json", help="also write every session's row and the summary here")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.budgets, args.models = 3, "20", ",".join(QUICK_MODELS)
    try:
        budgets = [int(b) for b in args.budgets.split(",")]
    except ValueError:
        ap.error("--budgets: a list of integers")
    models = args.models.split(",")
    args.nt = os.path.abspath(os.path.join(args.build, "cli", "nccltune"))
    args.probe = os.path.abspath(os.path.join(args.build, "models", "nccltune-model-probe"))
    args.plugin = os.path.abspath(os.path.join(args.build, "plugin",
                                               "libnccl-tuner-nccltune.so"))
    for f in (args.nt, args.probe, args.plugin):
        if not os.path.exists(f):
            print("sweep_regret.py: %s is not built" % f, file=sys.stderr)
            return 2
    tmp = tempfile.mkdtemp(prefix="nccltune-sweep-regret-")
    try:
        args.space = os.path.join(tmp, "space.json")
        with open(args.space, "w") as f:
            json.dump(default_space(args, tmp), f)
        args.nocaps = os.path.join(tmp, "nocaps.sh")
        with open(args.nocaps, "w") as f:
            f.write(NO_CAPS % args.probe)
        os.chmod(args.nocaps, 0o755)
        jobs = [(arm, m, s, b) for m in models for b in budgets for s in range(1, args.seeds + 1)
                for arm in ("sweep", "plain")]
        rows = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            futs = [ex.submit(one_session, args, *j, tmp) for j in jobs]
            for i, fu in enumerate(futs):
                rows.append(fu.result())
                if (i + 1) % 20 == 0:
                    print("sweep_regret: %d/%d sessions" % (i + 1, len(jobs)), file=sys.stderr)
        summary = report(args, models, budgets, rows)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"space": json.load(open(args.space)), "rows": rows,
                           "summary": summary}, f, indent=1)
    except BenchError as e:
        print("sweep_regret.py: %s" % e, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def report(args, models, budgets, rows):
    """Print the Markdown table; return its rows as dicts."""
    out = []
    print("| model | budget | arm | regret median | regret worst | seeds > 5% | "
          "probe s (median) | processes | inner results (median) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for m in models:
        defaults = true_us(args, m, {}, None)
        ref = min([r["true"] for r in rows if r["model"] == m] + [defaults])
        for b in budgets:
            for arm in ("sweep", "plain"):
                sel = [r for r in rows if r["model"] == m and r["budget"] == b and r["arm"] == arm]
                reg = [r["true"] / ref - 1 for r in sel]
                out.append({"model": m, "budget": b, "arm": arm,
                            "median": statistics.median(reg), "worst": max(reg),
                            "beyond5": sum(x > 0.05 for x in reg), "seeds": len(reg),
                            "probe_s": statistics.median(r["probe_s"] for r in sel),
                            "processes": max(r["runs"] for r in sel),
                            "inner": statistics.median(r["inner"] for r in sel),
                            "reference_us": ref, "defaults_us": defaults})
                print("| %s | %d | %s | %s | %s | %d/%d | %.3f | %d | %d |" % (
                    m, b, arm, pct(statistics.median(reg)), pct(max(reg)),
                    sum(x > 0.05 for x in reg), len(reg),
                    statistics.median(r["probe_s"] for r in sel),
                    max(r["runs"] for r in sel),
                    statistics.median(r["inner"] for r in sel)))
        print("| %s | reference | best known %.1f us/step; NCCL's defaults %.1f (regret %s) "
              "| | | | | | |" % (m, ref, defaults, pct(defaults / ref - 1)))
    return out


if __name__ == "__main__":
    sys.exit(main())
