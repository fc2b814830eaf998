#!/usr/bin/env python3
"""test_signals.py - SIGINT and SIGTERM stop a session cleanly: exit 130 within a moment
(a probe in flight, even a hung one, is killed at once, not waited for), the journal is
intact, the probe left nothing running, no results.json is written, and `--resume`
finishes the session without running a recorded configuration again. Resuming a
finished session runs nothing."""
import json
import os
import shutil
import signal
import time

import rel


def wait_for_runs(out, n, proc, limit_s=20):
    end = time.time() + limit_s
    while time.time() < end and proc.poll() is None:
        if len(rel.journal_runs(out)) >= n:
            return True
        time.sleep(0.01)
    return False


def stop(name, sig, timeout, wait_runs=3, **probe_opts):
    d = rel.tmpdir(name)
    out = os.path.join(d, "s")
    log = os.path.join(d, "probe.log")
    tag = rel.unique_tag(name)
    args = ["run", "--probe", rel.probe(tag, log, delay_ms=60, **probe_opts), "--budget", "16",
            "--seed", "3", "--out", out, "--timeout", str(timeout)]
    proc = rel.start_tuner(args)
    # let a few runs complete, then signal while the next probe is in flight
    rel.check(wait_for_runs(out, wait_runs, proc), "%s: the session did not get going" % name)
    time.sleep(0.03)
    t0 = time.time()
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=10)
    except Exception:
        proc.kill()
        _, err = proc.communicate()
    took = time.time() - t0
    print("%s: exit %s after %.2f s" % (name, proc.returncode, took))
    rel.check(proc.returncode == rel.EXIT_INTERRUPTED,
              "%s: exit %s after %s, want 130" % (name, proc.returncode, signal.Signals(sig).name),
              err[-1500:])
    rel.check(took < 3.0, "%s: took %.1f s to stop" % (name, took))
    rel.check("--resume" in err, "%s: the message does not say how to resume" % name, err[-500:])
    rel.check_no_leftovers(tag, grace_s=0.5)
    _, bad = rel.journal(out)
    rel.check(not bad, "%s: damaged journal after the signal" % name, bad[:3])
    rel.check(not os.path.exists(os.path.join(out, "results.json")),
              "%s: results.json written by an interrupted session" % name)
    rel.check(not rel.leftover_temps(out), "%s: temporary files left" % name, rel.leftover_temps(out))
    before = rel.journal_runs(out)
    return d, out, log, tag, before


def resume(name, d, out, log, tag, before):
    calls_before = len(rel.probe_runs(log))
    p = rel.run_tuner(["run", "--resume", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "%s: resume exit %d" % (name, p.returncode), p.stderr[-1500:])
    rel.check_no_leftovers(tag)
    runs = rel.journal_runs(out)
    calls = rel.probe_runs(log)
    rel.check(runs[:len(before)] == before, "%s: resume changed the recorded runs" % name)
    rel.check([r["run"] for r in runs] == list(range(1, len(runs) + 1)),
              "%s: run numbers are not 1..n" % name)
    # the interrupted run in flight is the only probe run without a record
    rel.check(len(runs) <= len(calls) <= len(runs) + 1,
              "%s: %d probe runs for %d records" % (name, len(calls), len(runs)))
    new_calls = len(calls) - calls_before
    rel.check(new_calls == len(runs) - len(before),
              "%s: the resume ran the probe %d times for %d new records"
              % (name, new_calls, len(runs) - len(before)))
    rel.check(os.path.exists(os.path.join(out, "results.json")), "%s: no results.json" % name)

    # a finished session resumed again runs nothing and keeps its result
    with open(os.path.join(out, "results.json")) as f:
        best = json.load(f).get("best")
    p = rel.run_tuner(["run", "--resume", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "%s: resuming a finished session: exit %d"
              % (name, p.returncode), p.stderr[-1000:])
    rel.check(len(rel.probe_runs(log)) == len(calls),
              "%s: resuming a finished session ran the probe" % name)
    with open(os.path.join(out, "results.json")) as f:
        rel.check(json.load(f).get("best") == best, "%s: the best configuration changed" % name)
    shutil.rmtree(d, ignore_errors=True)


def main():
    rel.require_programs()
    r = stop("sigint", signal.SIGINT, 10)
    resume("sigint", *r)
    r = stop("sigterm", signal.SIGTERM, 10)
    resume("sigterm", *r)
    # a hung probe in flight: the stop must not wait for its 30 s deadline
    # (the baseline sets no variable and answers; every candidate sets the channels and hangs)
    d, out, log, tag, before = stop("sigint-hang", signal.SIGINT, 30, wait_runs=1,
                                    rules="NCCL_MAX_NCHANNELS>0:hang")
    shutil.rmtree(d, ignore_errors=True)
    rel.finish()


if __name__ == "__main__":
    main()
