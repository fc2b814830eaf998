#!/usr/bin/env python3
"""test_twolevel.py - the two-level search (issue 17) end to end on the model probe,
run through sweep_wrapper.py, which logs every probe invocation independently of the
tuner. Checks, on the journal, results.json and the invocation log:
  * a default session sweeps: header nccltune-journal/2, two_level, sweep runs;
  * --budget counts probe processes: invocations of runs = journal records <= budget,
    while the inner results outnumber them many times; the first sweep is of the outer
    point that sets nothing, swept once;
  * a choice that gives a wrong sum in a sweep is journalled as that point's verify
    failure and is never best nor among the finalists;
  * a choice that hangs (sweep_in_flight) is learned as that point's failure, the
    outer point is swept again without it, and it is never recommended;
  * a session killed (SIGKILL) while a sweep runs resumes: the recorded runs and their
    inner results are replayed, not run again, and the session ends as an uninterrupted
    one with the same seed; a torn sweep record is swept again;
  * a damaged inner result is refused on resume, naming the file, line and key;
  * a probe without the sweep capability runs exactly as before: the global space,
    journal /1, one configuration per process, never --sweep;
  * a sweep report that answers other choices than asked (an entry's echo) or fewer than
    asked is garbage, and none of its entries is learned (issue 31 m1, m2);
  * a wrapped probe that answers --capabilities once per rank (two identical lines, as
    `mpirun -np 2` does) keeps the two-level search.
Usage: test_twolevel.py NCCLTUNE WRAPPER MODEL_PROBE."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

NT, WRAP, PROBE = sys.argv[1:4]
MODEL = "pcie-gen5-8gpu"
failures = []


def fail(what):
    print("FAIL: " + what, file=sys.stderr)
    failures.append(what)


def env_for(log, **knobs):
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("NCCL_") or k.startswith("WRAP_"):
            del e[k]
    e["WRAP_PROBE"] = PROBE
    e["WRAP_LOG"] = log
    e.update({k: str(v) for k, v in knobs.items()})
    return e


def run_args(out, budget, seed=1, extra=(), model=MODEL):
    return [NT, "run", "--probe", "%s --model %s --seed %d" % (WRAP, model, seed),
            "--budget", str(budget), "--seed", str(seed), "--out", out, "--quiet"] + list(extra)


def nt(args, env):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=env, timeout=300)
    return p.returncode, p.stdout


def records(d):
    with open(os.path.join(d, "journal.jsonl")) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    return lines[0], [r for r in lines[1:] if r.get("type") == "run"]


def invocations(log, kind=None):
    if not os.path.exists(log):
        return []
    with open(log) as f:
        v = [json.loads(x) for x in f]
    return [x for x in v if kind is None or x["kind"] in kind]


def session(tmp, name, budget, seed=1, extra=(), model=MODEL, **knobs):
    d = os.path.join(tmp, name)
    log = os.path.join(tmp, name + ".log")
    rc, out = nt(run_args(d, budget, seed, extra, model), env_for(log, **knobs))
    if rc != 0:
        fail("%s: exit %d: %s" % (name, rc, out[-800:]))
        return None, log
    return d, log


def strip(runs):
    return [(r["run"], r["phase"], r["point"], r["outcome"], r.get("objective_us"),
             json.dumps(r.get("inner"))) for r in runs]


def finalists(runs):
    """The points re-measured in the final rounds: every candidate that may be best."""
    return [r["point"] for r in runs if r["phase"] == "final" and r["point"]]


def check_budget(tmp):
    d, log = session(tmp, "budget", 15)
    if not d:
        return None
    h, runs = records(d)
    if h.get("schema") != "nccltune-journal/2" or not h.get("two_level"):
        fail("budget: not a two-level session: %r" % h.get("schema"))
    probes = invocations(log, ("sweep", "run"))
    sweeps = [r for r in runs if r["phase"] == "sweep"]
    inner = sum(len(r["inner"]) for r in sweeps)
    if len(probes) != len(runs) or len(runs) > 15:
        fail("budget: %d probe processes, %d journal records, budget 15" %
             (len(probes), len(runs)))
    if len(invocations(log, ("sweep",))) != len(sweeps) or not sweeps:
        fail("budget: %d --sweep processes for %d sweep records" %
             (len(invocations(log, ("sweep",))), len(sweeps)))
    if inner < 5 * len(runs):
        fail("budget: only %d inner results for %d processes" % (inner, len(runs)))
    # the outer point that sets nothing is swept first (its rules are safe at any guard
    # by identity: the fall-back of issue 30), and once
    envs = [json.dumps(r.get("env"), sort_keys=True) for r in sweeps if r["outcome"] == "ok"]
    if not sweeps or sweeps[0].get("env") != {} or envs.count("{}") != 1:
        fail("budget: the first sweep sets %r; ok sweeps that set nothing: %d" %
             (sweeps[0].get("env") if sweeps else None, envs.count("{}")))
    return d


def check_wrong_sum(tmp):
    d, _ = session(tmp, "corrupt", 20, WRAP_SWEEP_ADD="--test-corrupt-choice 0")
    if not d:
        return
    _, runs = records(d)
    bad = [i["point"] for r in runs if r["phase"] == "sweep" for i in r["inner"]
           if i["outcome"] == "verify"]
    if not bad:
        fail("corrupt: no inner result journalled as verify")
    finals = finalists(runs)
    if not finals:
        fail("corrupt: no finalist")
    for p in bad:
        if p in finals:
            fail("corrupt: the wrong sum's point %r is a finalist" % p)


def check_hang(tmp):
    # a model where no choice fails before the timed replays (the hang is at choice 2's)
    d, _ = session(tmp, "stall", 20, model="nvlink-h200-8gpu",
                   WRAP_ONCE_ADD="--test-stall-choice 2",
                   WRAP_STATE=os.path.join(tmp, "stall.state"))
    if not d:
        return
    head, runs = records(d)
    # the outer variables come first in the space, the rule.* dimensions after them
    n_outer = sum(1 for k in head["space"]["params"] if not k.startswith("rule."))
    sweeps = [r for r in runs if r["phase"] == "sweep"]
    first, again = sweeps[0], sweeps[1] if len(sweeps) > 1 else None
    hung = [i for i in first["inner"] if i["choice"] == 2]
    if first["outcome"] == "ok" or not first["sweep"]["in_flight"] or len(hung) != 1 or \
            hung[0]["outcome"] != "replay":
        fail("stall: first sweep %r, in flight %r, choice 2 %r" %
             (first["outcome"], first["sweep"]["in_flight"], hung))
        return
    if first["point"] != hung[0]["point"]:
        fail("stall: the failed run's point is not the choice in flight")
    if not again or again["outcome"] != "ok" or \
            again["sweep"]["choices"] >= first["sweep"]["choices"] or \
            again["point"][:n_outer] != first["point"][:n_outer]:
        fail("stall: the outer point was not swept again without the choice: %r" %
             (again and again["sweep"]))
    if any(i["point"] == hung[0]["point"] for i in again["inner"]):
        fail("stall: the hung choice was swept again")
    if hung[0]["point"] in finalists(runs) or not finalists(runs):
        fail("stall: the hung choice is a finalist (or there is none)")


def check_kill_resume(tmp, ref):
    d = os.path.join(tmp, "killed")
    log = os.path.join(tmp, "killed.log")
    env = env_for(log, WRAP_SLEEP_AT=4, WRAP_SLEEP_S=60, WRAP_STATE=os.path.join(tmp, "k.state"))
    p = subprocess.Popen(run_args(d, 15), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env)
    deadline = time.time() + 60
    while time.time() < deadline and len(invocations(log, ("sweep",))) < 4:
        time.sleep(0.05)
    sleeper = invocations(log, ("sweep",))
    time.sleep(0.3)
    p.kill()
    p.wait()
    if len(sleeper) < 4:
        fail("kill: the fourth sweep never started")
        return
    try:
        os.kill(sleeper[3]["pid"], signal.SIGKILL)   # the orphaned sweep in flight
    except ProcessLookupError:
        pass
    _, before = records(d)
    if len([r for r in before if r["phase"] == "sweep"]) != 3:
        fail("kill: %d sweep records before the kill (expected 3)" %
             len([r for r in before if r["phase"] == "sweep"]))
    n0 = len(invocations(log, ("sweep", "run")))
    rc, out = nt([NT, "run", "--resume", d, "--quiet"], env_for(log))
    if rc != 0:
        fail("kill: resume exit %d: %s" % (rc, out[-600:]))
        return
    _, after = records(d)
    rerun = len(invocations(log, ("sweep", "run"))) - n0
    if rerun != len(after) - len(before):
        fail("kill: the resume ran %d processes for %d new records" %
             (rerun, len(after) - len(before)))
    if strip(after) != strip(records(ref)[1]):
        fail("kill: the resumed session differs from the uninterrupted one")
    # a torn sweep record: cut the last sweep line in half and resume again
    torn = os.path.join(tmp, "torn")
    shutil.copytree(ref, torn)
    os.chmod(torn, 0o700)
    with open(os.path.join(ref, "journal.jsonl")) as f:
        lines = f.readlines()
    last = max(i for i, x in enumerate(lines) if '"phase":"sweep"' in x)
    with open(os.path.join(torn, "journal.jsonl"), "w") as f:
        f.writelines(lines[:last])
        f.write(lines[last][:len(lines[last]) // 2])
    for x in ("results.json",):
        os.unlink(os.path.join(torn, x))
    rc, out = nt([NT, "run", "--resume", torn], env_for(os.path.join(tmp, "torn.log")))
    if rc != 0 or "torn" not in out:
        fail("torn: resume exit %d without a torn-line warning: %s" % (rc, out[-600:]))
    elif strip(records(torn)[1]) != strip(records(ref)[1]):
        fail("torn: the resumed session differs from the uninterrupted one")
    # a damaged inner result is refused, naming where
    bad = os.path.join(tmp, "bad")
    shutil.copytree(ref, bad)
    os.chmod(bad, 0o700)
    with open(os.path.join(bad, "journal.jsonl"), "w") as f:
        for i, x in enumerate(lines):
            if i == last:
                r = json.loads(x)
                r["inner"][0]["outcome"] = "splendid"
                x = json.dumps(r, separators=(",", ":")) + "\n"
            f.write(x)
    rc, out = nt([NT, "run", "--resume", bad], env_for(os.path.join(tmp, "bad.log")))
    want = "journal.jsonl:%d: inner[0].outcome: unknown class 'splendid'" % (last + 1)
    if rc != 2 or want not in out:
        fail("bad inner: exit %d, expected %r in: %s" % (rc, want, out[-400:]))


def check_plain_probe(tmp):
    d, log = session(tmp, "plain", 12, WRAP_NO_CAPS=1)
    if not d:
        return
    h, runs = records(d)
    if h.get("schema") != "nccltune-journal/1" or h.get("two_level") is not False:
        fail("plain: header %r two_level %r" % (h.get("schema"), h.get("two_level")))
    if "NCCL_PROTO" not in h["space"]["params"] or any(r["phase"] == "sweep" for r in runs):
        fail("plain: not the global space searched one point per process")
    if invocations(log, ("sweep",)) or len(invocations(log, ("run",))) != len(runs):
        fail("plain: %d --sweep invocations, %d runs for %d records" %
             (len(invocations(log, ("sweep",))), len(invocations(log, ("run",))), len(runs)))


def check_answers(tmp):
    for edit, want in (("drop-last", "choice(s), "), ("echo", "echoes"), ("algo", "echoes")):
        d, log = session(tmp, "edit-" + edit, 10, WRAP_EDIT=edit)
        if not d:
            continue
        h, runs = records(d)
        sweeps = [r for r in runs if r["phase"] == "sweep"]
        # every ok report was rewritten: none may count as ok; the rewritten ones are
        # garbage naming why, and nothing of them is learned (failed sweeps pass as they are)
        refused = [r for r in sweeps if r.get("outcome") == "garbage"]
        if not refused or any(r.get("outcome") == "ok" for r in sweeps):
            fail("%s: want the rewritten sweep reports refused, got outcomes %r"
                 % (edit, [r.get("outcome") for r in sweeps]))
        for r in refused:
            if want not in r.get("error", ""):
                fail("%s: the refusal does not say why: %r" % (edit, r.get("error")))
            if r.get("inner"):
                fail("%s: entries of a refused sweep report were learned: %r"
                     % (edit, r["inner"][:2]))


def check_wrapped_ranks(tmp):
    d, log = session(tmp, "ranks", 4, WRAP_RANKS=2)
    if not d:
        return
    h, runs = records(d)
    if h.get("two_level") is not True or not invocations(log, ("sweep",)):
        fail("two capability lines (one per rank): not two-level (two_level %r, %d sweeps)" %
             (h.get("two_level"), len(invocations(log, ("sweep",)))))


def main():
    tmp = tempfile.mkdtemp(prefix="nccltune-twolevel-")
    try:
        ref = check_budget(tmp)
        check_wrong_sum(tmp)
        check_hang(tmp)
        if ref:
            check_kill_resume(tmp, ref)
        check_plain_probe(tmp)
        check_wrapped_ranks(tmp)
        check_answers(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        sys.exit(1)
    print("two-level: sweep sessions, budget, wrong sums, hangs, kill/resume, plain probe: ok")


if __name__ == "__main__":
    main()
