#!/usr/bin/env python3
"""test_readers.py - the journal's two users agree (issue 13): resume (session_load_journal)
and show / report / check (summary_load) read journal.jsonl through the one reader
(tuner/result/record.c), so on one corpus of journals, valid and hostile, each accepts or
refuses the same records with the same message "FILE:LINE: path: why".

The corpus is derived from a real session of the fake probe (and a two-level variant of
it). Each case is compared with tests/session/golden/readers/CASE.txt ("resume: ok" or
its message, then "show: ..."), the bad-input format of tests/reliability; the case runs
in a scratch folder, so messages hold relative names. NCCLTUNE_UPDATE_GOLDEN=1 rewrites
the golden files.

Where the users differ, the difference is policy and named in POLICY: resume rebuilds the
session (its space, its points, its outcomes and their reports, its budget) and refuses
what it cannot rebuild; show only describes, so it accepts those journals. Show never
refuses what resume accepts, and everything else must be byte-identical."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

NCCLTUNE, FAKEPROBE, READJOURNAL = sys.argv[1:4]
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(SOURCE, "tests", "session", "golden", "readers")

# case -> why only resume refuses it (show describes it)
POLICY = {
    "policy-point-outside-space": "resume maps every point into its space",
    "policy-search-without-point": "resume rebuilds which configuration a run ran",
    "policy-space-null": "resume needs the header's space to rebuild the session",
    "policy-space-not-nccl": "resume parses the header's space (its own reader)",
    "policy-pinned-not-nccl": "resume parses the pins it will set",
    "policy-over-budget": "resume refuses more runs than the budget: it could not tell which count",
    "policy-ok-without-report": "resume rebuilds an ok outcome from the probe's report",
    "policy-report-hostile-algo": "resume reads the report strictly (the probe's protocol); "
                                  "show keeps only decisions in NCCL's own words",
    "policy-unset-not-a-dimension": "resume maps unset names to dimensions of its space",
    "policy-inner-point-outside-space": "resume maps inner points into its space",
    "policy-warm-point-outside-space": "resume re-runs the warm start's points in its space",
    "policy-warm-too-many-configs": "resume re-runs at most 5 warm configurations (formats.md)",
    "policy-warm-failure-outside-space": "resume tells the pruner the warm failures' points",
    "policy-warm-failure-ok": "resume learns the warm failures as failures",
}

failures = []


def check(ok, *msg):
    if not ok:
        failures.append("\n".join(msg))
        print("FAIL:", *msg, file=sys.stderr)


def base_session(tmp):
    out = os.path.join(tmp, "base")
    subprocess.run([NCCLTUNE, "run", "--probe", FAKEPROBE, "--budget", "6", "--quiet",
                    "--out", out], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "journal.jsonl")) as f:
        return [json.loads(line) for line in f.read().splitlines()]


def dumps(recs):
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in recs)


def corpus(recs):
    """(name, journal text) for every case."""
    header, runs = recs[0], recs[1:]
    searched = next(r for r in runs if r["phase"] == "search" and r["outcome"] == "ok")
    failed = next((r for r in runs if r["outcome"] != "ok"), searched)
    ok_i = runs.index(searched) + 1

    def h(change):
        x = json.loads(json.dumps(header))
        change(x)
        return x

    def run(change, base=searched):
        x = json.loads(json.dumps(base))
        change(x)
        return x

    def at(i, rec):
        out = list(recs)
        out[i] = rec
        return out

    # a two-level journal: schema /2 and a sweep run of the searched point
    hdr2 = h(lambda x: x.update(schema="nccltune-journal/2", two_level=True))
    inner = [{"choice": 0, "bytes": 43008, "point": searched["point"], "outcome": "ok",
              "us": 42.0, "objective_us": 5000.0, "error": ""},
             {"choice": None, "bytes": 43008, "point": searched["point"], "outcome": "capture",
              "us": None, "objective_us": None, "error": "graph capture failed"}]
    sweep = run(lambda x: x.update(run=len(recs), phase="sweep",
                                   sweep={"choices": 2, "in_flight": False}, inner=inner))
    two = [hdr2] + runs + [sweep]

    def two_with(change):
        s = json.loads(json.dumps(sweep))
        change(s)
        return [hdr2] + runs + [s]

    def warm(**change):
        w = {"from": "old", "comparable": True, "configs": [searched["point"]],
             "failures": [{"point": searched["point"], "outcome": "capture"}]}
        w.update(change)
        return w

    dup = json.dumps(searched).replace('"outcome": ', '"outcome": "ok", "outcome": ', 1)
    return [
        ("valid", dumps(recs)),
        ("valid-two-level", dumps(two)),
        ("valid-header-unknown-key", dumps(at(0, h(lambda x: x.update(later_key=1))))),
        ("valid-run-unknown-key", dumps(at(ok_i, run(lambda x: x.update(server_dim=3))))),
        ("valid-record-type-later", dumps(recs + [{"type": "note", "text": "x"}])),
        ("valid-torn-last-line", dumps(recs) + json.dumps(searched)[:40]),
        ("empty", ""),
        # wrong types
        ("header-budget-string", dumps(at(0, h(lambda x: x.update(budget="6"))))),
        ("header-probe-string", dumps(at(0, h(lambda x: x.update(probe="rm -rf /"))))),
        ("header-probe-control", dumps(at(0, h(lambda x: x.update(probe=["p\x1b[2J"]))))),
        ("header-schema", dumps(at(0, h(lambda x: x.update(schema="nccltune-journal/9"))))),
        ("header-two-level-schema", dumps(at(0, h(lambda x: x.update(two_level=True))))),
        ("header-fingerprint-gpus",
         dumps(at(0, h(lambda x: x.update(fingerprint=dict(x.get("fingerprint") or {},
                                                           gpu_count=-1)))))),
        ("run-run-string", dumps(at(ok_i, run(lambda x: x.update(run="four"))))),
        ("run-phase-unknown", dumps(at(ok_i, run(lambda x: x.update(phase="explore"))))),
        ("run-outcome-unknown", dumps(at(ok_i, run(lambda x: x.update(outcome="fast"))))),
        ("run-env-not-object", dumps(at(ok_i, run(lambda x: x.update(env=["NCCL_ALGO"]))))),
        ("run-env-not-nccl", dumps(at(ok_i, run(lambda x: x["env"].update(LD_PRELOAD="x.so"))))),
        ("run-env-missing", dumps(at(ok_i, run(lambda x: x.pop("env"))))),
        ("run-outcome-missing", dumps(at(ok_i, run(lambda x: x.pop("outcome"))))),
        ("run-point-string", dumps(at(ok_i, run(lambda x: x.update(point="0,1"))))),
        ("run-try-not-in-header", dumps(at(ok_i, run(lambda x: x.update({"phase": "try", "try": 1}))))),
        ("run-try-missing", dumps(at(ok_i, run(lambda x: x.update(phase="try"))))),
        ("run-unset-not-ablate", dumps(at(ok_i, run(lambda x: x.update(unset=["NCCL_ALGO"]))))),
        ("run-stderr-number", dumps(at(ok_i, run(lambda x: x.update(stderr_tail=5))))),
        # duplicates
        ("header-duplicate",
         dumps([json.dumps(header).replace('"budget": ', '"budget": 1, "budget": ', 1)] + runs)),
        ("run-duplicate", dumps(at(ok_i, dup))),
        # huge and NaN-ish numbers
        ("run-objective-huge", dumps(at(ok_i, run(lambda x: x.update(objective_us=1e300))))),
        ("run-objective-negative", dumps(at(ok_i, run(lambda x: x.update(objective_us=-1))))),
        ("run-objective-nan-string", dumps(at(ok_i, run(lambda x: x.update(objective_us="NaN"))))),
        ("run-objective-nan-literal",
         dumps(at(ok_i, json.dumps(searched).replace(
             '"objective_us": %s' % json.dumps(searched["objective_us"]), '"objective_us": NaN')))),
        ("run-ok-objective-null", dumps(at(ok_i, run(lambda x: x.update(objective_us=None))))),
        ("run-exit-status-fraction", dumps(at(ok_i, run(lambda x: x.update(exit_status=0.5))))),
        ("header-seed-huge", dumps(at(0, h(lambda x: x.update(seed=1e30))))),
        # torn and damaged lines, records out of order
        ("damaged-middle-line", dumps(recs[:2]) + "{broken\n" + dumps(recs[2:])),
        ("run-before-header", dumps([runs[0], header] + runs[1:])),
        ("second-header", dumps(recs[:2] + [header] + recs[2:])),
        ("header-type-missing", dumps(at(0, h(lambda x: x.pop("type"))))),
        # sweep records
        ("sweep-in-one-level-journal", dumps(recs + [sweep])),
        ("sweep-inner-bad-outcome", dumps(two_with(lambda s: s["inner"][0].update(outcome="fast")))),
        ("sweep-inner-ok-without-us", dumps(two_with(lambda s: s["inner"][0].update(us=None)))),
        ("sweep-inner-unknown-key", dumps(two_with(lambda s: s["inner"][1].update(extra=1)))),
        ("sweep-inner-not-object", dumps(two_with(lambda s: s["inner"].append(7)))),
        ("sweep-missing-inner", dumps(two_with(lambda s: s.pop("inner")))),
        ("sweep-choices-huge", dumps(two_with(lambda s: s["sweep"].update(choices=1e9)))),
        # policy: resume refuses, show describes
        ("policy-point-outside-space", dumps(at(ok_i, run(lambda x: x.update(point=[99] * len(x["point"])))))),
        ("policy-search-without-point", dumps(at(ok_i, run(lambda x: x.update(point=None))))),
        ("policy-space-null", dumps(at(0, h(lambda x: x.update(space=None))))),
        ("policy-space-not-nccl",
         dumps(at(0, h(lambda x: x.update(space={"schema": "nccltune-space/1",
                                                 "params": {"LD_PRELOAD": {"values": ["x"]}}}))))),
        ("policy-pinned-not-nccl", dumps(at(0, h(lambda x: x["pinned"].update(LD_PRELOAD="x.so"))))),
        ("policy-over-budget", dumps(at(0, h(lambda x: x.update(budget=2))))),
        ("policy-ok-without-report", dumps(at(ok_i, run(lambda x: x.update(report=None))))),
        ("policy-report-hostile-algo",
         dumps(at(ok_i, run(lambda x: x["report"]["results"][0].update(
             nccl={"algo": "<b>Ring</b>", "proto": "LL", "ctas": 1}))))),
        ("policy-unset-not-a-dimension",
         dumps(at(ok_i, run(lambda x: x.update(phase="ablate", unset=["NCCL_NOT_A_DIM"]))))),
        ("policy-inner-point-outside-space",
         dumps(two_with(lambda s: s["inner"][0].update(point=[99] * len(s["point"]))))),
        # the warm start a header records (issue 31 m5)
        ("valid-warm-start", dumps(at(0, h(lambda x: x.update(warm_start=warm()))))),
        ("policy-warm-point-outside-space", dumps(at(0, h(lambda x: x.update(
            warm_start=warm(configs=[searched["point"], [99] * len(searched["point"])])))))),
        ("policy-warm-too-many-configs", dumps(at(0, h(lambda x: x.update(
            warm_start=warm(configs=[searched["point"]] * 5001)))))),
        ("policy-warm-failure-outside-space", dumps(at(0, h(lambda x: x.update(
            warm_start=warm(failures=[{"point": [99] * len(searched["point"]),
                                       "outcome": "capture"}])))))),
        ("policy-warm-failure-ok", dumps(at(0, h(lambda x: x.update(
            warm_start=warm(failures=[{"point": searched["point"], "outcome": "ok"}])))))),
    ]


def read_both(work, name, text):
    folder = os.path.join(work, name)
    os.makedirs(folder)
    with open(os.path.join(folder, "journal.jsonl"), "w") as f:
        f.write(text)
    p = subprocess.run([READJOURNAL, name], cwd=work, capture_output=True, text=True)
    check(p.returncode == 0, "%s: readjournal exit %d" % (name, p.returncode), p.stderr)
    lines = p.stdout.splitlines()
    check(len(lines) == 2 and lines[0].startswith("resume: ") and lines[1].startswith("show: "),
          "%s: unexpected output" % name, p.stdout)
    return (lines + ["", ""])[:2], p.stdout


def golden(name, got):
    path = os.path.join(GOLDEN, name + ".txt")
    if os.environ.get("NCCLTUNE_UPDATE_GOLDEN"):
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as f:
            f.write(got)
        return
    try:
        with open(path) as f:
            want = f.read()
    except FileNotFoundError:
        check(False, "%s: no golden file %s" % (name, path), got)
        return
    check(got == want, "%s: differs from %s" % (name, path), "got:\n" + got, "want:\n" + want)


def main():
    tmp = tempfile.mkdtemp(prefix="nccltune-readers-")
    try:
        recs = base_session(tmp)
        work = os.path.join(tmp, "cases")
        os.makedirs(work)
        names = set()
        for name, text in corpus(recs):
            names.add(name)
            (resume, show), out = read_both(work, name, text)
            golden(name, out)
            r, s = resume[len("resume: "):], show[len("show: "):]
            if name in POLICY:
                check(r != "ok" and s == "ok",
                      "%s: policy case (%s): resume must refuse, show describe" % (name, POLICY[name]),
                      out)
            else:
                check(r == s, "%s: resume and show disagree" % name, out)
                check((r == "ok") == name.startswith("valid"),
                      "%s: %s" % (name, "refused" if name.startswith("valid") else "accepted"), out)
        check(set(POLICY) <= names, "POLICY names cases that are not in the corpus")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
