#!/usr/bin/env python3
"""test_time_limit.py - --time-limit holds when a run hangs (issue 31 m3): a run's
deadline is capped by the time the limit leaves, a run the limit ends is not recorded
(the configuration did not hang: the session's clock ran out, and a resume may run it),
no run or retry starts after the limit, and the session ends with its results. A
baseline the limit ends leaves nothing to conclude: exit 1 saying so. The per-run
--timeout here (120 s) is far beyond the limit (4 s), so a session that waits for the
probe's own deadline runs past this test's generous timeout instead of finishing."""
import json
import os
import subprocess

import rel

LIMIT_S = 4
PER_RUN_S = 120


def session(d, name, **probe_opts):
    space = os.path.join(d, "space.json")
    with open(space, "w") as f:
        json.dump({"schema": "nccltune-space/1",
                   "params": {"NCCL_BUFFSIZE": {"pow2": [65536, 4194304]},
                              "NCCL_NTHREADS": {"values": [64, 128, 256, 512, None]}}}, f)
    out, log = os.path.join(d, name), os.path.join(d, name + ".log")
    tag = rel.unique_tag(name)
    args = ["run", "--probe", rel.probe(tag, log, delay_ms=100, **probe_opts), "--space", space,
            "--budget", "40", "--strategy", "random", "--seed", "7", "--timeout", str(PER_RUN_S),
            "--time-limit", str(LIMIT_S), "--out", out, "--quiet"]
    try:
        p = rel.run_tuner(args, timeout=60)
    except subprocess.TimeoutExpired:
        rel.check(False, "%s: the session ran past the time limit until the test's timeout" % name)
        return None, out, tag
    rel.check_no_leftovers(tag)
    return p, out, tag


def main():
    rel.require_programs()
    d = rel.tmpdir("time-limit")
    # the search's runs hang (every buffer size but the smallest): the first one that
    # does is ended at the limit, not recorded, and nothing starts after it
    p, out, _ = session(d, "search", rules="NCCL_BUFFSIZE>65536:hang")
    if p is not None:
        rel.check(p.returncode == rel.EXIT_OK, "search: exit %d" % p.returncode, p.stderr[-1500:])
        runs = rel.journal_runs(out)
        rel.check(runs and runs[0]["phase"] == "baseline" and runs[0]["outcome"] == "ok",
                  "search: no baseline", runs[:1])
        rel.check(not [r for r in runs if r["outcome"] == "timeout"],
                  "search: a run the time limit ended was recorded as a hang",
                  [(r["run"], r["phase"], r["outcome"], r.get("wall_s")) for r in runs])
        rel.check(not [r for r in runs if r["phase"] == "retry"],
                  "search: a retry ran", [(r["run"], r["phase"]) for r in runs])
        with open(os.path.join(out, "results.json")) as f:
            res = json.load(f)
        rel.check(res.get("best") is not None, "search: no best in results.json")
        calls = rel.probe_runs(os.path.join(d, "search.log"))
        rel.check(len(calls) == len(runs) + 1 and calls[-1]["expect"] == "timeout",
                  "search: want the recorded runs and one hang the limit ended, not recorded",
                  [c["expect"] for c in calls], len(runs))
    # the baseline hangs: nothing measured, exit 1 naming the limit
    p, out, _ = session(d, "baseline", mode="hang")
    if p is not None:
        rel.check(p.returncode == rel.EXIT_ERROR, "baseline: exit %d, want 1" % p.returncode,
                  p.stderr[-1500:])
        rel.check("--time-limit" in p.stderr and "nothing was measured" in p.stderr,
                  "baseline: the message does not say the limit ran out", p.stderr[-1500:])
        rel.check(rel.journal_runs(out) == [], "baseline: runs recorded",
                  rel.journal_runs(out))
    rel.finish()


if __name__ == "__main__":
    main()
