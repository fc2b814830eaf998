#!/usr/bin/env python3
"""test_nranks.py - a report of another number of ranks is not a measurement of the same
thing. A run whose report's nranks differs from the baseline's (or, before an ok
baseline, from the fingerprint's gpu_count, unless the probe picks its GPUs with --gpus
or a launcher) is `garbage`, with a message giving both numbers, and never wins, however
fast it looks: faultprobe's nranks1 mode reports 1 rank on its 2-GPU fingerprint."""
import json
import os
import shutil

import rel


def session(d, name, extra, **opts):
    out = os.path.join(d, name)
    log = os.path.join(d, name + ".log")
    tag = rel.unique_tag(name)
    probe = rel.probe(tag, log, **opts) + extra
    p = rel.run_tuner(["run", "--probe", probe, "--budget", "14", "--seed", "5", "--out", out,
                       "--quiet"])
    rel.check_no_leftovers(tag)
    return p, out


def main():
    rel.require_programs()
    d = rel.tmpdir("nranks")
    # some configurations answer with 1 rank (LL is the landscape's fastest protocol)
    p, out = session(d, "some", "", rules="NCCL_PROTO=LL:nranks1")
    rel.check(p.returncode == rel.EXIT_OK, "some: exit %d" % p.returncode, p.stderr[-800:])
    bad = [r for r in rel.journal_runs(out) if r["env"].get("NCCL_PROTO") == "LL"]
    rel.check(bad, "some: no run of NCCL_PROTO=LL")
    for r in bad:
        rel.check(r["outcome"] == "garbage" and "nranks 1 differs from the baseline's 2" in r["error"],
                  "some: run %d: %s (%s), want garbage naming both rank counts"
                  % (r["run"], r["outcome"], r["error"]))
    with open(os.path.join(out, "results.json")) as f:
        best = json.load(f)["best"]
    rel.check(best and best["env"].get("NCCL_PROTO") != "LL", "some: a 1-rank run won", best)
    # every run, the baseline too: no ok baseline, so the fingerprint's gpu_count decides
    p, out = session(d, "all", "", mode="nranks1")
    rel.check(p.returncode == rel.EXIT_NO_CONFIG, "all: exit %d, want 4" % p.returncode,
              p.stderr[-800:])
    runs = rel.journal_runs(out)
    rel.check(runs and "nranks 1 differs from the fingerprint's gpu_count 2" in runs[0]["error"],
              "all: the baseline's error does not give both numbers", runs[:1])
    # --gpus 1: the probe picks its GPUs, the fingerprint says nothing of them
    p, out = session(d, "gpus", " --gpus 1", mode="nranks1")
    rel.check(p.returncode == rel.EXIT_OK, "--gpus 1: exit %d" % p.returncode, p.stderr[-800:])
    rel.check(all(r["outcome"] == "ok" for r in rel.journal_runs(out)),
              "--gpus 1: runs were refused", [r["error"] for r in rel.journal_runs(out)][:3])
    shutil.rmtree(d, ignore_errors=True)
    rel.finish()


if __name__ == "__main__":
    main()
