#!/usr/bin/env python3
"""test_escapes.py - a probe's child that leaves the probe's process group (setsid(),
setpgid(0, 0), or setsid() and a second fork, like a daemon) does not outlive the
session: the tuner is a child subreaper while a session runs, so such orphans become its
children, and after every probe run it ends each child it did not have before. Checked
by scanning /proc for the probe's tag after a normal end and after SIGTERM (exit 130)
with an escaped process alive during the run in flight."""
import os
import shutil
import signal
import time

import rel

RULES = ("NCCL_PROTO=LL:escape-setsid;NCCL_PROTO=Simple:escape-setpgid;"
         "NCCL_ALGO=Ring:escape-daemon")


def normal_end(d):
    out = os.path.join(d, "s")
    log = os.path.join(d, "probe.log")
    tag = rel.unique_tag("escapes")
    p = rel.run_tuner(["run", "--probe", rel.probe(tag, log, rules=RULES), "--budget", "16",
                       "--seed", "2", "--out", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "normal end: exit %d" % p.returncode, p.stderr[-1000:])
    modes = {r["mode"] for r in rel.probe_runs(log)}
    for m in ("escape-setsid", "escape-setpgid", "escape-daemon"):
        rel.check(m in modes, "normal end: no run escaped by %s (modes: %s)" % (m, sorted(modes)))
    rel.check_no_leftovers(tag)


def sigterm(d):
    out = os.path.join(d, "t")
    log = os.path.join(d, "probe-t.log")
    tag = rel.unique_tag("escapes-term")
    # every run escapes first, then takes 5 s to answer: the SIGTERM finds one escaped
    proc = rel.start_tuner(["run", "--probe", rel.probe(tag, log, mode="escape-setsid",
                                                         delay_ms=5000),
                            "--budget", "8", "--timeout", "30", "--out", out, "--quiet"])
    # wait for a measuring run (it logs itself first; the --fingerprint call before it
    # does not, and its escaped child is ended when it returns) with its escaped child
    end = time.time() + 20
    seen = False
    while time.time() < end and not seen and proc.poll() is None:
        seen = bool(rel.probe_runs(log)) and len(rel.tagged_pids(tag)) >= 2
        if not seen:
            time.sleep(0.02)
    rel.check(seen, "sigterm: the probe and its escaped child never ran")
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=10)
    except Exception:
        proc.kill()
        _, err = proc.communicate()
    rel.check(proc.returncode == rel.EXIT_INTERRUPTED, "sigterm: exit %s, want 130" % proc.returncode,
              err[-800:])
    rel.check_no_leftovers(tag)


def main():
    rel.require_programs()
    d = rel.tmpdir("escapes")
    normal_end(d)
    sigterm(d)
    shutil.rmtree(d, ignore_errors=True)
    rel.finish()


if __name__ == "__main__":
    main()
