#!/usr/bin/env python3
"""test_faults_session.py - whole sessions against faultprobe, every strategy, faults
drawn at random or by rules that make the failing configurations look the fastest.
Checks: the session completes; every probe run is in the journal, in order, classified
as faultprobe says it must be; run numbers are 1..n; the best configuration never
failed; no probe process (child or grandchild) is left behind; results.json is the
only result and no temporary file is left."""
import json
import os
import shutil
import time

import rel

# Tree and LL128 look fastest in faultprobe's landscape: a tuner that lets a crash or a
# wrong sum through would pick them.
TIMEOUT_S = 2

# (Hangs cost a deadline each: they come from mode "random" below, not from a rule that
# a search would hit again and again.)
RULES = ("NCCL_ALGO=Tree:segv;NCCL_PROTO=LL128:wrong-sum;"
         "NCCL_NTHREADS=512:garbage;NCCL_BUFFSIZE<131072:fail-capture")


def session(name, strategy, budget, tseed, **probe_opts):
    t0 = time.time()
    d = rel.tmpdir(name)
    out = os.path.join(d, "s")
    log = os.path.join(d, "probe.log")
    tag = rel.unique_tag(name)
    p = rel.run_tuner(["run", "--probe", rel.probe(tag, log, **probe_opts), "--strategy", strategy,
                       "--budget", str(budget), "--seed", str(tseed), "--out", out,
                       "--timeout", str(TIMEOUT_S), "--quiet"])
    print("%s: exit %d, %d runs, %.1f s" % (name, p.returncode, len(rel.journal_runs(out)), time.time() - t0))
    want = (rel.EXIT_NO_CONFIG,) if probe_opts.get("mode", "").startswith("fail-") else (rel.EXIT_OK,)
    rel.check(p.returncode in want,
              "%s: session exit status %d" % (name, p.returncode), p.stderr[-2000:])
    rel.check_no_leftovers(tag)
    runs = rel.journal_runs(out)
    calls = rel.probe_runs(log)
    _, bad = rel.journal(out)
    rel.check(not bad, "%s: unparsable journal lines" % name, bad[:3])
    rel.check(len(runs) == len(calls),
              "%s: %d journal runs but the probe ran %d times" % (name, len(runs), len(calls)))
    rel.check(len(runs) <= budget, "%s: %d runs over a budget of %d" % (name, len(runs), budget))
    rel.check([r.get("run") for r in runs] == list(range(1, len(runs) + 1)),
              "%s: run numbers are not 1..n" % name, [r.get("run") for r in runs])
    for r, c in zip(runs, calls):
        if (r.get("outcome") == "timeout" and c["expect"] != "timeout"
                and (r.get("wall_s") or 0) >= 0.9 * TIMEOUT_S):
            # a loaded machine made a healthy run overrun its deadline: a correct verdict
            print("%s: run %s (%s) overran its deadline on a loaded machine" % (name, r["run"], c["mode"]))
            continue
        rel.check(r.get("outcome") == c["expect"],
                  "%s: run %s (%s) recorded as %r, the probe did %r (must be %r)"
                  % (name, r.get("run"), r.get("phase"), r.get("outcome"), c["mode"], c["expect"]),
                  r.get("env"), r.get("error"))
        for k, v in (r.get("env") or {}).items():
            rel.check(c["env"].get(k) == v, "%s: run %s: journal says %s=%s, the probe saw %r"
                      % (name, r.get("run"), k, v, c["env"].get(k)))
        if r.get("outcome") == "ok":
            rel.check(isinstance(r.get("objective_us"), (int, float)) and r["objective_us"] > 0,
                      "%s: run %s ok without a positive objective" % (name, r.get("run")))
    res_path = os.path.join(out, "results.json")
    rel.check(os.path.exists(res_path), "%s: no results.json" % name)
    rel.check(not rel.leftover_temps(out), "%s: temporary files left" % name, rel.leftover_temps(out))
    if os.path.exists(res_path):
        with open(res_path) as f:
            res = json.load(f)
        best = res.get("best")
        if p.returncode == rel.EXIT_NO_CONFIG:
            rel.check(best is None, "%s: exit 4 but a best configuration" % name)
        elif rel.check(best is not None, "%s: exit 0 without a best configuration" % name):
            key = rel.env_key(best["env"])
            # the exact configuration: journal runs with this env
            exact = [r for r in runs if rel.env_key(r.get("env")) == key]
            rel.check(exact and all(r["outcome"] == "ok" for r in exact),
                      "%s: best configuration %s failed at least once" % (name, best["env"]),
                      [(r["run"], r["outcome"]) for r in exact])
            rel.check(best["env"].get("NCCL_ALGO") != "Tree" or "rules" not in probe_opts,
                      "%s: best uses NCCL_ALGO=Tree, which always crashes" % name)
            rel.check(best["env"].get("NCCL_PROTO") != "LL128" or "rules" not in probe_opts,
                      "%s: best uses NCCL_PROTO=LL128, which always sums wrong" % name)
    shutil.rmtree(d, ignore_errors=True)
    return runs


def main():
    rel.require_programs()
    classes = set()
    for strategy, seed in (("bo", 1), ("nm", 2), ("random", 3), ("grid", 4)):
        runs = session("rules-" + strategy, strategy, 16, seed, rules=RULES)
        classes |= {r.get("outcome") for r in runs}
    for seed in (11, 12):
        runs = session("random-%d" % seed, "bo", 18, seed, mode="random", seed=seed)
        classes |= {r.get("outcome") for r in runs}
    # nothing works, not even NCCL's defaults: exit 4, best null, every run recorded
    runs = session("all-fail", "bo", 8, 5, mode="fail-capture")
    rel.check(runs and all(r.get("outcome") == "capture" for r in runs),
              "all-fail: runs not all recorded as capture", [r.get("outcome") for r in runs])
    # the sessions must actually have met faults, or they tested nothing
    for cls in ("ok", "crash", "verify", "timeout", "garbage", "capture"):
        rel.check(cls in classes, "no run came out %r in any session" % cls, sorted(classes))
    rel.finish()


if __name__ == "__main__":
    main()
