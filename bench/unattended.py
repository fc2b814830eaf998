#!/usr/bin/env python3
"""unattended.py - can a user trust a default two-level session unattended? (issue 30)
Held-out landscapes built from seeds, whole `nccltune run` sessions on them, each scored
with the TRUE time of what it deploys. Every number it prints is a MODEL number.

A landscape is a machine model file (models/*.json, schema nccltune-model/1) derived from
a built-in model: its cost constants scaled by seeded log-normal factors (held-out: the
seeds start at 1001, nothing was tuned on them), plus the failures of its class:
  base      the model as perturbed: interactions across levels (the best per-size choice
            at 43,008 B depends on the thread count) and guard traps (the fastest
            deployment at 43 KB slows the prefill guard) come with the models;
  trap      one process setting (a buffer size or a thread count) makes 43 KB 4-12%
            faster and the prefill guard 1.03x, 1.10x or 1.45x slower (a scale layer over
            the model probe's report): the fastest at 43 KB slows the guard;
  flat      pcie-4gpu-switch, lightly perturbed: NCCL's defaults near the best at 43 KB;
  crash     the best safe deployment's algorithm/protocol fails at graph capture at the
            neighbouring thread counts (a crash region next to the optimum);
  wrongsum  that algorithm/protocol sums wrong at one other thread count (deterministic);
  flaky     that algorithm/protocol at the optimum's own thread count sums wrong in 30%
            of processes (a wrapper around the model probe, drawn per run from
            NCCLTUNE_RUN): it is NOT safe, however often it passes;
  hang      every process hangs at one other thread count (stage replay, modelled).

The truth (the model probe at noise 0): per outer setting (NCCL_BUFFSIZE x NCCL_NTHREADS,
unset included: 50) one sweep of every per-size choice at 43,008 B (72) with the prefill
guard (117,440,512 B, NCCL's own choice there, as the deployed table has rules for
43,008 B only) measured in the same process. The best SAFE deployment is the fastest
decode step (122 x 43,008 B) whose guard is within 2% of NCCL's defaults and which
neither fails nor is flaky. Each session runs the tuner's default space (two-level) with
`--guard 117440512`; what it deploys (exports/env.json when the verdict is recommended,
else NCCL's defaults) is run plain at noise 0. Per session:
  guard>2%   the deployment's true guard latency > 1.02 x NCCL's defaults';
  unsafe     the deployment fails, or is the flaky configuration;
  missed     it ends at NCCL's defaults while the best safe deployment is >= 5% faster;
  regret     true decode step / the best safe deployment's - 1;
  sweeps in guard-slow settings: sweeps of outer settings whose guard (NCCL's own choice)
             is > 5% slower than NCCL's defaults (true): budget the final rounds would
             refuse (issue 30 class 3).
Also per landscape: the best safe gain of per-size rules alone (outer setting unset).
Strategies bo and random at equal probe processes (--budget counts them; the table shows
the processes each session really ran). Output: Markdown on stdout, progress on stderr;
--json FILE writes every landscape and session. --quick: crash and flaky, one seed each,
budget 20 (for tests).
Exit 0; 1 when something could not run; 2 on bad options."""
import argparse
import concurrent.futures
import copy
import hashlib
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # benchlib, beside it
from benchlib import BenchError, clean_env  # noqa: E402

DECODE, OPS, GUARD = 43008, 122, 117440512
GUARD_ALLOWED, GAIN_MIN = 1.02, 1.05
SEED0 = 1001                       # held-out seeds start here
BASES = ["pcie-gen5-8gpu", "pcie-2x4-islands", "nvlink-h200-8gpu", "h200-nvlink-2gpu"]
CLASSES = ["base", "trap", "flat", "crash", "wrongsum", "flaky", "hang"]
THREADS = ["64", "128", "256", "512"]
BUFFS = [None] + [str(65536 << i) for i in range(9)]
FLAKY_P = 0.3

# The landscape's synthetic layer over the model probe: flaky wrong sums (the report is
# spoiled, by a re-run with the probe's own testing aids, when what NCCL ran at DECODE
# matches the condition and a draw seeded by the landscape and NCCLTUNE_RUN says so) and
# scale rules (a process setting makes one size's latencies FACTOR x the model's).
LAYER = r'''#!/usr/bin/env python3
import hashlib, json, os, subprocess, sys
probe, layer = sys.argv[1], json.load(open(sys.argv[2]))
args = sys.argv[3:]
flaky = layer.get("flaky")
def run(extra):
    return subprocess.run([probe] + args + extra, capture_output=True, text=True)
def draw(key):
    h = hashlib.sha256(("%s|%s|%s" % (flaky["seed"], os.environ.get("NCCLTUNE_RUN", ""), key)).encode())
    return int.from_bytes(h.digest()[:8], "big") / 2.0**64
def hit(nccl):
    return (flaky and nccl and nccl.get("algo") == flaky["algo"] and nccl.get("proto") == flaky["proto"]
            and os.environ.get("NCCL_NTHREADS") == flaky["nthreads"])
def factor(nbytes):
    f = 1.0
    for r in layer.get("scale") or []:
        if r["bytes"] == nbytes and all(os.environ.get(k) == v for k, v in r["env"].items()):
            f *= r["factor"]
    return f
p = run([])
if p.returncode in (0, 1) and "--capabilities" not in args and "--fingerprint" not in args:
    rep = json.loads(p.stdout)
    extra = None
    for e in rep.get("sweep") or [] if rep.get("ok") else []:
        if e.get("ok") and e["bytes"] == DECODE and hit(e.get("nccl")) and draw(e["index"]) < flaky["p"]:
            extra = ["--test-corrupt-choice", str(e["index"])]
            break
    if rep.get("ok") and "--sweep" not in args:
        for r in rep.get("results") or []:
            if r["bytes"] == DECODE and hit(r.get("nccl")) and draw("plain") < flaky["p"]:
                extra = ["--test-corrupt-rank", "0"]
    if extra:
        p = run(extra)
        rep = json.loads(p.stdout)
    for e in (rep.get("results") or []) + (rep.get("sweep") or []):
        if "us" in e:
            f = factor(e["bytes"])
            e["us"] = {k: v * f for k, v in e["us"].items()}
    sys.stdout.write(json.dumps(rep) + "\n")
else:
    sys.stdout.write(p.stdout)
sys.stderr.write(p.stderr)
sys.exit(p.returncode)
'''.replace("DECODE", str(DECODE))


def probe_json(args, cmd, env):
    p = subprocess.run(cmd, env=clean_env(env), capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise BenchError("%s (env %s): exit %d: %s" % (" ".join(cmd), env, p.returncode,
                                                      p.stderr.strip()[-300:]))
    return json.loads(p.stdout)


# ---- landscapes ----

def perturb(model, rng, sd):
    """Scale every cost constant by its own log-normal factor exp(N(0, sd))."""
    c = model["costs"]

    def scale(d):
        for k, v in d.items():
            if isinstance(v, dict):
                scale(v)
            elif isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
                d[k] = v * math.exp(rng.gauss(0, sd))
    for k in ("launch_us", "hop_us", "cta_bw_GBps", "path_extra_us"):
        scale(c[k])
    for k in ("cta_sync_us", "host_callback_us", "proxy_per_channel_us"):
        c[k] *= math.exp(rng.gauss(0, sd))


def rule(when, stage, error):
    return {"when": when, "stage": stage, "error": error,
            "source": "bench/unattended.py: a held-out landscape's failure (synthetic)"}


def landscape_file(args, cls, seed, rules, out):
    """The model file of (cls, seed) with the extra failure rules; its path."""
    rng = random.Random("%s-%d" % (cls, seed))
    base = "pcie-4gpu-switch" if cls == "flat" else BASES[rng.randrange(len(BASES))]
    with open(os.path.join(args.src, "models", base + ".json")) as f:
        m = json.load(f)
    perturb(m, rng, 0.03 if cls == "flat" else 0.12)
    m["name"] = "held-%s-%d" % (cls, seed)
    m["failures"] = m["failures"] + rules
    with open(out, "w") as f:
        json.dump(m, f)
    return base


def choices():
    return [{"bytes": DECODE, "algo": a, "proto": p, "ctas": c}
            for a in ("Ring", "Tree", None) for p in ("LL", "LL128", "Simple", None)
            for c in (1, 2, 4, 8, 16, None) if (a, p, c) != (None, None, None)]


def outer_env(buff, nthreads):
    env = {}
    if buff:
        env["NCCL_BUFFSIZE"] = buff
    if nthreads:
        env["NCCL_NTHREADS"] = nthreads
    return env


def layer_factor(layer, env, nbytes):
    f = 1.0
    for r in (layer or {}).get("scale") or []:
        if r["bytes"] == nbytes and all(env.get(k) == v for k, v in r["env"].items()):
            f *= r["factor"]
    return f


def truth(args, model, tmp, layer=None):
    """Every deployment of the space at noise 0: a list of dicts (env, choice or None,
    ok, decode_us, guard_us, nccl) and NCCL's defaults' (decode_us, guard_us)."""
    chs = choices()
    rows = []
    base = [args.probe, "--model", model, "--noise", "0", "--bytes", "%d,%d" % (DECODE, GUARD),
            "--ops", "%d,1" % OPS]
    for buff in BUFFS:
        for nt in [None] + THREADS:
            env = outer_env(buff, nt)
            left = list(range(len(chs)))
            while True:
                sw = os.path.join(tmp, "oracle-sweep.json")
                with open(sw, "w") as f:
                    json.dump({"schema": "nccltune-sweep/1", "rounds": 1, "seed": 1,
                               "choices": [chs[i] for i in left]}, f)
                rep = probe_json(args, base + ["--sweep", sw],
                                 dict(env, NCCL_TUNER_PLUGIN=args.plugin))
                if rep.get("ok") or "sweep_in_flight" not in rep:
                    break
                bad = left.pop(rep["sweep_in_flight"])   # it ended the run: failed
                rows.append({"env": env, "choice": chs[bad], "ok": False,
                             "stage": rep.get("stage")})
            if not rep.get("ok"):   # the sizes' own cases fail: the whole setting does
                rows.append({"env": env, "choice": None, "ok": False, "stage": rep.get("stage")})
                continue
            res = {r["bytes"]: r for r in rep["results"]}
            g = res[GUARD]["us"]["median"] * layer_factor(layer, env, GUARD)
            fd = layer_factor(layer, env, DECODE)
            rows.append({"env": env, "choice": None, "ok": True, "guard_us": g,
                         "decode_us": res[DECODE]["us"]["median"] * OPS * fd,
                         "nccl": res[DECODE].get("nccl")})
            for e in rep["sweep"]:
                r = {"env": env, "choice": chs[left[e["index"]]], "ok": e["ok"], "guard_us": g}
                if e["ok"]:
                    r["decode_us"] = e["us"]["median"] * OPS * fd
                    r["nccl"] = e.get("nccl")
                else:
                    r["stage"] = e.get("stage")
                rows.append(r)
    d = probe_json(args, base, {})
    if not d.get("ok"):
        raise BenchError("%s: NCCL's defaults fail on the landscape" % model)
    res = {r["bytes"]: r["us"]["median"] for r in d["results"]}
    return rows, res[DECODE] * OPS, res[GUARD]


def is_flaky(flaky, env, nccl):
    return bool(flaky and nccl and nccl.get("algo") == flaky["algo"] and
                nccl.get("proto") == flaky["proto"] and env.get("NCCL_NTHREADS") == flaky["nthreads"])


def best(rows, guard0, flaky=None, safe=True):
    ok = [r for r in rows if r["ok"] and not is_flaky(flaky, r["env"], r.get("nccl"))
          and (not safe or r["guard_us"] <= GUARD_ALLOWED * guard0)]
    return min(ok, key=lambda r: r["decode_us"]) if ok else None


def build_landscape(args, cls, seed, tmp):
    """(model path, flaky condition or None, facts) of one held-out landscape."""
    path = os.path.join(tmp, "held-%s-%d.json" % (cls, seed))
    base = landscape_file(args, cls, seed, [], path)
    rows, dec0, guard0 = truth(args, path, tmp)
    top = best(rows, guard0)
    rules, flaky, scale = [], None, []
    rng = random.Random("rules-%s-%d" % (cls, seed))
    nt = top["env"].get("NCCL_NTHREADS") if top else None
    others = [t for t in THREADS if t != nt]
    pair = top.get("nccl") if top else None
    if cls in ("crash", "wrongsum", "flaky") and not pair:
        raise BenchError("%s-%d: no safe best to place failures near" % (cls, seed))
    if cls == "crash":   # the neighbouring thread counts of the optimum's
        i = THREADS.index(nt) if nt else len(THREADS)
        for t in THREADS[max(0, i - 1):i] + THREADS[i + 1:i + 2]:
            rules.append(rule({"algo": pair["algo"], "proto": pair["proto"],
                               "env": {"NCCL_NTHREADS": t}}, "capture",
                              "ncclAllReduce failed during CUDA graph capture: unhandled cuda "
                              "error (synthetic crash region)"))
    elif cls == "wrongsum":
        rules.append(rule({"algo": pair["algo"], "proto": pair["proto"],
                           "env": {"NCCL_NTHREADS": rng.choice(others)}}, "verify",
                          "wrong sums (synthetic, one thread count only)"))
    elif cls == "hang":
        rules.append(rule({"env": {"NCCL_NTHREADS": rng.choice(others)}}, "replay",
                          "no progress (synthetic hang at one thread count)"))
    elif cls == "flaky":
        flaky = {"algo": pair["algo"], "proto": pair["proto"], "nthreads": nt or "",
                 "p": FLAKY_P, "seed": seed}
    elif cls == "trap":
        var = rng.choice(["NCCL_BUFFSIZE", "NCCL_NTHREADS"])
        val = rng.choice(BUFFS[1:] if var == "NCCL_BUFFSIZE" else THREADS)
        gain, slow = rng.uniform(1.04, 1.12), (1.03, 1.10, 1.45)[seed % 3]
        scale = [{"env": {var: val}, "bytes": DECODE, "factor": 1 / gain},
                 {"env": {var: val}, "bytes": GUARD, "factor": slow}]
    layer = {"flaky": flaky, "scale": scale} if flaky or scale else None
    if rules or layer:
        landscape_file(args, cls, seed, rules, path)
        rows, dec0, guard0 = truth(args, path, tmp, layer)
    top = best(rows, guard0, flaky)
    fastest = best(rows, guard0, flaky, safe=False)
    rules_top = best([r for r in rows if not r["env"]], guard0, flaky)
    slow = sorted({json.dumps(r["env"], sort_keys=True) for r in rows
                   if r["ok"] and r["choice"] is None and r["guard_us"] > 1.05 * guard0})
    per_nt = {}
    for r in rows:
        if r["ok"] and r["choice"]:
            k = r["env"].get("NCCL_NTHREADS")
            if k not in per_nt or r["decode_us"] < per_nt[k]["decode_us"]:
                per_nt[k] = r
    picks = {(r["choice"]["algo"], r["choice"]["proto"], r["choice"]["ctas"]) for r in per_nt.values()}
    return path, layer, {
        "class": cls, "seed": seed, "base": base, "rules": rules, "flaky": flaky, "scale": scale,
        "defaults_us": dec0, "guard0_us": guard0,
        "best_safe_us": top["decode_us"] if top else dec0,
        "best_safe": {"env": top["env"], "choice": top["choice"]} if top else None,
        "best_gain": dec0 / top["decode_us"] if top else 1.0,
        "rules_gain": dec0 / rules_top["decode_us"] if rules_top else 1.0,
        "guard_slow_settings": slow,
        "trap": bool(fastest and fastest["guard_us"] > GUARD_ALLOWED * guard0),
        "interaction": len(picks) > 1}


# ---- sessions ----

def deployed_truth(args, model, env, layer):
    rep = probe_json(args, [args.probe, "--model", model, "--noise", "0", "--bytes",
                            "%d,%d" % (DECODE, GUARD), "--ops", "%d,1" % OPS], env)
    if not rep.get("ok"):
        return None
    res = {r["bytes"]: r for r in rep["results"]}
    return (res[DECODE]["us"]["median"] * OPS * layer_factor(layer, env, DECODE),
            res[GUARD]["us"]["median"] * layer_factor(layer, env, GUARD), res[DECODE].get("nccl"))


def one_session(args, land, strategy, budget, tmp):
    path, layer, facts = land
    flaky = (layer or {}).get("flaky")
    cls, seed = facts["class"], facts["seed"]
    d = os.path.join(tmp, "s-%s-%d-%s-%d" % (cls, seed, strategy, budget))
    probe = "%s --model %s --seed %d" % (args.probe, path, seed)
    if layer:
        lf = os.path.join(tmp, "layer-%s-%d.json" % (cls, seed))
        with open(lf, "w") as f:
            json.dump(layer, f)
        probe = "%s %s %s %s" % (sys.executable, args.layer, args.probe, lf) + \
            probe[len(args.probe):]
    cmd = [args.nt, "run", "--probe", probe, "--strategy", strategy, "--budget", str(budget),
           "--seed", str(seed), "--bytes", str(DECODE), "--ops", str(OPS), "--guard",
           str(GUARD), "--out", d, "--quiet"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode not in (0, 4):
        raise BenchError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr[-600:]))
    with open(os.path.join(d, "results.json")) as f:
        res = json.load(f)
    runs = sweeps = slow = 0
    with open(os.path.join(d, "journal.jsonl")) as f:
        for line in f:
            j = json.loads(line)
            runs += j.get("type") == "run"
            if j.get("type") == "run" and j.get("phase") == "sweep":
                sweeps += 1
                slow += json.dumps(j.get("env") or {}, sort_keys=True) in facts["guard_slow_settings"]
    verdict = res.get("verdict")
    env = {}
    if verdict == "recommended":
        with open(os.path.join(d, "exports", "env.json")) as f:
            env = json.load(f)["env"]
    t = deployed_truth(args, path, env, layer)
    row = {"class": cls, "seed": seed, "strategy": strategy, "budget": budget,
           "verdict": verdict, "env": env, "runs": runs, "wall_s": wall,
           "sweeps": sweeps, "sweeps_guard_slow": slow,
           "guards": (res.get("guards") or {}).get("verdict")}
    at_defaults = not any(k.startswith("NCCL_") for k in env)
    if t is None:
        row.update(unsafe=True, guard_ratio=None, regret=None, missed=False, true_us=None)
    else:
        dec, g, nccl = t
        row.update(unsafe=is_flaky(flaky, env, nccl), true_us=dec,
                   guard_ratio=g / facts["guard0_us"], regret=dec / facts["best_safe_us"] - 1,
                   missed=at_defaults and facts["best_gain"] >= GAIN_MIN)
    row["at_defaults"] = at_defaults
    if not args.keep:
        shutil.rmtree(d, ignore_errors=True)
    return row


def pct(v):
    return "-" if v is None else "%.1f%%" % (100 * v)


def report(args, lands, rows, budgets, strategies):
    print("**MODEL numbers, not measurements.** Held-out landscapes: %d (%s x %d seeds from %d)."
          % (len(lands), ", ".join(args.classes), args.seeds, SEED0))
    print("")
    print("| class | seed | base model | defaults us/step | best safe gain | per-size rules alone | trap | interaction |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- | --- |")
    for _, _, f in lands:
        print("| %s | %d | %s | %.1f | %.3fx | %.3fx | %s | %s |" % (
            f["class"], f["seed"], f["base"], f["defaults_us"], f["best_gain"], f["rules_gain"],
            "yes" if f["trap"] else "no", "yes" if f["interaction"] else "no"))
    print("")
    print("| budget | strategy | sessions | processes (median, max) | guard > 2% shipped | "
          "unsafe shipped | at defaults, >= 5% missed | regret median | regret p90 | "
          "regret worst | recommended | sweeps in guard-slow settings | s/session (median) |")
    print("| ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    summary = []
    for b in budgets:
        for s in strategies:
            sel = [r for r in rows if r["budget"] == b and r["strategy"] == s]
            if not sel:
                continue
            reg = sorted(r["regret"] for r in sel if r["regret"] is not None)
            gbad = [r for r in sel if r["guard_ratio"] is not None and r["guard_ratio"] > GUARD_ALLOWED]
            row = {"budget": b, "strategy": s, "sessions": len(sel),
                   "guard_regressions": len(gbad),
                   "unsafe": sum(r["unsafe"] for r in sel),
                   "missed": sum(r["missed"] for r in sel),
                   "regret_median": statistics.median(reg) if reg else None,
                   "regret_p90": reg[int(0.9 * (len(reg) - 1))] if reg else None,
                   "regret_worst": reg[-1] if reg else None,
                   "recommended": sum(r["verdict"] == "recommended" for r in sel),
                   "by_class": {c: {"guard": sum(1 for r in gbad if r["class"] == c),
                                    "missed": sum(r["missed"] for r in sel if r["class"] == c),
                                    "unsafe": sum(r["unsafe"] for r in sel if r["class"] == c)}
                                for c in args.classes}}
            row["sweeps"] = sum(r["sweeps"] for r in sel)
            row["sweeps_guard_slow"] = sum(r["sweeps_guard_slow"] for r in sel)
            summary.append(row)
            print("| %d | %s | %d | %d, %d | %d | %d | %d | %s | %s | %s | %d | %d of %d | %.2f |" % (
                b, s, len(sel), statistics.median(r["runs"] for r in sel),
                max(r["runs"] for r in sel), row["guard_regressions"], row["unsafe"],
                row["missed"], pct(row["regret_median"]), pct(row["regret_p90"]),
                pct(row["regret_worst"]), row["recommended"], row["sweeps_guard_slow"],
                row["sweeps"], statistics.median(r["wall_s"] for r in sel)))
    print("")
    print("Bad outcomes by class (guard > 2% / missed >= 5% / unsafe), per budget and strategy:")
    print("")
    print("| budget | strategy | " + " | ".join(args.classes) + " |")
    print("| ---: | --- |" + " --- |" * len(args.classes))
    for row in summary:
        print("| %d | %s | " % (row["budget"], row["strategy"]) + " | ".join(
            "%d / %d / %d" % (row["by_class"][c]["guard"], row["by_class"][c]["missed"],
                              row["by_class"][c]["unsafe"]) for c in args.classes) + " |")
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--seeds", type=int, default=6, help="landscapes per class")
    ap.add_argument("--budgets", default="20,60")
    ap.add_argument("--strategies", default="bo,random")
    ap.add_argument("--classes", default=",".join(CLASSES))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the session folders")
    ap.add_argument("--json", help="also write every landscape, session and the summary here")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.budgets, args.classes = 1, "20", "crash,flaky"
    try:
        budgets = [int(b) for b in args.budgets.split(",")]
    except ValueError:
        ap.error("--budgets: a list of integers")
    strategies = args.strategies.split(",")
    args.classes = args.classes.split(",")
    for c in args.classes:
        if c not in CLASSES:
            ap.error("--classes: '%s' is not one of %s" % (c, ", ".join(CLASSES)))
    if args.seeds < 1:
        ap.error("--seeds: at least 1")
    args.src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args.nt = os.path.abspath(os.path.join(args.build, "cli", "nccltune"))
    args.probe = os.path.abspath(os.path.join(args.build, "models", "nccltune-model-probe"))
    args.plugin = os.path.abspath(os.path.join(args.build, "plugin", "libnccl-tuner-nccltune.so"))
    for f in (args.nt, args.probe, args.plugin):
        if not os.path.exists(f):
            print("unattended.py: %s is not built" % f, file=sys.stderr)
            return 2
    tmp = tempfile.mkdtemp(prefix="nccltune-unattended-")
    try:
        args.layer = os.path.join(tmp, "layer.py")
        with open(args.layer, "w") as f:
            f.write(LAYER)
        t0 = time.monotonic()
        lands = []
        for c in args.classes:
            for s in range(SEED0, SEED0 + args.seeds):
                lands.append(build_landscape(args, c, s, tmp))
        print("unattended: %d landscapes in %.1f s" % (len(lands), time.monotonic() - t0),
              file=sys.stderr)
        jobs = [(l, s, b) for l in lands for b in budgets for s in strategies]
        rows = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            futs = [ex.submit(one_session, args, *j, tmp) for j in jobs]
            for i, fu in enumerate(futs):
                rows.append(fu.result())
                if (i + 1) % 20 == 0:
                    print("unattended: %d/%d sessions" % (i + 1, len(jobs)), file=sys.stderr)
        summary = report(args, lands, rows, budgets, strategies)
        print("", file=sys.stderr)
        print("unattended: %d sessions, %.1f s in all" % (len(rows), time.monotonic() - t0),
              file=sys.stderr)
        if args.json:
            with open(args.json + ".tmp", "w") as f:
                json.dump({"landscapes": [l[2] for l in lands], "sessions": rows,
                           "summary": summary}, f, indent=1)
            os.replace(args.json + ".tmp", args.json)
    except BenchError as e:
        print("unattended.py: %s" % e, file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print("unattended: the session folders are kept in %s" % tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
