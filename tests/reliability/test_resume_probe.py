#!/usr/bin/env python3
"""test_resume_probe.py - a resume whose recorded probe can no longer start (a relative
--probe resumed from another folder, a binary moved away) stops before its first run:
exit 1, a message naming the command and why, nothing spent (no record added to the
journal, no probe run). Resumed from the right folder, or with the binary back, it
finishes. A finished session resumes without running anything, so a missing probe does
not matter there."""
import os
import shutil
import signal
import subprocess
import time

import rel


def start(args, cwd):
    return subprocess.Popen([rel.NCCLTUNE] + args, cwd=cwd, env=rel.clean_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run(args, cwd):
    return subprocess.run([rel.NCCLTUNE] + args, cwd=cwd, env=rel.clean_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)


def killed_session(name, probe_word, cwd, out, log):
    proc = start(["run", "--probe", "%s --log %s --delay-ms 40" % (probe_word, log), "--budget",
                  "12", "--out", out, "--quiet"], cwd)
    end = time.time() + 20
    while time.time() < end and len(rel.journal_runs(out)) < 3 and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    rel.check(len(rel.journal_runs(out)) >= 3, "%s: the session did not get going" % name)


def refused(name, out, cwd, log, word):
    before = open(os.path.join(out, "journal.jsonl"), "rb").read()
    calls = len(rel.probe_runs(log))
    p = run(["run", "--resume", out, "--quiet"], cwd)
    rel.check(p.returncode == rel.EXIT_ERROR, "%s: exit %d, want 1" % (name, p.returncode),
              p.stderr[-800:])
    rel.check("cannot start the probe" in p.stderr and word in p.stderr,
              "%s: the message does not name the command %s" % (name, word), p.stderr)
    rel.check(open(os.path.join(out, "journal.jsonl"), "rb").read() == before,
              "%s: the journal changed (runs spent)" % name)
    rel.check(len(rel.probe_runs(log)) == calls, "%s: the probe ran" % name)


def main():
    rel.require_programs()
    d = rel.tmpdir("resume-probe")
    # a relative --probe, resumed from another folder
    work = os.path.join(d, "work")
    os.makedirs(os.path.join(work, "bin"))
    shutil.copy(rel.FAULTPROBE, os.path.join(work, "bin", "fp"))
    out, log = os.path.join(d, "rel-s"), os.path.join(d, "rel.log")
    killed_session("relative", "./bin/fp", work, out, log)
    refused("relative, from elsewhere", out, d, log, "./bin/fp")
    p = run(["run", "--resume", out, "--quiet"], work)
    rel.check(p.returncode == rel.EXIT_OK, "relative, from its folder: exit %d" % p.returncode,
              p.stderr[-800:])
    # a moved binary (absolute path), then put back
    fp = os.path.join(d, "bin2", "fp")
    os.makedirs(os.path.dirname(fp))
    shutil.copy(rel.FAULTPROBE, fp)
    out, log = os.path.join(d, "abs-s"), os.path.join(d, "abs.log")
    killed_session("moved", fp, d, out, log)
    os.rename(fp, fp + ".moved")
    refused("moved", out, d, log, fp)
    os.rename(fp + ".moved", fp)
    p = run(["run", "--resume", out, "--quiet"], d)
    rel.check(p.returncode == rel.EXIT_OK, "moved back: exit %d" % p.returncode, p.stderr[-800:])
    # finished: nothing to run, so the probe is not needed
    os.rename(fp, fp + ".moved")
    p = run(["run", "--resume", out, "--quiet"], d)
    rel.check(p.returncode == rel.EXIT_OK, "finished, probe gone: exit %d" % p.returncode,
              p.stderr[-800:])
    shutil.rmtree(d, ignore_errors=True)
    rel.finish()


if __name__ == "__main__":
    main()
