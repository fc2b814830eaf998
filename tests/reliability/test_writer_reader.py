#!/usr/bin/env python3
"""test_writer_reader.py - what nccltune writes, its own readers accept (issue 14, items 6
and 7): a session never ends with a journal its replay refuses or a results.json that
show, export and report refuse.

* A probe report with an unknown key nested 999 deep is garbage (reports are bounded to
  16 levels when read), so the journal, which keeps reports as they came, stays
  replayable: --resume and show read the whole session back.
* Latencies of 0 and 5e-324 us are garbage (the floor is 1e-6 us), never the best.
* A fingerprint with a newline, an ESC, a string over 256 bytes or a negative
  gpu_count is not kept (a warning says so): results.json has none, and show, export
  and report read the session."""
import json
import os
import stat

import rel

RULES = "NCCL_PROTO=LL:deep-unknown;NCCL_PROTO=Simple:zero-latency;NCCL_PROTO=LL128:tiny-latency"
SPACE = {"schema": "nccltune-space/1",
         "params": {"NCCL_PROTO": {"values": ["LL", "LL128", "Simple", None]},
                    "NCCL_MAX_NCHANNELS": {"values": [2, 4]}}}
GOOD_FP = {"schema": "nccltune-fingerprint/1", "source": "model", "model": "faultprobe",
           "host": "h", "gpu_count": 2}
BAD_FPS = {
    "newline": dict(GOOD_FP, host="evil\nnccltune: fake line"),
    "escape": dict(GOOD_FP, driver="\x1b]0;title\x07"),
    "long": dict(GOOD_FP, kernel="k" * 300),
    "negative": dict(GOOD_FP, gpu_count=-1),
}


def readable(name, out):
    """show, export and the report read the session back."""
    for args in (["show", out], ["export", "--format", "shell", out], ["report", out]):
        p = rel.run_tuner(args)
        rel.check(p.returncode == 0, "%s: %s: exit %d" % (name, args[0], p.returncode),
                  p.stderr[-1000:])
    rel.check(os.path.exists(os.path.join(out, "report.html")), "%s: no report.html" % name)


def replayable_reports(d):
    sp = os.path.join(d, "space.json")
    with open(sp, "w") as f:
        json.dump(SPACE, f)
    out = os.path.join(d, "s")
    log = os.path.join(d, "probe.log")
    tag = rel.unique_tag("replayable")
    p = rel.run_tuner(["run", "--probe", rel.probe(tag, log, rules=RULES), "--space", sp,
                       "--strategy", "grid", "--budget", "24", "--out", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "reports: exit %d" % p.returncode, p.stderr[-2000:])
    try:
        runs = rel.journal_runs(out)
        _, bad = rel.journal(out)
    except RecursionError:
        rel.check(False, "reports: the journal holds a line nested too deep to read back")
        rel.finish()
    rel.check(not bad, "reports: journal lines its reader cannot parse", [b[:80] for b in bad[:2]])
    hostile = [r for r in runs if (r.get("env") or {}).get("NCCL_PROTO") in ("LL", "LL128", "Simple")]
    rel.check(hostile, "reports: no run of the hostile configurations")
    for r in hostile:
        rel.check(r.get("outcome") == "garbage", "reports: run %s (%s) recorded as %r"
                  % (r.get("run"), r["env"].get("NCCL_PROTO"), r.get("outcome")), r.get("error"))
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    best = (res.get("best") or {}).get("env") or {}
    rel.check("NCCL_PROTO" not in best, "reports: a garbage configuration is best", best)
    base = res.get("baseline") or {}
    rel.check((base.get("objective_us") or 0) >= 0.1, "reports: baseline below the floor", base)
    p = rel.run_tuner(["run", "--resume", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK and "damaged" not in p.stderr,
              "reports: the session's own journal does not replay: exit %d" % p.returncode,
              p.stderr[-1000:])
    readable("reports", out)


def fingerprints(d):
    for name, fp in BAD_FPS.items():
        fpfile = os.path.join(d, "fp-%s.json" % name)
        with open(fpfile, "w") as f:
            json.dump(fp, f)
        wrapper = os.path.join(d, "probe-%s.sh" % name)
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nfor a; do [ "$a" = --fingerprint ] && { cat "%s"; exit 0; }; done\n'
                    'exec "%s" "$@"\n' % (fpfile, rel.FAULTPROBE))
        os.chmod(wrapper, stat.S_IRWXU)
        out = os.path.join(d, "fp-" + name)
        p = rel.run_tuner(["run", "--probe", wrapper, "--budget", "6", "--out", out, "--quiet"])
        rel.check(p.returncode == rel.EXIT_OK, "fingerprint %s: exit %d" % (name, p.returncode),
                  p.stderr[-1000:])
        rel.check("--fingerprint: fingerprint: " in p.stderr and "not kept" in p.stderr,
                  "fingerprint %s: no warning that it was not kept" % name, p.stderr[-1000:])
        rel.check("\x1b" not in p.stderr, "fingerprint %s: an ESC reached the terminal" % name)
        with open(os.path.join(out, "results.json")) as f:
            res = json.load(f)
        rel.check(res.get("fingerprint") is None, "fingerprint %s: written to results.json"
                  % name, res.get("fingerprint"))
        readable("fingerprint " + name, out)


def main():
    rel.require_programs()
    d = rel.tmpdir("writer-reader")
    replayable_reports(d)
    fingerprints(d)
    rel.finish()


if __name__ == "__main__":
    main()
