#!/usr/bin/env python3
"""session_regret.py - what the PRODUCT recommends on the built-in machine MODELS: whole
`nccltune run --model M` sessions (search, then the final phase that re-measures the
finalists interleaved with the baseline and picks by the strategy's ranking), side by side
per strategy at the same budget. Every number it prints is a MODEL number.

Per model: the exhaustive optimum of the default space comes from bench-search-efficiency's
landscape table (its scan of every point, noise 0; its configuration is re-evaluated with
the model probe at noise 0 and must agree). Per (model, strategy, seed): one session;
results.json's best.env (absent or empty: NCCL's defaults) is evaluated with
`nccltune-model-probe --noise 0` - its true time per step - and regret = true / optimum - 1.
The workload is the in-process benchmark's: 122 all-reduces of 43,008 B bf16 per step on
every model (pcie-4gpu-switch included: at that size its defaults are optimal, the
negative control).

Output: Markdown on stdout, progress on stderr. Exit 0, 1 on a failure (a session that
could not run, a probe that failed, an optimum that disagrees), 2 on bad options."""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = ["pcie-gen5-8gpu", "nvlink-h200-8gpu", "pcie-4gpu-switch", "pcie-2x4-islands",
          "h200-nvlink-2gpu"]
QUICK_MODELS = ["pcie-gen5-8gpu", "pcie-2x4-islands"]
STRATEGIES = ["bo", "random", "nm"]
BYTES, OPS, DTYPE = 43008, 122, "bf16"
EPS = 1e-9


class BenchError(Exception):
    pass


def clean_env(extra=None):
    """The caller's environment without NCCL_* (a session would pin them, the probe read
    them), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    env.update(extra or {})
    return env


def true_us(probe, model, nccl_env):
    """Noise-free time per step of `nccl_env` (dict) on `model`; None when the
    configuration fails on the modelled machine."""
    cmd = [probe, "--model", model, "--noise", "0", "--bytes", str(BYTES),
           "--ops", str(OPS), "--dtype", DTYPE]
    p = subprocess.run(cmd, env=clean_env(nccl_env), capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise BenchError("%s with %s: exit %d: %s" % (" ".join(cmd), nccl_env, p.returncode,
                                                      p.stderr.strip()))
    try:
        rep = json.loads(p.stdout)
    except ValueError as e:
        raise BenchError("%s: report is not JSON (%s)" % (" ".join(cmd), e))
    if not rep.get("ok"):
        return None
    return sum(OPS * r["us"]["median"] for r in rep["results"] if r["bytes"] == BYTES)


def parse_env(text):
    """'NCCL_A=x NCCL_B=y' -> dict."""
    env = {}
    for tok in text.split():
        name, sep, value = tok.partition("=")
        if not sep or not name.startswith("NCCL_"):
            raise BenchError("optimum configuration: cannot read '%s'" % tok)
        env[name] = value
    return env


def read_landscapes(text, source):
    """bench-search-efficiency's landscape table -> {model: (optimum us/step, env)}."""
    out = {}
    row = re.compile(r"^\| (\S+) \|(?: [0-9]+ \|){5} ([0-9.]+) \| `([^`]*)` \|")
    for line in text.splitlines():
        m = row.match(line)
        if m:
            out[m.group(1)] = (float(m.group(2)), parse_env(m.group(3)))
    if not out:
        raise BenchError("%s: no landscape table found" % source)
    return out


def optimum(args, model, landscapes):
    """(optimum us/step at full precision, its env): the landscape table's point,
    re-evaluated with the model probe, which must agree with the table."""
    if model not in landscapes:
        cmd = [args.search, "--model", model, "--strategy", "random", "--seeds", "1",
               "--budget", "2"]
        p = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True)
        if p.returncode != 0:
            raise BenchError("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                                  p.stderr.strip()[-500:]))
        landscapes.update(read_landscapes(p.stdout, " ".join(cmd)))
        if model not in landscapes:
            raise BenchError("%s printed no landscape for %s" % (" ".join(cmd), model))
    table_us, env = landscapes[model]
    us = true_us(args.probe, model, env)
    if us is None or abs(us - table_us) > 0.05 + 1e-6 * table_us:
        raise BenchError("%s: the optimum %s is %.1f us/step in-process but %s by the model "
                         "probe" % (model, env, table_us, us))
    return us, env


def one_session(args, model, strategy, seed, tmp):
    out = os.path.join(tmp, "%s-%s-%d" % (model, strategy, seed))
    cmd = [args.cli, "run", "--model", model, "--strategy", strategy, "--budget",
           str(args.budget), "--seed", str(seed), "--bytes", str(BYTES), "--ops", str(OPS),
           "--dtype", DTYPE, "--out", out, "--quiet"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True)
    wall = time.monotonic() - t0
    res = {"model": model, "strategy": strategy, "seed": seed, "wall": wall, "rc": p.returncode,
           "crashed": p.returncode < 0 or p.returncode >= 128, "cmd": " ".join(cmd)}
    if p.returncode == 4 or res["crashed"]:
        # no working configuration at all, or the session died: no answer from the product
        res.update(env=None, true=None, estimate=None)
        if res["crashed"]:
            print("session_regret: CRASHED (status %d): %s" % (p.returncode, res["cmd"]),
                  file=sys.stderr)
        return res
    if p.returncode != 0:
        raise BenchError("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                              (p.stderr or p.stdout).strip()[-800:]))
    path = os.path.join(out, "results.json")
    try:
        with open(path) as f:
            results = json.load(f)
    except (OSError, ValueError) as e:
        raise BenchError("%s: %s" % (path, e))
    best = results.get("best") or {}
    env = best.get("env") or {}
    res["env"] = env
    res["estimate"] = best.get("objective_us")
    res["true"] = true_us(args.probe, model, env)
    shutil.rmtree(out, ignore_errors=True)
    return res


def pct(v):
    return "none" if v is None else "%.1f%%" % (100.0 * v)


def ratio(rnd, mine):
    """Like bench-search-efficiency's fmt_ratio: random's (or nm's) regret / bo's."""
    if rnd is None and mine is None:
        return "n/a"
    if mine is None:
        return "0"
    if rnd is None:
        return "inf"
    if mine <= EPS and rnd <= EPS:
        return "both 0"
    if mine <= EPS:
        return "inf (0 vs %.1f%%)" % (100.0 * rnd)
    if rnd <= EPS:
        return "0 (%.1f%% vs 0)" % (100.0 * mine)
    return "%.2fx" % (rnd / mine)


def median(xs):
    """Median with 'no answer' (None) counted as the worst."""
    if any(x is None for x in xs):
        ys = sorted(xs, key=lambda x: float("inf") if x is None else x)
        mid = ys[(len(ys) - 1) // 2:len(ys) // 2 + 1]
        return None if any(x is None for x in mid) else statistics.mean(mid)
    return statistics.median(xs)


def summarise(rows, opt_us):
    """Statistics over the sessions that did not crash (a crash is a bug, listed apart, not
    a strategy's answer); exit 4 (nothing worked) counts as no answer, the worst."""
    regrets, est = [], []
    crashed = [r["seed"] for r in rows if r["crashed"]]
    rows = [r for r in rows if not r["crashed"]]
    if not rows:
        return {"median": None, "worst": None, "mean": None, "within5": 0, "at_opt": 0,
                "n": 0, "est": None, "wall": float("nan"), "noanswer": 0, "crashed": crashed}
    for r in rows:
        if r["true"] is None:
            regrets.append(None)
            continue
        g = r["true"] / opt_us - 1.0
        if g < -1e-6:
            raise BenchError("%s %s seed %d: %s is %.3f us/step, below the exhaustive optimum "
                             "%.3f: the optimum is wrong" % (r["model"], r["strategy"], r["seed"],
                                                            r["env"], r["true"], opt_us))
        regrets.append(max(g, 0.0))
        if r["estimate"]:
            est.append(r["estimate"] / r["true"] - 1.0)
    ok = [g for g in regrets if g is not None]
    return {
        "median": median(regrets),
        "worst": None if len(ok) < len(regrets) else max(ok),
        "mean": None if len(ok) < len(regrets) else statistics.mean(ok),
        "within5": sum(1 for g in ok if g <= 0.05 + EPS),
        "at_opt": sum(1 for g in ok if g <= 1e-6),
        "n": len(regrets),
        "est": statistics.median(est) if est else None,
        "wall": statistics.median(r["wall"] for r in rows),
        "noanswer": len(regrets) - len(ok),
        "crashed": crashed,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build-bench", help="meson build folder")
    ap.add_argument("--seeds", type=int, default=10, help="seeds 1..N (default 10)")
    ap.add_argument("--budget", type=int, default=60, help="runs per session (default 60)")
    ap.add_argument("--model", action="append", help="model (repeatable; default: all four)")
    ap.add_argument("--strategy", action="append",
                    help="strategy (repeatable; default: bo random nm)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="sessions at once (default: the CPU count)")
    ap.add_argument("--quick", action="store_true", help="3 seeds, 2 models")
    ap.add_argument("--landscapes", metavar="FILE",
                    help="bench-search-efficiency output to take the optima from (default: "
                         "run it per model, ~1 s each)")
    args = ap.parse_args()
    if args.seeds < 1 or args.seeds > 1000 or args.budget < 2 or args.jobs < 1:
        ap.error("--seeds must be 1..1000, --budget >= 2, --jobs >= 1")
    if args.quick:
        args.seeds = min(args.seeds, 3)
        models = args.model or QUICK_MODELS
    else:
        models = args.model or MODELS
    strategies = args.strategy or STRATEGIES
    args.cli = os.path.join(args.build, "cli", "nccltune")
    args.probe = os.path.join(args.build, "models", "nccltune-model-probe")
    args.search = os.path.join(args.build, "bench", "bench-search-efficiency")
    for p in (args.cli, args.probe, args.search):
        if not os.access(p, os.X_OK):
            print("session_regret: %s is not built" % p, file=sys.stderr)
            return 1

    t0 = time.monotonic()
    try:
        landscapes = {}
        if args.landscapes:
            with open(args.landscapes) as f:
                landscapes = read_landscapes(f.read(), args.landscapes)
        opt = {m: optimum(args, m, landscapes) for m in models}
        tmp = tempfile.mkdtemp(prefix="session_regret.")
        try:
            jobs = [(m, s, k) for m in models for s in strategies
                    for k in range(1, args.seeds + 1)]
            print("session_regret: %d sessions (%d models x %d strategies x %d seeds, "
                  "budget %d) on %d jobs" % (len(jobs), len(models), len(strategies),
                                             args.seeds, args.budget, args.jobs),
                  file=sys.stderr)
            with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
                futs = [pool.submit(one_session, args, m, s, k, tmp) for m, s, k in jobs]
                rows = [f.result() for f in futs]
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        summ = {}
        for m in models:
            for s in strategies:
                summ[m, s] = summarise([r for r in rows if r["model"] == m
                                        and r["strategy"] == s], opt[m][0])
    except (BenchError, OSError) as e:
        print("session_regret: %s" % e, file=sys.stderr)
        return 1
    wall = time.monotonic() - t0

    n = args.seeds
    print("### Regret of the session's recommendation (MODEL numbers; whole `nccltune run "
          "--model` sessions, budget %d runs in all; seeds 1..%d)\n" % (args.budget, n))
    print("| model | strategy | median regret | worst seed | mean regret | seeds <=5% | "
          "seeds at the optimum | session's estimate vs true (median) | no answer | "
          "crashed (excluded) | s wall/session (median) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for m in models:
        for s in strategies:
            x = summ[m, s]
            print("| %s | %s | %s | %s | %s | %d/%d | %d/%d | %s | %d | %d | %.2f |" % (
                m, s, pct(x["median"]), pct(x["worst"]), pct(x["mean"]), x["within5"],
                x["n"], x["at_opt"], x["n"],
                "-" if x["est"] is None else "%+.1f%%" % (100 * x["est"]),
                x["noanswer"], len(x["crashed"]), x["wall"]))
    crashed = [r for r in rows if r["crashed"]]
    noans = sum(summ[k]["noanswer"] for k in summ)
    if noans:
        print("\nA session that found nothing working (exit 4) has no answer: it counts as the "
              "worst in the median, and leaves worst seed and mean undefined (none).")
    if crashed:
        print("\n**%d session(s) CRASHED** (a bug in nccltune, not a model figure; left out of "
              "every statistic here, so \"x/N\" counts only the sessions that finished):\n" %
              len(crashed))
        for r in crashed:
            how = ("signal %d" % -r["rc"]) if r["rc"] < 0 else ("exit %d" % r["rc"])
            print("* %s: `%s`" % (how, r["cmd"].replace(os.path.join(tmp, ""), "TMP/")))
    others = [s for s in strategies if s != "bo"]
    if "bo" in strategies and others:
        print("\n### Regret ratio against bo (MODEL numbers; the other strategy's regret / "
              "bo's; > 1: bo is better)\n")
        print("| model | " + " | ".join("%s/bo, medians | %s/bo, means" % (s, s)
                                       for s in others) + " |")
        print("| --- |" + " ---: | ---: |" * len(others))
        for m in models:
            b = summ[m, "bo"]
            cells = []
            for s in others:
                cells += [ratio(summ[m, s]["median"], b["median"]),
                          ratio(summ[m, s]["mean"], b["mean"])]
            print("| %s | %s |" % (m, " | ".join(cells)))
    if "bo" in strategies and "random" in strategies:
        print("\n### Targets, whole sessions (MODEL numbers; at %d runs)\n" % args.budget)
        print("| model | bo median regret <= 5% | bo >= 2x lower regret than random "
              "(medians) | the same on means |")
        print("| --- | --- | --- | --- |")
        for m in models:
            b, r = summ[m, "bo"], summ[m, "random"]

            def verdict(rv, bv):
                if rv is not None and bv is not None and rv <= EPS and bv <= EPS:
                    return "n/a: both at the optimum"
                met = bv is not None and (rv is None or bv <= EPS or rv / bv >= 2.0)
                return "%s (%s)" % ("met" if met else "MISSED", ratio(rv, bv))

            within = b["median"] is not None and b["median"] <= 0.05 + EPS
            print("| %s | %s (%s) | %s | %s |" % (m, "met" if within else "MISSED",
                                                 pct(b["median"]),
                                                 verdict(r["median"], b["median"]),
                                                 verdict(r["mean"], b["mean"])))
    print("\nsession_regret: %d models x %d strategies x %d seeds, budget %d, %.1f s wall "
          "on %d job(s)" % (len(models), len(strategies), n, args.budget, wall, args.jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
