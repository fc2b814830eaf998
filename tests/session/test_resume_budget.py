#!/usr/bin/env python3
"""test_resume_budget.py - `nccltune run --resume DIR --budget N` extends a session
(issue 28 item 10), with the model probe:

* a finished budget-20 session extended to 30 makes more runs (at most 30), more search
  and the final phase again; the journal's first records are the old journal byte for
  byte, then one "budget" record (budget 30 at the old run count); results.json is
  rewritten with budget 30, and its noise comes from the new final phase's repeats only
  (an ended final phase's runs are history);
* a plain --resume afterwards keeps 30 and runs nothing more;
* --budget 10 and --budget 30 again are refused (exit 2, "does not extend"), the journal
  untouched;
* an extended session killed part way (its journal cut after a few of the new runs, as
  a kill leaves it) resumes without --budget to the same runs as the uninterrupted one;
* the one reader refuses a budget record that does not extend or sits at the wrong run
  (resume and check alike), and show reads an extended journal.

Usage: test_resume_budget.py NCCLTUNE"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

NT = os.path.realpath(sys.argv[1])
FAILS = []


def check(cond, what, detail=""):
    if not cond:
        FAILS.append(what)
        print("FAIL: %s%s" % (what, ("\n    " + str(detail)[-1500:]) if detail else ""),
              file=sys.stderr)


def nt(*args):
    return subprocess.run([NT] + list(args), capture_output=True, text=True, timeout=120)


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def config(r):
    return (r["phase"], json.dumps(r.get("point")), r.get("try"), json.dumps(r.get("unset")))


def main():
    tmp = tempfile.mkdtemp(prefix="nccltune-resume-budget-")
    try:
        run(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print("%d failure(s)" % len(FAILS), file=sys.stderr)
        return 1
    return 0


def run(tmp):
    d = os.path.join(tmp, "s")
    j = os.path.join(d, "journal.jsonl")
    p = nt("run", "--model", "pcie-gen5-8gpu", "--budget", "20", "--seed", "1", "--out", d,
           "--quiet")
    check(p.returncode == 0, "the budget-20 session", p.stderr)
    if p.returncode != 0:
        return
    with open(j, "rb") as f:
        old = f.read()
    n20 = len([r for r in records(j) if r["type"] == "run"])
    with open(os.path.join(d, "results.json"), "rb") as f:
        old_results = f.read()

    for n in ("10", "20"):
        p = nt("run", "--resume", d, "--budget", n, "--quiet")
        check(p.returncode == 2 and "does not extend" in p.stderr,
              "--budget %s refused with 'does not extend'" % n, p.stderr)
    with open(j, "rb") as f:
        check(f.read() == old, "a refused --budget leaves the journal as it was")

    p = nt("run", "--resume", d, "--budget", "30")
    check(p.returncode == 0, "--resume --budget 30", p.stderr)
    check("the budget extended from 20 to 30" in p.stderr, "the extension is said", p.stderr)
    with open(j, "rb") as f:
        new = f.read()
    check(new.startswith(old), "the old journal's records are unchanged, byte for byte")
    recs = records(j)
    ext = [i for i, r in enumerate(recs) if r["type"] == "budget"]
    check(len(ext) == 1 and recs[ext[0]]["budget"] == 30 and recs[ext[0]]["runs"] == n20 and
          ext[0] == n20 + 1, "one budget record (30, at run %d) after the old runs" % n20,
          recs[ext[0]] if ext else None)
    runs = [r for r in recs if r["type"] == "run"]
    after = runs[n20:]
    check(n20 < len(runs) <= 30, "more runs, at most 30 (%d then %d)" % (n20, len(runs)))
    check(any(r["phase"] in ("search", "sweep") for r in after) and
          any(r["phase"] == "final" for r in after),
          "more search, then the final phase again",
          [r["phase"] for r in after])
    with open(os.path.join(d, "results.json"), "rb") as f:
        res_bytes = f.read()
    res = json.loads(res_bytes)
    check(res_bytes != old_results and res["budget"] == 30, "results.json rewritten, budget 30",
          res.get("budget"))
    # the noise pools the new final phase's repeats only
    groups = {}
    for r in after:
        if r["phase"] == "final" and r["outcome"] == "ok":
            groups.setdefault(config(r), []).append(r)
    dof = sum(len(g) - 1 for g in groups.values())
    check(res.get("noise") and res["noise"]["dof"] == dof,
          "the noise from the new final phase only (dof %d)" % dof, res.get("noise"))
    base = [r for r in after if r["phase"] == "final" and r.get("point") is None and
            not r.get("try") and r["outcome"] == "ok"]
    check(res["baseline"]["repeats"] == len(base),
          "the baseline's repeats are the new final phase's (%d)" % len(base),
          res["baseline"])

    p = nt("run", "--resume", d, "--quiet", "--json")
    check(p.returncode == 0, "a plain resume of the extended session", p.stderr)
    with open(j, "rb") as f:
        check(f.read() == new, "a plain resume keeps budget 30 and runs nothing more")
    with open(os.path.join(d, "results.json")) as f:
        check(json.load(f)["budget"] == 30, "results.json: budget 30 after a plain resume")
    p = nt("run", "--resume", d, "--budget", "30", "--quiet")
    check(p.returncode == 2 and "does not extend" in p.stderr, "--budget 30 again refused",
          p.stderr)

    p = nt("show", d)
    check(p.returncode == 0, "show reads an extended journal", p.stderr)

    # killed after the first few new runs: the journal is what a kill leaves
    for keep in (1, 3):
        k = os.path.join(tmp, "killed%d" % keep)
        shutil.copytree(d, k)
        os.remove(os.path.join(k, "results.json"))
        lines = new.decode().splitlines(True)
        with open(os.path.join(k, "journal.jsonl"), "w") as f:
            f.writelines(lines[:n20 + 2 + keep])
        p = nt("show", k)
        check(p.returncode == 0, "show of the killed extended session (%d new runs)" % keep,
              p.stderr)
        p = nt("run", "--resume", k, "--quiet")
        check(p.returncode == 0, "the killed extended session resumes (%d new runs)" % keep,
              p.stderr)
        got = [r for r in records(os.path.join(k, "journal.jsonl")) if r["type"] == "run"]
        check([config(r) for r in got] == [config(r) for r in runs],
              "resumed after %d new runs: the same runs as uninterrupted" % keep,
              [r["phase"] for r in got])
        with open(os.path.join(k, "results.json")) as f:
            check(json.load(f)["budget"] == 30, "the killed one concludes with budget 30")

    # the one reader: a budget record that does not extend is refused
    bad = os.path.join(tmp, "bad")
    shutil.copytree(d, bad)
    lines = new.decode().splitlines(True)
    rec = json.loads(lines[n20 + 1])
    rec["budget"] = 20
    lines[n20 + 1] = json.dumps(rec) + "\n"
    with open(os.path.join(bad, "journal.jsonl"), "w") as f:
        f.writelines(lines)
    p = nt("run", "--resume", bad, "--quiet")
    check(p.returncode == 2 and "journal.jsonl:%d: budget: 20 does not extend" % (n20 + 2)
          in p.stderr, "a budget record that does not extend is refused", p.stderr)
    rec["budget"] = 30
    rec["runs"] = n20 - 1
    lines[n20 + 1] = json.dumps(rec) + "\n"
    with open(os.path.join(bad, "journal.jsonl"), "w") as f:
        f.writelines(lines)
    for cmd in ("run --resume", "check"):
        p = nt(*(cmd.split() + [bad]))
        check(p.returncode != 0 and "journal.jsonl:%d: runs: %d, but %d run record(s) come "
              "before it" % (n20 + 2, n20 - 1, n20) in p.stderr,
              "%s: a budget record at the wrong run is refused" % cmd, p.stderr)


if __name__ == "__main__":
    sys.exit(main())
