#!/usr/bin/env python3
"""test_models.py - end-to-end sessions against every built-in machine model, through
the CLI (which finds nccltune-model-probe in the build tree), checked on the real
results.json and journal (json.load, no text scraping of JSON). Every output must say
MODEL; a default session sweeps (two-level, journal /2); on the PCIe Gen5 box the
session must prune rule.43008.algo=Tree (it fails at graph
capture there) and beat NCCL's defaults with an interval above 1; the summary's noise
line and the "not shown to be faster" caution agree with the figures; the same seed
replays the same session.
Usage: test_models.py NCCLTUNE. Exit 77 (skipped) when the model probe is not built;
meson registers a skip (77) in place of this test when python3 is missing."""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

NT = sys.argv[1]
PROBE = os.path.join(os.environ.get("NCCLTUNE_BUILD_ROOT", "."), "models", "nccltune-model-probe")
UNPROVEN = "not shown to be faster than NCCL's defaults"
failures = []


def fail(what):
    print("FAIL: " + what, file=sys.stderr)
    failures.append(what)


def nt(*args):
    p = subprocess.run([NT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    return p.returncode, p.stdout


def load(d, name="results.json"):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def journal_runs(d):
    runs = []
    with open(os.path.join(d, "journal.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "run":
                runs.append(r)
    return runs


def session(tmp, model, strategy, budget, seed=1, name=None, noise=None):
    """Run a session (noise: the model probe's noise scale, else the model's); returns
    (dir, results) or (None, None) after a failure."""
    d = os.path.join(tmp, name or "%s-%s" % (model, strategy))
    how = ("--model", model)
    if noise is not None:
        probe = os.path.join(os.environ["NCCLTUNE_BUILD_ROOT"], "models", "nccltune-model-probe")
        how = ("--probe", "%s --model %s --noise %g --seed %d" % (probe, model, noise, seed))
    rc, out = nt("run", *how, "--strategy", strategy, "--budget", str(budget),
                 "--seed", str(seed), "--out", d)
    if rc != 0:
        fail("%s: exit %d: %s" % (model, rc, out[-600:]))
        return None, None
    with open(os.path.join(d, "summary.txt"), "w") as f:
        f.write(out)
    if "[MODEL %s]" % model not in out:
        fail("%s: progress not labelled MODEL" % model)
    if "MODEL %s: every figure" % model not in out:
        fail("%s: summary not labelled" % model)
    res = load(d)
    if res.get("source") != "model":
        fail("%s: source is %r, not model" % (model, res.get("source")))
    if res.get("model") != model:
        fail("%s: results.json model is %r" % (model, res.get("model")))
    if not isinstance(res.get("best"), dict):
        fail("%s: no best configuration: %r" % (model, res.get("best")))
    check_sets_nothing(model, res)
    runs = journal_runs(d)
    if not runs or len(runs) > budget:
        fail("%s: %d runs for a budget of %d" % (model, len(runs), budget))
    if [r.get("run") for r in runs] != list(range(1, len(runs) + 1)):
        fail("%s: run numbers are not 1..n" % model)
    rc, out = nt("show", d)
    if rc != 0:
        fail("%s: show failed on the session: %s" % (model, out[-400:]))
    return d, res


def check_sets_nothing(model, res):
    """A best that sets nothing (no variable, no rule) is NCCL's defaults: its gain is 1
    (or none, when measured too little to state one) and its time the baseline's,
    whatever the winner it came from measured."""
    b = res.get("best") or {}
    if not isinstance(b, dict) or env_of(b) or b.get("rules"):
        return False
    g = (res.get("gain") or {}).get("ratio")
    base = (res.get("baseline") or {}).get("objective_us")
    if g not in (1.0, None) or b.get("objective_us") != base:   # None: measured too little
        fail("%s: the best sets nothing, yet gain %r and %r us against the baseline's %r us"
             % (model, g, b.get("objective_us"), base))
    return True


def summary(d):
    with open(os.path.join(d, "summary.txt")) as f:
        return f.read()


def check_noise(d, res):
    """The summary's noise line: the pooled spread of the final repeats, recomputed here
    from the journal, and the "does not tell the two apart" note exactly when
    results.json's second finalist lies inside the first's interval."""
    groups = {}
    for r in journal_runs(d):
        if r["phase"] == "final" and r["outcome"] == "ok":
            key = json.dumps([r.get("point"), r.get("try", 0)])
            groups.setdefault(key, []).append(math.log(r["objective_us"]))
    ss = sum(sum((x - sum(v) / len(v)) ** 2 for x in v) for v in groups.values())
    dof = sum(len(v) - 1 for v in groups.values())
    if dof <= 0:
        fail("%s: no final repeats to compute the noise from" % d)
        return
    # results.json keeps run_sd to 4 decimals and the summary prints that: round alike
    want = "%.1f" % (100 * round(math.sqrt(ss / dof), 4))
    top = res["top"]
    inside = (len(top) > 1 and top[1].get("repeats", 1) > 1 and "ci95_us" in top[0] and
              top[0]["ci95_us"][0] <= top[1]["objective_us"] <= top[0]["ci95_us"][1])
    text = summary(d)
    m = re.search(r"^noise: *one run varies by about ([0-9.]+)%", text, re.M)
    if not m or m.group(1) != want:
        fail("%s: noise line says %r%%, the journal gives %s%%" % (d, m and m.group(1), want))
    if res.get("noise") is None:
        fail("%s: results.json noise is null with %d degrees of freedom" % (d, dof))
    told = "the next finalist's time is inside the best's 95% interval" in text
    if told != inside:
        fail("%s: 'does not tell apart' %s, finalists %s" % (d, "printed" if told else "missing",
                                                              "inside" if inside else "apart"))


def check_two_level(d, res, budget):
    """A default session on a model sweeps (the model probe says "sweep"): a journal
    nccltune-journal/2 with two_level true, sweep runs whose inner results are all
    recorded, no run setting NCCL_ALGO or NCCL_PROTO (the plugin carries them), and the
    budget counting probe processes (journal records), not inner choices."""
    with open(os.path.join(d, "journal.jsonl")) as f:
        header = json.loads(f.readline())
    if header.get("schema") != "nccltune-journal/2" or header.get("two_level") is not True:
        fail("%s: not a two-level journal: %r %r" % (d, header.get("schema"),
                                                    header.get("two_level")))
    if "sweep" not in (header.get("capabilities") or []):
        fail("%s: header capabilities %r lack sweep" % (d, header.get("capabilities")))
    runs = journal_runs(d)
    sweeps = [r for r in runs if r["phase"] == "sweep"]
    inner = sum(len(r.get("inner") or []) for r in sweeps)
    if len(sweeps) < 5:
        fail("%s: only %d sweep runs" % (d, len(sweeps)))
    if len(runs) > budget or inner <= len(runs):
        fail("%s: %d records (budget %d) with %d inner results" % (d, len(runs), budget, inner))
    for r in sweeps:
        if r["sweep"]["choices"] < 1 or (r["outcome"] == "ok" and
                                         len(r["inner"]) < r["sweep"]["choices"]):
            fail("%s: sweep run %d: %d inner results for %d choices" %
                 (d, r["run"], len(r["inner"]), r["sweep"]["choices"]))
    for r in runs:
        if set(r["env"]) & {"NCCL_ALGO", "NCCL_PROTO"}:
            fail("%s: run %d sets %r" % (d, r["run"], r["env"]))


def unproven(res):
    """Does results.json recommend settings whose gain's interval reaches down to 1?"""
    g, b = res.get("gain") or {}, res.get("best") or {}
    ci = g.get("ci95") or [None, None]
    return bool((b.get("env") or b.get("rules")) and res.get("baseline") and (g.get("ratio") or 0) >= 1.005 and
                ci[0] is not None and ci[0] <= 1.0)


def check_unproven(d, res):
    """The caution in the summary, show, the shell export and the report exactly when
    unproven(res). Returns unproven(res)."""
    want = unproven(res)
    with open(os.path.join(d, "report.html")) as f:
        report = f.read()
    views = {"summary": summary(d), "show": nt("show", d)[1],
             "export": nt("export", "--format", "shell", d)[1], "report": report}
    for v, text in views.items():
        if (UNPROVEN in text) != want:
            fail("%s: %s %s the caution, but the gain is %s" %
                 (d, v, "has" if UNPROVEN in text else "lacks", "unproven" if want else "shown"))
    return want


def env_of(x):
    return (x or {}).get("env") or {}


def main():
    if not os.access(PROBE, os.X_OK):
        print("skipped: %s is not built" % PROBE)
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="nccltune-models-")
    try:
        run_all(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        sys.exit(1)
    print("all model sessions passed")


def run_all(tmp):
    # Every built-in model the probe lists, so a new model is covered without editing
    # this file; pcie-gen5-8gpu gets the longer sessions below.
    p = subprocess.run([PROBE, "--list-models"], stdout=subprocess.PIPE, text=True)
    models = p.stdout.split() if p.returncode == 0 else []
    if p.returncode != 0:
        fail("nccltune-model-probe --list-models: exit %d" % p.returncode)
    if "h200-nvlink-2gpu" not in models:
        fail("--list-models lacks h200-nvlink-2gpu: %r" % models)
    first = {}
    for m in models:
        if m != "pcie-gen5-8gpu":
            d, res = session(tmp, m, "bo", 16)
            if d:
                check_unproven(d, res)
                first[m] = d

    # Too few final repeats for a spread: results.json says so with null, and no noise
    # line; fewer runs than the budget: the summary says where the rest went.
    d, res = session(tmp, "pcie-gen5-8gpu", "random", 8)
    if d:
        if "noise" not in res or res["noise"] is not None:
            fail("budget 8: noise is not null: %r" % res.get("noise"))
        text = summary(d)
        if re.search(r"^noise:", text, re.M):
            fail("budget 8: a noise line")
        n = len(journal_runs(d))
        joined = text.replace("\n          ", " ")  # the summary wraps at 100 columns
        said = re.search(r"^runs: *%d of a budget of 8 .*; %d run\(s\) of it left unused "
                         r"\(no round that fits would change the decision\)" % (n, 8 - n),
                         joined, re.M)
        if n < 8 and not said:
            fail("budget 8: %d runs, unused runs not explained" % n)
        if n == 8 and "left unused" in joined:
            fail("budget 8: every run used, yet the summary says some were left unused")

    # The default strategy (bo) with the README's budget.
    d, res = session(tmp, "pcie-gen5-8gpu", "bo", 60)
    if d:
        check_noise(d, res)
        text = summary(d)
        if not re.search(r"^next:     these are MODEL figures, not measurements: nothing to "
                         r"install", text, re.M):
            fail("summary: no tune-the-real-machine hint for a model session")
        if re.search(r"export .*--install", text):
            fail("summary: an install hint for a model session")
        check_two_level(d, res, 60)
        # the default space carries the algorithm per size: Tree's capture failures
        # (a rule of this model) prune rule.43008.algo=Tree
        pruned = res.get("pruned") or []
        if not any((x.get("when") or {}).get("rule.43008.algo") == "Tree" for x in pruned):
            fail("pcie-gen5-8gpu: rule.43008.algo=Tree was not pruned: %r" % pruned)
        if any(r.get("algo") == "Tree" for r in (res.get("best") or {}).get("rules") or []):
            fail("pcie-gen5-8gpu: Tree recommended")
        if check_unproven(d, res):
            fail("pcie-gen5-8gpu: its 2x gain cautioned as unproven")
        g = res.get("gain") or {}
        ratio, ci = g.get("ratio"), g.get("ci95") or [None, None]
        if not (ratio is not None and ratio > 1.2 and ci[0] is not None and ci[0] > 1.0):
            fail("pcie-gen5-8gpu: did not beat the default (gain %r, 95%% %r)" % (ratio, ci))
        # each rule says what NCCL ran there in the best's own runs (the model honours the
        # plugin's choice: the same pair and CTAs; never a sweep's own case), and show
        # prints it
        b = res.get("best") or {}
        for r in b.get("rules") or []:
            ran = r.get("nccl")
            if not ran or (r.get("proto") and ran.get("proto") != r["proto"]) or \
                    (r.get("ctas") and ran.get("ctas") != r["ctas"]):
                fail("pcie-gen5-8gpu: rule %r: NCCL ran %r" % (r, ran))
            elif "%s/%s on %d CTA(s)" % (ran["algo"], ran["proto"], ran["ctas"]) not in \
                    nt("show", d)[1]:
                fail("pcie-gen5-8gpu: show does not say what NCCL ran for %r" % r)
        # a gain carried by the rules alone is not "NCCL's defaults" in any view
        if not env_of(b):
            if not b.get("rules"):
                fail("pcie-gen5-8gpu: a gain with neither variables nor rules: %r" % b)
            # the summary wraps at 100 columns
            if "per-size rule(s) through nccltune's tuner plugin" not in \
                    summary(d).replace("\n          ", " "):
                fail("pcie-gen5-8gpu: the summary's best line hides the rules")
            for v, text in (("show", nt("show", d)[1]),
                            ("report", open(os.path.join(d, "report.html")).read())):
                if "nothing to set" in text:
                    fail("pcie-gen5-8gpu: %s says nothing to set for a rules-only best" % v)

    # An unproven gain: on pcie-2x4-islands at budget 20 (seeds 3 and 5 here: one
    # finalist, two rounds, too few runs left to show it) the best measures about 1.09x
    # [95% 0.99x .. 1.19x] in the final rounds, so every view must say it is not shown
    # faster. (At budget 60 the extra rounds of issue 30 now show such gains.) Which seed
    # gives one depends on the build's floating point (bo's fits): every view must agree
    # in each session, and one of five must caution.
    cautioned = False
    for seed in range(2, 7):
        d, res = session(tmp, "pcie-2x4-islands", "bo", 20, seed=seed, name="islands-20-%d" % seed)
        cautioned = bool(d and check_unproven(d, res)) or cautioned
        if cautioned:
            break
    if not cautioned:
        fail("pcie-2x4-islands budget 20 seeds 2-6: no unproven gain to caution")

    # Regression: on pcie-4gpu-switch (a tenth of the model's noise) the ablation drops
    # both variables of a winner whose rule forces what NCCL already runs; the result
    # said 1.03x for the defaults it recommends. (At the model's full 2% spread three
    # rounds cannot show a removal within 1.01x: the variables would be kept.) Which seed
    # gives such a winner depends on the search (seed 1 before issue 30's identity
    # finalist, seed 2 before its guards in the outer search): the first of seeds 1-8
    # whose ablation measured the best less both variables twice must set nothing.
    case = None
    for seed in range(1, 9):
        d, res = session(tmp, "pcie-4gpu-switch", "bo", 60, seed=seed,
                         name="switch-60-%d" % seed, noise=0.1)
        if d and len([r for r in journal_runs(d) if r.get("phase") == "ablate" and
                      not {"NCCL_BUFFSIZE", "NCCL_NTHREADS"} & set(r.get("env") or {})]) >= 2:
            case = seed
            if not check_sets_nothing("pcie-4gpu-switch seed %d" % seed, res):
                fail("pcie-4gpu-switch seed %d: both variables dropped, yet the best sets %r"
                     % (seed, res.get("best")))
            break
    if case is None:
        fail("pcie-4gpu-switch seeds 1-8: no ablation dropped both variables: the regression "
             "case is gone")

    # Regression: with the old rule, the first failures of this random session pruned
    # NCCL_ALGO=Ring and unset (blamed for LL128's wrong sums and Simple's capture
    # failures), the search ran out of points after 10 runs and the final phase crashed.
    d, res = session(tmp, "pcie-gen5-8gpu", "random", 60, seed=10, name="random-10")
    if d:
        for x in res.get("pruned") or []:
            if (x.get("when") or {}).get("NCCL_ALGO") == "Ring":
                fail("random seed 10: NCCL_ALGO=Ring pruned (it works with LL): %r" % x)
        ratio = (res.get("gain") or {}).get("ratio")
        if not (ratio is not None and ratio > 1.5):
            fail("random seed 10: gain only %r" % ratio)

    # A model session replays exactly for the same seed: the model probe mixes the
    # session's --seed with NCCLTUNE_RUN, so the same runs come back with the same figures.
    m = "nvlink-h200-8gpu"
    if m not in first:
        fail("%s: not among the models run" % m)
        return
    d, _ = session(tmp, m, "bo", 16, name="again")

    def strip(dd):
        return [(r["run"], r["phase"], r["env"], r["outcome"], r.get("objective_us"))
                for r in journal_runs(dd)]
    if not d or not strip(d) or strip(first[m]) != strip(d):
        fail("%s: the same seed did not replay the same session" % m)


if __name__ == "__main__":
    main()
