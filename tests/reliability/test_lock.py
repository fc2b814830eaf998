#!/usr/bin/env python3
"""test_lock.py - one session folder takes one nccltune at a time. While a session runs
(its probe kept busy by faultprobe's hang mode), a second `run --out DIR` or `run
--resume DIR` on the same folder exits 1 at once with a message naming the first one's
pid, and the first is unharmed: still running, its journal untouched. The lock (flock
on DIR/.lock) dies with its holder: after a SIGKILL the folder resumes at once, and a
running resume is protected the same way."""
import os
import shutil
import signal
import time

import rel


def wait_busy(proc, out, tag, limit_s=20):
    """Until the session's journal exists and its probe has been running for a moment."""
    end = time.time() + limit_s
    seen, since = None, time.time()
    while time.time() < end and proc.poll() is None:
        pids = rel.tagged_pids(tag)
        if os.path.exists(os.path.join(out, "journal.jsonl")) and pids and pids == seen and \
                time.time() - since >= 0.5:
            return True
        if pids != seen:
            seen, since = pids, time.time()
        time.sleep(0.05)
    return False


def refused(what, args, holder, out):
    before = open(os.path.join(out, "journal.jsonl"), "rb").read()
    p = rel.run_tuner(args, timeout=30)   # a refusal that waited would hang into this
    rel.check(p.returncode == rel.EXIT_ERROR, "%s: exit %d, want 1" % (what, p.returncode),
              p.stderr[-800:])
    rel.check("pid %d" % holder.pid in p.stderr,
              "%s: the message does not name the holder's pid %d" % (what, holder.pid), p.stderr)
    rel.check(holder.poll() is None, "%s: the first session did not survive" % what)
    rel.check(open(os.path.join(out, "journal.jsonl"), "rb").read() == before,
              "%s: the journal changed" % what)


def main():
    rel.require_programs()
    d = rel.tmpdir("lock")
    out = os.path.join(d, "s")
    log = os.path.join(d, "probe.log")
    tag = rel.unique_tag("lock")
    # the mode comes from the environment, so a later resume (without it) does not hang
    hang = rel.clean_env({"FAULTPROBE_MODE": "hang"})
    args = ["run", "--probe", rel.probe(tag, log), "--budget", "6", "--timeout", "60",
            "--out", out, "--quiet"]
    first = rel.start_tuner(args, env=hang)
    rel.check(wait_busy(first, out, tag), "the first session never got busy")
    refused("a second --out", args, first, out)
    refused("a --resume", ["run", "--resume", out, "--quiet"], first, out)
    first.send_signal(signal.SIGKILL)
    first.communicate()
    rel.check_no_leftovers(tag, grace_s=3.0)
    # a stale lock (the file still names the dead pid) does not block a resume; a
    # running resume holds the lock in turn
    again = rel.start_tuner(["run", "--resume", out, "--quiet"], env=hang)
    rel.check(wait_busy(again, out, tag), "the resume never got busy")
    refused("a --resume during a resume", ["run", "--resume", out, "--quiet"], again, out)
    again.send_signal(signal.SIGTERM)
    _, err = again.communicate(timeout=10)
    rel.check(again.returncode == rel.EXIT_INTERRUPTED, "the resume: exit %s after SIGTERM"
              % again.returncode, err[-500:])
    p = rel.run_tuner(["run", "--resume", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "the last resume: exit %d" % p.returncode, p.stderr)
    rel.check(os.path.exists(os.path.join(out, "results.json")), "the session did not finish")
    runs = rel.journal_runs(out)
    rel.check([r["run"] for r in runs] == list(range(1, len(runs) + 1)) and runs,
              "run numbers are not 1..n", [r.get("run") for r in runs])
    rel.check_no_leftovers(tag)
    # a .lock that is a hard link to someone's file is never truncated or written
    victim = os.path.join(d, "victim.txt")
    with open(victim, "w") as f:
        f.write("keep me\n")
    planted = os.path.join(d, "planted")
    os.makedirs(planted)
    os.link(victim, os.path.join(planted, ".lock"))
    p = rel.run_tuner(["run", "--probe", rel.FAULTPROBE, "--budget", "6", "--out", planted,
                       "--quiet"])
    rel.check(p.returncode == rel.EXIT_ERROR and "not a lock file of yours" in p.stderr,
              "a hard-linked .lock: exit %d" % p.returncode, p.stderr[-500:])
    with open(victim) as f:
        rel.check(f.read() == "keep me\n", "a hard-linked .lock: its other file was written")
    shutil.rmtree(d, ignore_errors=True)
    rel.finish()


if __name__ == "__main__":
    main()
