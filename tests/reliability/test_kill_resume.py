#!/usr/bin/env python3
"""test_kill_resume.py - SIGKILL the tuner at random (seeded) points of a session, resume
it with `nccltune run --resume DIR`, again and again, until it finishes. Checks:
  * every run recorded before a kill is still in the final journal, unchanged;
  * no run twice: run numbers are 1..n, and no configuration is searched twice;
  * the probe ran at most (runs in the journal + one in flight per kill) times, counted
    independently from faultprobe's append-only log, and the journal stays in budget;
  * the session ends with results.json and leaves no probe process behind.
A SIGKILLed tuner cannot stop the probe it had in flight; such a probe is killed here
(by its unique tag) and counted, so the test does not leak processes either.

NCCLTUNE_KILL_SEED picks the kill points (default 1); the seed is printed."""
import json
import os
import random
import shutil
import signal
import time

import rel

BUDGET = 24


def complete_runs(out):
    runs = {}
    for r in rel.journal_runs(out):
        runs[r.get("run")] = r
    return runs


def trial(name, rng, kills_wanted, tseed, probe_seed):
    d = rel.tmpdir(name)
    out = os.path.join(d, "s")
    log = os.path.join(d, "probe.log")
    tag = rel.unique_tag(name)
    first = ["run", "--probe", rel.probe(tag, log, mode="random", seed=probe_seed, delay_ms=15),
             "--budget", str(BUDGET), "--seed", str(tseed), "--out", out, "--timeout", "2",
             "--quiet"]
    seen = {}           # run number -> record, as recorded before some kill
    kills = orphans = resumes = orphan_runs = 0
    inflight = []       # (run number it will get, the environment it ran with)
    proc = rel.start_tuner(first)
    started = time.time()
    status = None
    while True:
        delay = rng.uniform(0.02, 0.6)
        deadline = time.time() + delay
        while time.time() < deadline and proc.poll() is None:
            time.sleep(0.005)
        if proc.poll() is not None or kills >= kills_wanted:
            _, err = proc.communicate(timeout=120)
            status = proc.returncode
            if status not in (rel.EXIT_OK, rel.EXIT_NO_CONFIG):
                rel.check(False, "%s: resumed session exit %d" % (name, status), err[-2000:])
            break
        proc.kill()
        proc.communicate()
        kills += 1
        # the probe in flight is an orphan now: nothing survives SIGKILL to stop it. A
        # child forked just before the kill may still be on its way to exec (and to its
        # log line), so wait until no tagged process has appeared for a while.
        quiet_since = time.time()
        killed = set()
        while time.time() - quiet_since < 0.3:
            time.sleep(0.02)
            for p in rel.tagged_pids(tag):
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
                killed.add(p)
                quiet_since = time.time()
        orphans += len(killed)
        # what the journal holds now was completed before the kill
        for k, r in complete_runs(out).items():
            if k in seen:
                rel.check(seen[k] == r, "%s: run %s changed after a kill" % (name, k), seen[k], r)
            seen[k] = r
        # a probe invocation without a record was in flight: its run comes again later
        n_runs, n_calls = len(rel.journal_runs(out)), len(rel.probe_runs(log))
        if n_calls > n_runs + orphan_runs:
            inflight.append((n_runs + 1, rel.probe_runs(log)[-1]["env"]))
            orphan_runs += n_calls - n_runs - orphan_runs
        if not os.path.exists(os.path.join(out, "journal.jsonl")):
            # killed before the header was written: start again from scratch
            shutil.rmtree(out, ignore_errors=True)
            proc = rel.start_tuner(first)
            continue
        resumes += 1
        proc = rel.start_tuner(["run", "--resume", out, "--quiet"])
    elapsed = time.time() - started
    rel.check_no_leftovers(tag)

    runs = rel.journal_runs(out)
    _, bad = rel.journal(out)
    calls = rel.probe_runs(log)
    print("%s: %d kills (%d with a run in flight, %d orphaned probes killed here), %d resumes, "
          "%d runs, %d probe invocations, exit %s, %.1f s"
          % (name, kills, len(inflight), orphans, resumes, len(runs), len(calls), status, elapsed))
    rel.check(not bad, "%s: unparsable journal lines at the end" % name, bad[:3])
    final = {r.get("run"): r for r in runs}
    for k, r in seen.items():
        rel.check(final.get(k) == r, "%s: run %s recorded before a kill is lost or changed" % (name, k),
                  r, final.get(k))
    rel.check([r.get("run") for r in runs] == list(range(1, len(runs) + 1)),
              "%s: run numbers are not 1..n" % name, [r.get("run") for r in runs])
    search = [rel.env_key(r.get("env")) for r in runs if r.get("phase") == "search"]
    dups = {k for k in search if search.count(k) > 1}
    rel.check(not dups, "%s: configurations searched twice" % name, sorted(dups)[:3])
    rel.check(len(runs) <= BUDGET, "%s: %d runs in the journal, budget %d" % (name, len(runs), BUDGET))
    rel.check(len(runs) <= len(calls) <= len(runs) + kills,
              "%s: the probe ran %d times for %d recorded runs and %d kills"
              % (name, len(calls), len(runs), kills))
    rel.check(len(calls) <= BUDGET + kills,
              "%s: %d probe runs, over the budget %d + %d in flight" % (name, len(calls), BUDGET, kills))
    for number, env in inflight:
        r = final.get(number)
        rel.check(r is not None and all(env.get(k) == v for k, v in (r.get("env") or {}).items()),
                  "%s: the run in flight at a kill (run %d) was not run again after the resume"
                  % (name, number), env, r and r.get("env"))
    rel.check(os.path.exists(os.path.join(out, "results.json")), "%s: no results.json" % name)
    if os.path.exists(os.path.join(out, "results.json")):
        with open(os.path.join(out, "results.json")) as f:
            json.load(f)
    shutil.rmtree(d, ignore_errors=True)
    return kills


def main():
    rel.require_programs()
    seed = int(os.environ.get("NCCLTUNE_KILL_SEED", "1"))
    print("kill seed %d (NCCLTUNE_KILL_SEED)" % seed)
    rng = random.Random(seed)
    total = 0
    # three trials at least; more while fewer than 6 kills landed mid-session (a fast
    # session can end before its kills on an idle machine, a slow start on a loaded one)
    for i in range(6):
        total += trial("kill%d" % i, rng, kills_wanted=4, tseed=seed + i, probe_seed=20 + i)
        if i >= 2 and total >= 6:
            break
    rel.check(total >= 6, "only %d kills landed mid-session: the test tested little" % total)
    rel.finish()


if __name__ == "__main__":
    main()
