#!/usr/bin/env python3
"""sweep_cost.py - probe cost per inner choice: N choices measured in ONE sweeping probe
process (`--sweep`) against N fresh processes, one configuration each (the plugin + a
one-rule table, as a result is deployed), side by side in one run, interleaved over R
repeats (issue 17, "Probe cost per inner choice").

Per repeat, in a shuffled order: a plain process of the size (no sweep: the fixed cost of a
process), the sweep process with all N choices, and the N fresh processes. Wall time is
taken from outside (fork to exit) and, where the probe reports `phases_s`, from the probe's
own timings (summed per phase; the model probe reports none). Printed: per repeat-median,
sweep wall, plain wall, (sweep - plain) / N = marginal cost per inner choice, fresh wall per
process, fresh total, and the speed-up fresh total / sweep wall; per phase, the sweep's
seconds and the fresh processes' seconds per process.

Choices: the first N of Ring/Tree x LL/LL128/Simple x 1/2/4/8 CTAs at the first size
(repeated cyclically past 24), or --sweep-file. --json FILE writes the numbers (schema
nccltune-sweep-cost/1), with "label" (--label, default "model" for --model, else
"measured"). A fresh process that fails still
counts (its wall time; "fresh_failed"). Exit 0, 1 when the plain or sweep run failed, 2 on bad options."""
import argparse
import json
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweep_equivalence as eq  # noqa: E402

PHASES = ["cuda_init", "nccl_init", "eager", "capture", "instantiate", "warmup", "timing",
          "verify", "teardown"]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--probe", required=True)
    ap.add_argument("--model")
    ap.add_argument("--plugin", required=True, help="libnccl-tuner-nccltune.so (a path)")
    ap.add_argument("--bytes", type=int, default=43008)
    ap.add_argument("--ops", type=int, default=122)
    ap.add_argument("--choices", type=int, default=24, help="N [24]")
    ap.add_argument("--sweep-file", help="nccltune-sweep/1 file (its first N choices)")
    ap.add_argument("--repeats", type=int, default=3, help="R [3]")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--probe-arg", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--label", help="what the numbers are (default: model / measured)")
    ap.add_argument("--work")
    ap.add_argument("--json")
    o = ap.parse_args(argv)
    if o.choices < 1 or o.repeats < 1:
        ap.error("--choices and --repeats must be at least 1")
    if "/" not in o.plugin:
        ap.error("--plugin must be a path")
    o.sizes = [o.bytes]
    o.ops_of = {o.bytes: o.ops}
    o.label = o.label or ("model" if o.model else "measured")
    return o


def phase_sum(reps):
    """Per phase, the sum over reports of phases_s (None when no report had phases_s)."""
    if not any(r.get("phases_s") for r in reps):
        return None
    return {p: sum((r.get("phases_s") or {}).get(p, 0.0) for r in reps) for p in PHASES}


def one_repeat(runner, o, choices, sweep_file, tables, r):
    order = ["plain", "sweep"] + list(range(len(choices)))
    random.Random(o.seed * 7919 + r).shuffle(order)
    plugin = {"NCCL_TUNER_PLUGIN": o.plugin}
    args = eq.workload_args(o, o.sizes)
    got = {"fresh_wall": 0.0, "fresh_reps": []}
    for item in order:
        if item == "plain":
            rep, w = runner.run("plain", args, plugin)
            got["plain_wall"], got["plain_rep"] = w, rep
        elif item == "sweep":
            rep, w = runner.run("sweep", args + ["--sweep", sweep_file], plugin)
            bad = [e for e in rep.get("sweep", []) if not e.get("ok")]
            got["sweep_wall"], got["sweep_rep"], got["sweep_not_ok"] = w, rep, len(bad)
        else:
            rep, w = runner.run("fresh", args, dict(plugin, NCCLTUNE_TUNER_TABLE=tables[item]),
                                allow_fail=True)
            got["fresh_wall"] += w
            got["fresh_failed"] = got.get("fresh_failed", 0) + (not rep.get("ok"))
            got["fresh_reps"].append(rep)
    print(f"sweep_cost: repeat {r + 1}/{o.repeats}: sweep {got['sweep_wall']:.3f} s, "
          f"{len(choices)} fresh {got['fresh_wall']:.3f} s", file=sys.stderr)
    return got


def main(argv):
    o = parse_args(argv)
    work = o.work or tempfile.mkdtemp(prefix="nccltune-sweepcost-")
    os.makedirs(work, exist_ok=True)
    try:
        pool = eq.load_choices(o.sweep_file) if o.sweep_file else eq.default_choices(o.bytes)
        choices = [dict(pool[i % len(pool)]) for i in range(o.choices)]
        if any(c["bytes"] != o.bytes for c in choices):
            print("sweep_cost: every choice must be of --bytes", file=sys.stderr)
            return 2
        sweep_file = os.path.join(work, "sweep.json")
        with open(sweep_file, "w") as f:
            json.dump({"schema": "nccltune-sweep/1", "rounds": min(o.rounds, o.iters),
                       "seed": o.seed, "choices": choices}, f)
        tables = []
        for i, c in enumerate(choices):
            tables.append(os.path.join(os.path.abspath(work), f"choice-{i}.table"))
            with open(tables[-1], "w") as f:
                f.write(eq.table_text(c))
        runner = eq.Runner(o, work)
        reps = [one_repeat(runner, o, choices, sweep_file, tables, r) for r in range(o.repeats)]
    except eq.RunError as e:
        print(f"sweep_cost: {e}", file=sys.stderr)
        return 1
    n = len(choices)
    med = eq.median
    sweep_w = med([g["sweep_wall"] for g in reps])
    plain_w = med([g["plain_wall"] for g in reps])
    fresh_t = med([g["fresh_wall"] for g in reps])
    doc = {"schema": "nccltune-sweep-cost/1", "label": o.label, "probe": o.probe,
           "model": o.model, "bytes": o.bytes, "ops": o.ops, "iters": o.iters,
           "choices": n, "repeats": o.repeats, "runs": runner.count,
           # over every repeat (each repeat runs every choice once more)
           "sweep_not_ok": sum(g["sweep_not_ok"] for g in reps),
           "fresh_failed": sum(g.get("fresh_failed", 0) for g in reps),
           "wall_s": {"sweep": sweep_w, "plain": plain_w, "fresh_total": fresh_t,
                      "fresh_per_process": fresh_t / n,
                      "sweep_per_choice": sweep_w / n,
                      "marginal_per_choice": (sweep_w - plain_w) / n,
                      "speedup": fresh_t / sweep_w if sweep_w > 0 else None},
           "per_repeat": [{"sweep": g["sweep_wall"], "plain": g["plain_wall"],
                           "fresh_total": g["fresh_wall"]} for g in reps]}
    ph_s = phase_sum([reps[len(reps) // 2]["sweep_rep"]])
    ph_f = phase_sum(reps[len(reps) // 2]["fresh_reps"])
    doc["phases_s"] = None if ph_s is None else {
        "sweep": ph_s, "fresh_per_process": {k: v / n for k, v in (ph_f or {}).items()}}
    w = doc["wall_s"]
    print(f"# probe cost: {n} choices in one sweep process vs {n} fresh processes "
          f"({o.label} numbers; {o.bytes} B x {o.ops} ops, --iters {o.iters}; "
          f"medians of {o.repeats} interleaved repeats)")
    print(f"sweep process, {n} choices:      {w['sweep']:.3f} s wall "
          f"({w['sweep_per_choice'] * 1e3:.1f} ms per choice)")
    print(f"plain process, no sweep:        {w['plain']:.3f} s wall")
    print(f"marginal cost per inner choice: {w['marginal_per_choice'] * 1e3:.1f} ms "
          f"((sweep - plain) / {n})")
    print(f"fresh processes, {n} x 1 choice: {w['fresh_total']:.3f} s wall "
          f"({w['fresh_per_process'] * 1e3:.1f} ms per process)")
    print(f"speed-up fresh / sweep:         {fmt_x(w['speedup'])}")
    if doc["sweep_not_ok"]:
        print(f"note: {doc['sweep_not_ok']} of the sweep's choices were not ok (not timed)")
    if doc["fresh_failed"]:
        print(f"note: {doc['fresh_failed']} fresh processes failed (their wall time counts)")
    if doc["phases_s"]:
        print(f"{'phase':<12} {'sweep s':>9} {'fresh s/process':>16}")
        for p in PHASES:
            print(f"{p:<12} {doc['phases_s']['sweep'][p]:>9.4f} "
                  f"{doc['phases_s']['fresh_per_process'].get(p, 0.0):>16.4f}")
    else:
        print("phases: the probe reports no phases_s (the model probe): outside wall time only")
    if o.json:
        with open(o.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return 0


def fmt_x(v):
    return "-" if v is None else f"{v:.1f}x"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
