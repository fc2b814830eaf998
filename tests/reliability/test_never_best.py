#!/usr/bin/env python3
"""test_never_best.py - the two guarantees of the final rounds, each with a configuration
that would win without them (faultprobe's "second-*" modes: the first run of a
configuration is fine, its second - its first final round - fails, later ones are fine):

1. a --try outside the space that once summed wrong is never best: the try
   NCCL_PROTO=LL128 (not a level of the space, and the fastest configuration of the
   landscape) sums wrong in its first final round only;
2. a finalist that failed in a final round is never best: every LL128 point of the space
   (the fastest ones) crashes in its first final round only.

Each session is checked on its real journal and results.json: the failure happened in a
final round and only there, the configuration's other final rounds were the fastest of
all (so without the guarantee it would have won), and results.json's best is another
configuration. The mutations this test catches (and the redundant guards it cannot)
are listed in docs/guarantees.md, "A failure in a final round disqualifies"."""
import json
import os

import rel

SPACE_NO_LL128 = {"schema": "nccltune-space/1",
                  "params": {"NCCL_PROTO": {"values": ["LL", "Simple", None]},
                             "NCCL_MAX_NCHANNELS": {"values": [1, 2, 4]}}}
SPACE_LL128 = {"schema": "nccltune-space/1",
               "params": {"NCCL_PROTO": {"values": ["LL128", "LL", "Simple", None]},
                          "NCCL_MAX_NCHANNELS": {"values": [1, 2, 4]}}}


def session(name, space, mode, extra):
    d = rel.tmpdir(name)
    out = os.path.join(d, "s")
    state = os.path.join(d, "state")
    os.mkdir(state)
    sp = os.path.join(d, "space.json")
    with open(sp, "w") as f:
        json.dump(space, f)
    log = os.path.join(d, "probe.log")
    tag = rel.unique_tag(name)
    probe = rel.probe(tag, log, rules="NCCL_PROTO=LL128:" + mode, state=state)
    p = rel.run_tuner(["run", "--probe", probe, "--space", sp, "--strategy", "grid",
                       "--budget", "40", "--seed", "1", "--out", out, "--quiet"] + extra)
    rel.check(p.returncode == rel.EXIT_OK, "%s: exit %d" % (name, p.returncode),
              p.stderr[-2000:])
    rel.check_no_leftovers(tag)
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    return rel.journal_runs(out), res


def is_ll128(run):
    return (run.get("env") or {}).get("NCCL_PROTO") == "LL128"


def mean(xs):
    return sum(xs) / len(xs)


def check_final(name, runs, res, want_outcome):
    """The LL128 configurations failed once, in a final round, won every other final
    round, and results.json's best is not one of them."""
    bad = [r for r in runs if r.get("outcome") != "ok"]
    rel.check(len(bad) >= 1 and all(r.get("phase") == "final" and is_ll128(r) for r in bad),
              "%s: the failures are not LL128's final rounds" % name,
              [(r.get("run"), r.get("phase"), r.get("outcome"), r.get("env")) for r in bad])
    rel.check(all(r.get("outcome") == want_outcome for r in bad),
              "%s: failures are not %r" % (name, want_outcome), [r.get("outcome") for r in bad])
    finals = [r for r in runs if r.get("phase") == "final" and r.get("outcome") == "ok"]
    fast = [r["objective_us"] for r in finals if is_ll128(r)]
    slow = [r["objective_us"] for r in finals if not is_ll128(r)]
    rel.check(fast and slow and mean(fast) < min(slow),
              "%s: LL128's good final rounds are not the fastest (the test proves nothing)"
              % name, fast, slow)
    best = res.get("best") or {}
    rel.check((best.get("env") or {}).get("NCCL_PROTO") != "LL128",
              "%s: a configuration that failed in a final round is best" % name, best)
    rel.check(best.get("env") is not None, "%s: no best at all" % name, best)
    return bad


def main():
    rel.require_programs()

    # 1. an off-space --try that sums wrong once, in a final round
    runs, res = session("try-wrong", SPACE_NO_LL128, "second-wrong-sum",
                        ["--try", "NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=1"])
    bad = check_final("try-wrong", runs, res, "verify")
    rel.check(len(bad) == 1 and bad[0].get("try") == 1,
              "try-wrong: want exactly one wrong sum, the try's", bad)
    tries = res.get("tries") or []
    rel.check(len(tries) == 1 and tries[0].get("outcome") == "verify",
              "try-wrong: results.json does not say the try summed wrong", tries)

    # 2. finalists that crash once, in a final round
    runs, res = session("finalist-crash", SPACE_LL128, "second-segv", [])
    search = [r for r in runs if r.get("phase") == "search" and r.get("outcome") == "ok"]
    top = min(search, key=lambda r: r["objective_us"]) if search else {}
    rel.check(is_ll128(top), "finalist-crash: the search's best is not LL128", top)
    check_final("finalist-crash", runs, res, "crash")
    rel.finish()


if __name__ == "__main__":
    main()
