#!/usr/bin/env python3
"""test_probe_lost.py - a probe that stops starting in the middle of a session (issue 31
M10: its script deleted) stops the session after a few runs, not the whole budget: exit
1, a message naming the probe and the failure, the journal intact and resumable once
the probe is back. A region of the space that fails alike (no report, the same init
error) while NCCL's defaults still run is the configurations', not the probe's: the
session runs on, checking NCCL's defaults a few times (each check doubling the streak
the next one needs), and finishes."""
import json
import os
import shlex
import signal
import time

import rel

BUDGET = 40


def wrapper(d, log, tag, remove_after=None, delay_ms=None):
    """A shell script that runs faultprobe; with remove_after it deletes itself once the
    probe has run that many times (the run that deletes it still answers)."""
    path = os.path.join(d, "probe.sh")
    cmd = rel.probe(tag, log, delay_ms=delay_ms)
    lines = ["#!/bin/sh"]
    if remove_after is not None:
        lines.append('n=$(grep -c \'"kind":"run"\' %s 2>/dev/null || echo 0)' % shlex.quote(log))
        lines.append('[ "$n" -ge %d ] && rm -f "$0"' % remove_after)
    lines.append('exec %s "$@"' % cmd)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def lost(name, p, out, script, before, most):
    runs = rel.journal_runs(out)
    rel.check(p.returncode == rel.EXIT_ERROR, "%s: exit %d, want 1" % (name, p.returncode),
              p.stderr[-1500:])
    rel.check("the probe no longer starts" in p.stderr and script in p.stderr and
              "printed garbage" in p.stderr and "--resume" in p.stderr,
              "%s: the message does not name the probe, the failure and the resume" % name,
              p.stderr[-1500:])
    rel.check(before < len(runs) <= before + most,
              "%s: %d runs after the probe went (%d before), want at most %d"
              % (name, len(runs) - before, before, most))
    _, bad = rel.journal(out)
    rel.check(not bad, "%s: unparsable journal lines" % name, bad[:3])
    checks = [r for r in runs[1:] if r.get("phase") == "baseline"]
    rel.check(checks and checks[-1]["outcome"] == "garbage",
              "%s: no check of NCCL's defaults that failed alike" % name,
              [(r["run"], r["phase"], r["outcome"]) for r in runs])


def resumed_script_gone(d):
    """The issue's case: killed, the script deleted, resumed."""
    out, log, tag = os.path.join(d, "gone"), os.path.join(d, "gone.log"), rel.unique_tag("gone")
    script = wrapper(d, log, tag, delay_ms=40)
    proc = rel.start_tuner(["run", "--probe", "sh " + script, "--budget", str(BUDGET),
                            "--strategy", "random", "--seed", "3", "--out", out, "--quiet"])
    end = time.time() + 40
    while time.time() < end and len(rel.journal_runs(out)) < 4 and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    before = len(rel.journal_runs(out))
    rel.check(4 <= before < BUDGET, "gone: the session did not get going (%d runs)" % before)
    os.rename(script, script + ".away")
    p = rel.run_tuner(["run", "--resume", out, "--quiet"])
    # three configurations and their retries, then NCCL's defaults (and its retry)
    lost("resumed, script gone", p, out, script, before, 8)
    # put back: the resume replays the check and finishes
    os.rename(script + ".away", script)
    p = rel.run_tuner(["run", "--resume", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "gone, put back: exit %d" % p.returncode,
              p.stderr[-1500:])
    rel.check("not what this session would run next" not in p.stderr,
              "gone, put back: the replay parted ways with the journal", p.stderr[-1500:])
    rel.check(os.path.exists(os.path.join(out, "results.json")), "gone, put back: no results")


def removed_mid_session(d):
    """The script deletes itself after 6 runs of the probe, no resume."""
    out, log, tag = os.path.join(d, "mid"), os.path.join(d, "mid.log"), rel.unique_tag("mid")
    script = wrapper(d, log, tag, remove_after=6)
    p = rel.run_tuner(["run", "--probe", "sh " + script, "--budget", str(BUDGET),
                       "--strategy", "random", "--seed", "5", "--out", out, "--quiet"])
    lost("removed mid-session", p, out, script, 6, 8)
    rel.check_no_leftovers(tag)


def region_fails(d, mode):
    """A region of the space fails alike while NCCL's defaults run: not the probe's."""
    name = "region %s" % mode
    space = os.path.join(d, "space-%s.json" % mode)
    with open(space, "w") as f:
        json.dump({"schema": "nccltune-space/1",
                   "params": {"NCCL_BUFFSIZE": {"pow2": [65536, 4194304]},
                              "NCCL_NTHREADS": {"values": [64, 128, 256, 512, None]}}}, f)
    out, log = os.path.join(d, "region-" + mode), os.path.join(d, "region-%s.log" % mode)
    tag = rel.unique_tag("region")
    p = rel.run_tuner(["run", "--probe", rel.probe(tag, log, rules="NCCL_BUFFSIZE>65536:" + mode),
                       "--space", space, "--budget", str(BUDGET), "--strategy", "random",
                       "--seed", "7", "--out", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "%s: exit %d, want 0" % (name, p.returncode),
              p.stderr[-1500:])
    runs = rel.journal_runs(out)
    failed = [r for r in runs if r["outcome"] not in ("ok",)]
    rel.check(len(failed) >= 6, "%s: the region did not fail (%d failures)" % (name, len(failed)))
    checks = [r for r in runs[1:] if r.get("phase") == "baseline"]
    rel.check(all(r["outcome"] == "ok" for r in checks), "%s: a check failed" % name,
              [(r["run"], r["outcome"]) for r in checks])
    # 3, then 6, then 12 configurations in a row: at most log2 of the budget
    rel.check(len(checks) <= 4, "%s: %d checks of NCCL's defaults" % (name, len(checks)))
    rel.check(len(runs) <= BUDGET, "%s: %d runs over the budget" % (name, len(runs)))
    return len(checks)


def main():
    rel.require_programs()
    d = rel.tmpdir("probe-lost")
    resumed_script_gone(d)
    removed_mid_session(d)
    checks = region_fails(d, "exit3-nojson") + region_fails(d, "fail-init")
    rel.check(checks >= 1, "regions: no check of NCCL's defaults ran at all")
    rel.finish()


if __name__ == "__main__":
    main()
