#!/usr/bin/env python3
"""sweep_equivalence.py - does one sweeping probe process (`--sweep FILE`) measure the same
latencies, and rank the choices the same, as a fresh process per choice deployed the way a
result runs (nccltune's tuner plugin + a table with that one rule)? (issue 17 / issue 19
step 2; docs/probe-protocol.md, "Sweep").

One command: given a probe (nccltune-probe, or nccltune-model-probe with --model NAME), the
sizes and >= 20 choices (default: every algo x proto x ctas of Ring/Tree x LL/LL128/Simple x
1/2/4/8 at the first size, 24 choices; or --sweep-file FILE), it runs R repeats; each repeat
runs, in an order shuffled per repeat (interleaved), ONE sweep process holding every choice
and one fresh plain process per choice with NCCL_TUNER_PLUGIN + NCCLTUNE_TUNER_TABLE (a
one-rule table, nccltune-tuner/1). Per choice it prints the sweep median and the fresh median
(medians over repeats of each run's median), their ratio (geometric mean over repeats of
sweep/fresh) with a 95% t interval over the repeats' log ratios, and whether what NCCL ran
agrees; per size, the Spearman rank correlation of the two rankings, the inversions and the
inversions beyond noise (a pair both methods order with disjoint 95% intervals, oppositely).
A choice the sweep reports not ok (not available here, wrong sum) is listed with its stage
and left out of the ratios and rankings.

A choice the sweep measured but whose fresh process fails is listed as such (stage "fresh:
<stage>"), in sweep_ok_fresh_failed, and makes the verdict disagree; a failed sweep process
ends the run (exit 1).

Output: a table on stdout (--json FILE writes the same as JSON, schema
nccltune-sweep-equivalence/1); progress on stderr. Exit 0 when every run worked (whatever the
verdict), 1 when a probe run failed, 2 on bad options. The model probe's numbers are MODEL
numbers ("source": "model" in its reports, echoed here)."""
import argparse
import json
import math
import statistics
import os
import random
import subprocess
import sys
import tempfile
import time

ALGOS = ["Ring", "Tree"]
PROTOS = ["LL", "LL128", "Simple"]
CTAS = [1, 2, 4, 8]
# Two-sided 95% Student t quantiles, df 1..30 (df above 30: 1.96 is within 4%).
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
       2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
       2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


class RunError(Exception):
    pass


def t95(df):
    """The two-sided 95% t quantile for df degrees of freedom (df >= 1)."""
    return T95[df - 1] if df <= len(T95) else 1.96


median = statistics.median


def log_interval(xs):
    """Mean of log(xs) and its 95% t half-width (None with fewer than two values)."""
    logs = [math.log(x) for x in xs]
    m = sum(logs) / len(logs)
    if len(logs) < 2:
        return m, None
    var = sum((v - m) ** 2 for v in logs) / (len(logs) - 1)
    return m, t95(len(logs) - 1) * math.sqrt(var / len(logs))


def ranks(xs):
    """Average ranks (1-based) of xs, ties sharing their mean rank."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return r


def spearman(a, b):
    """Spearman's rho of two equal-length lists (None below 3 values or with no spread)."""
    if len(a) < 3:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    if va == 0 or vb == 0:
        return None
    return cov / math.sqrt(va * vb)


def parse_list(text, what, conv=int):
    try:
        vals = [conv(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}: '{text}' is not a comma-separated list")
    if not vals:
        raise argparse.ArgumentTypeError(f"{what}: empty")
    return vals


def default_choices(nbytes):
    return [{"bytes": nbytes, "algo": a, "proto": p, "ctas": c}
            for a in ALGOS for p in PROTOS for c in CTAS]


def load_choices(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise RunError(f"--sweep-file {path}: {e}")
    if not isinstance(doc, dict) or doc.get("schema") != "nccltune-sweep/1" or \
            not isinstance(doc.get("choices"), list):
        raise RunError(f"--sweep-file {path}: not a nccltune-sweep/1 file with choices")
    return [{"bytes": c["bytes"], "algo": c.get("algo"), "proto": c.get("proto"),
             "ctas": c.get("ctas") or 0} for c in doc["choices"]]


def table_text(choice):
    """The one-rule nccltune-tuner/1 table deploying a choice (docs/formats.md)."""
    algo = (choice["algo"] or "*").lower()
    proto = (choice["proto"] or "*").lower()
    return ("nccltune-tuner/1\n# coll nranks nnodes min_bytes max_bytes algo proto ctas chunk\n"
            f"allreduce * * {choice['bytes']} {choice['bytes']} {algo} {proto} "
            f"{choice['ctas'] or 0} 0\n")


def choice_label(c):
    return f"{c['bytes']} {c['algo'] or '*'}/{c['proto'] or '*'}/{c['ctas'] or '*'}"


class Runner:
    """Runs probe processes and records each one's wall time and report."""

    def __init__(self, opts, work):
        self.opts = opts
        self.work = work
        self.count = 0
        self.log = []

    def command(self, extra):
        cmd = [self.opts.probe]
        if self.opts.model:
            cmd += ["--model", self.opts.model]
        return cmd + list(self.opts.probe_arg) + extra

    def run(self, kind, args, env_extra, allow_fail=False):
        """One probe run: (report, wall seconds). A failure report raises RunError unless
        allow_fail (then the report, ok false, is returned); no report always raises."""
        env = dict(os.environ)
        env.update(env_extra)
        env["NCCLTUNE_RUN"] = str(self.count)
        self.count += 1
        cmd = self.command(args)
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                               timeout=self.opts.timeout)
        except subprocess.TimeoutExpired:
            raise RunError(f"{kind} run timed out after {self.opts.timeout} s: {' '.join(cmd)}")
        wall = time.monotonic() - t0
        try:
            rep = json.loads(p.stdout)
        except ValueError:
            raise RunError(f"{kind} run (exit {p.returncode}) printed no report: "
                           f"{' '.join(cmd)}\n{p.stderr[-2000:]}")
        self.log.append({"kind": kind, "wall_s": wall, "phases_s": rep.get("phases_s")})
        if (p.returncode != 0 or not rep.get("ok")) and allow_fail and "stage" in rep:
            return dict(rep, ok=False), wall
        if p.returncode != 0 or not rep.get("ok"):
            raise RunError(f"{kind} run failed (exit {p.returncode}, stage "
                           f"{rep.get('stage')}): {rep.get('error')}\n  command: {' '.join(cmd)}")
        return rep, wall


def workload_args(opts, sizes):
    ops = [opts.ops_of[b] for b in sizes]
    return ["--bytes", ",".join(str(b) for b in sizes), "--ops", ",".join(str(o) for o in ops),
            "--iters", str(opts.iters)]


def run_repeat(runner, opts, choices, r, sweep_path, tables):
    """One repeat: the sweep process and a fresh process per choice, in a shuffled order.
    Returns (sweep entries by index, fresh result by index)."""
    order = ["sweep"] + list(range(len(choices)))
    random.Random(opts.seed * 1000003 + r).shuffle(order)
    sweep_entries, fresh = None, {}
    env_plugin = {"NCCL_TUNER_PLUGIN": opts.plugin}
    for item in order:
        if item == "sweep":
            sweep_file = os.path.join(runner.work, f"sweep-{r}.json")
            with open(sweep_path) as f:
                doc = json.load(f)
            doc["seed"] = opts.seed + r
            with open(sweep_file, "w") as f:
                json.dump(doc, f)
            rep, _ = runner.run("sweep", workload_args(opts, opts.sizes) +
                                ["--sweep", sweep_file], env_plugin)
            entries = rep.get("sweep")
            if not isinstance(entries, list) or len(entries) != len(choices):
                raise RunError(f"sweep run: {len(entries or [])} sweep entries for "
                               f"{len(choices)} choices")
            sweep_entries = entries
        else:
            c = choices[item]
            env = dict(env_plugin, NCCLTUNE_TUNER_TABLE=tables[item])
            rep, _ = runner.run("fresh", workload_args(opts, [c["bytes"]]), env, allow_fail=True)
            fresh[item] = rep["results"][0] if rep.get("ok") else \
                {"failed": rep.get("stage"), "error": rep.get("error")}
    print(f"sweep_equivalence: repeat {r + 1}/{opts.repeats} done ({runner.count} runs)",
          file=sys.stderr)
    return sweep_entries, fresh


def same_decision(a, b):
    if not a or not b:
        return None
    def norm(v):
        return v.lower() if isinstance(v, str) else v
    return all(norm(a.get(k)) == norm(b.get(k)) for k in ("algo", "proto", "ctas"))


def summarise(opts, choices, repeats, source):
    rows = []
    for i, c in enumerate(choices):
        row = {"index": i, "bytes": c["bytes"], "algo": c["algo"], "proto": c["proto"],
               "ctas": c["ctas"] or 0}
        entries = [rep[0][i] for rep in repeats]
        bad = [e for e in entries if not e.get("ok")]
        if bad:
            row.update(available=False, stage=bad[0].get("stage"), error=bad[0].get("error"))
            rows.append(row)
            continue
        fbad = [rep[1][i] for rep in repeats if "failed" in rep[1][i]]
        if fbad:
            # The sweep measured it but a deployed process fails: a disagreement to report.
            row.update(available=False, stage="fresh: " + str(fbad[0]["failed"]),
                       error=fbad[0]["error"], sweep_ok_fresh_failed=True)
            rows.append(row)
            continue
        s_us = [e["us"]["median"] for e in entries]
        f_us = [rep[1][i]["us"]["median"] for rep in repeats]
        m, h = log_interval([s / f for s, f in zip(s_us, f_us)])
        sm, sh = log_interval(s_us)
        fm, fh = log_interval(f_us)
        dec_s = entries[0].get("nccl")
        dec_f = repeats[0][1][i].get("nccl")
        row.update(available=True, sweep_us=s_us, fresh_us=f_us, sweep_median=median(s_us),
                   fresh_median=median(f_us), ratio=math.exp(m),
                   ci95=[math.exp(m - h), math.exp(m + h)] if h is not None else None,
                   sweep_log_ci=[sm - (sh or 0), sm + (sh or 0)],
                   fresh_log_ci=[fm - (fh or 0), fm + (fh or 0)],
                   nccl_sweep=dec_s, nccl_fresh=dec_f, same_nccl=same_decision(dec_s, dec_f))
        rows.append(row)
    rankings = []
    for b in opts.sizes:
        ok = [r for r in rows if r["bytes"] == b and r.get("available")]
        if not ok:
            continue
        a = [math.exp(sum(r["sweep_log_ci"]) / 2) for r in ok]
        f = [math.exp(sum(r["fresh_log_ci"]) / 2) for r in ok]
        inv, sig, pairs = 0, [], 0
        for x in range(len(ok)):
            for y in range(x + 1, len(ok)):
                pairs += 1
                if (a[x] - a[y]) * (f[x] - f[y]) < 0:
                    inv += 1
                    rx, ry = ok[x], ok[y]
                    apart_s = rx["sweep_log_ci"][1] < ry["sweep_log_ci"][0] or \
                        ry["sweep_log_ci"][1] < rx["sweep_log_ci"][0]
                    apart_f = rx["fresh_log_ci"][1] < ry["fresh_log_ci"][0] or \
                        ry["fresh_log_ci"][1] < rx["fresh_log_ci"][0]
                    if apart_s and apart_f:
                        sig.append([rx["index"], ry["index"]])
        best_s = ok[min(range(len(ok)), key=lambda k: a[k])]["index"]
        best_f = ok[min(range(len(ok)), key=lambda k: f[k])]["index"]
        rankings.append({"bytes": b, "choices": len(ok), "pairs": pairs,
                         "spearman": spearman(a, f), "inversions": inv,
                         "inversions_beyond_noise": sig, "best_sweep": best_s,
                         "best_fresh": best_f, "agree": not sig})
    avail = [r for r in rows if r.get("available")]
    outside = [r["index"] for r in avail if r["ci95"] and not r["ci95"][0] <= 1 <= r["ci95"][1]]
    fresh_failed = [r["index"] for r in rows if r.get("sweep_ok_fresh_failed")]
    return {"schema": "nccltune-sweep-equivalence/1", "source": source,
            "sweep_ok_fresh_failed": fresh_failed,
            "probe": opts.probe, "model": opts.model, "sizes": opts.sizes,
            "ops": [opts.ops_of[b] for b in opts.sizes], "iters": opts.iters,
            "rounds": opts.rounds, "repeats": opts.repeats, "choices": rows,
            "available": len(avail), "ratio_outside_1": outside, "rankings": rankings,
            "agree": all(k["agree"] for k in rankings) and bool(rankings) and not fresh_failed}


def fmt(x, spec=".3f"):
    return "-" if x is None else format(x, spec)


def print_table(doc, out):
    src = doc["source"]
    print(f"# sweep vs fresh process ({src} numbers; {doc['repeats']} repeats, "
          f"--iters {doc['iters']}, sweep rounds {doc['rounds']})", file=out)
    print(f"{'choice':<28} {'sweep us':>10} {'fresh us':>10} {'ratio':>7} {'95% interval':>17}"
          f"  nccl", file=out)
    for r in doc["choices"]:
        lab = choice_label(r)
        if not r.get("available"):
            print(f"{lab:<28} {'not ok: ' + str(r.get('stage')):>29}  {r.get('error')}", file=out)
            continue
        ci = r["ci95"]
        cis = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-"
        same = {True: "same", False: "DIFFERS", None: "unknown"}[r["same_nccl"]]
        print(f"{lab:<28} {r['sweep_median']:>10.3f} {r['fresh_median']:>10.3f} "
              f"{r['ratio']:>7.3f} {cis:>17}  {same}", file=out)
    for k in doc["rankings"]:
        print(f"ranking at {k['bytes']} B: {k['choices']} choices, Spearman "
              f"{fmt(k['spearman'])}, {k['inversions']}/{k['pairs']} pairs inverted, "
              f"{len(k['inversions_beyond_noise'])} beyond noise "
              f"{k['inversions_beyond_noise'] or ''}; best: sweep {k['best_sweep']}, "
              f"fresh {k['best_fresh']}: {'AGREE' if k['agree'] else 'DISAGREE'}", file=out)
    print(f"ratio interval excludes 1 for choices: {doc['ratio_outside_1'] or 'none'}", file=out)
    if doc["sweep_ok_fresh_failed"]:
        print(f"DISAGREE: ok in the sweep but failed in a fresh process: "
              f"{doc['sweep_ok_fresh_failed']}", file=out)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--probe", required=True, help="nccltune-probe or nccltune-model-probe")
    ap.add_argument("--model", help="the model probe's --model NAME")
    ap.add_argument("--plugin", required=True, help="libnccl-tuner-nccltune.so (a path)")
    ap.add_argument("--bytes", default="43008", type=lambda s: parse_list(s, "--bytes"))
    ap.add_argument("--ops", default="122", type=lambda s: parse_list(s, "--ops"))
    ap.add_argument("--sweep-file", help="nccltune-sweep/1 file with the choices "
                    "(default: Ring/Tree x LL/LL128/Simple x 1/2/4/8 CTAs at the first size)")
    ap.add_argument("--repeats", type=int, default=5, help="R (>= 2) [5]")
    ap.add_argument("--iters", type=int, default=200, help="timed replays per size [200]")
    ap.add_argument("--rounds", type=int, default=5, help="the sweep's rounds [5]")
    ap.add_argument("--seed", type=int, default=1, help="order and sweep seeds [1]")
    ap.add_argument("--min-choices", type=int, default=20, help="refuse fewer choices [20]")
    ap.add_argument("--probe-arg", action="append", default=[],
                    help="one more argument for every probe run (repeatable; "
                    "--probe-arg=--launch --probe-arg=all)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per probe run [300]")
    ap.add_argument("--work", help="keep the sweep files and tables here")
    ap.add_argument("--json", help="also write the summary as JSON here")
    o = ap.parse_args(argv)
    if o.repeats < 2:
        ap.error("--repeats must be at least 2 (an interval needs two repeats)")
    if len(o.ops) not in (1, len(o.bytes)):
        ap.error(f"--ops: {len(o.ops)} values for {len(o.bytes)} --bytes sizes")
    o.sizes = o.bytes
    o.ops_of = {b: (o.ops[0] if len(o.ops) == 1 else o.ops[i]) for i, b in enumerate(o.bytes)}
    if "/" not in o.plugin:
        ap.error("--plugin must be a path (NCCL loads a path as it is)")
    return o


def main(argv):
    opts = parse_args(argv)
    work = opts.work or tempfile.mkdtemp(prefix="nccltune-sweq-")
    os.makedirs(work, exist_ok=True)
    try:
        choices = load_choices(opts.sweep_file) if opts.sweep_file else \
            default_choices(opts.sizes[0])
        if len(choices) < opts.min_choices:
            print(f"sweep_equivalence: {len(choices)} choices, fewer than --min-choices "
                  f"{opts.min_choices}", file=sys.stderr)
            return 2
        for c in choices:
            if c["bytes"] not in opts.ops_of:
                print(f"sweep_equivalence: choice {choice_label(c)}: its size is not in --bytes",
                      file=sys.stderr)
                return 2
        sweep_path = os.path.join(work, "sweep.json")
        with open(sweep_path, "w") as f:
            json.dump({"schema": "nccltune-sweep/1", "rounds": opts.rounds, "seed": opts.seed,
                       "choices": choices}, f)
        tables = []
        for i, c in enumerate(choices):
            path = os.path.join(os.path.abspath(work), f"choice-{i}.table")
            with open(path, "w") as f:
                f.write(table_text(c))
            tables.append(path)
        runner = Runner(opts, work)
        repeats = [run_repeat(runner, opts, choices, r, sweep_path, tables)
                   for r in range(opts.repeats)]
    except RunError as e:
        print(f"sweep_equivalence: {e}", file=sys.stderr)
        return 1
    source = "model" if opts.model else "measured"
    doc = summarise(opts, choices, repeats, source)
    doc["runs"] = runner.count
    doc["wall_s"] = {"sweep": sum(x["wall_s"] for x in runner.log if x["kind"] == "sweep"),
                     "fresh": sum(x["wall_s"] for x in runner.log if x["kind"] == "fresh")}
    print_table(doc, sys.stdout)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
