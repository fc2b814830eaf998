#!/usr/bin/env python3
"""test_env_guarantees.py - what reaches the probe's environment, as the probe itself
saw it (faultprobe logs every NCCL_ variable of every run):
  * a variable the user set before starting nccltune is never overridden, whether the
    space searches it or fixes it, in every run (baseline, search, retry, final), and
    also after a resume;
  * NCCL_NVLS_ENABLE is never set unless the space names it (nor any variable the space
    does not mention);
  * the space's fixed variables are in every run."""
import json
import os
import shutil

import rel

SPACE = {"schema": "nccltune-space/1",
         "params": {"NCCL_PROTO": {"values": ["LL", "LL128", "Simple", None]},
                    "NCCL_ALGO": {"values": ["Ring", "Tree", None]},
                    "NCCL_MAX_NCHANNELS": {"int": [1, 8]},
                    "NCCL_NTHREADS": {"values": [64, 128, 256, None]}},
         "fixed": {"NCCL_P2P_LEVEL": "SYS", "NCCL_BUFFSIZE": "131072"}}


def session(name, space, user_env, budget=14, rules=None):
    d = rel.tmpdir(name)
    out = os.path.join(d, "s")
    log = os.path.join(d, "probe.log")
    tag = rel.unique_tag(name)
    args = ["run", "--probe", rel.probe(tag, log, rules=rules), "--budget", str(budget),
            "--seed", "2", "--out", out, "--timeout", "2", "--quiet"]
    if space is not None:
        path = os.path.join(d, "space.json")
        with open(path, "w") as f:
            json.dump(space, f)
        args += ["--space", path]
    p = rel.run_tuner(args, env=rel.clean_env(user_env))
    rel.check(p.returncode == 0, "%s: exit %d" % (name, p.returncode), p.stderr[-1500:])
    rel.check_no_leftovers(tag)
    calls = rel.probe_runs(log)
    rel.check(len(calls) >= budget // 2, "%s: only %d probe runs" % (name, len(calls)))
    return d, out, log, calls


def main():
    rel.require_programs()
    allowed = set(SPACE["params"]) | set(SPACE["fixed"])

    # pinned: a searched variable (NCCL_ALGO) and a fixed one (NCCL_P2P_LEVEL); a
    # crash rule on Ring makes retries happen too
    user = {"NCCL_ALGO": "Ring", "NCCL_P2P_LEVEL": "PIX", "NCCL_DEBUG": "WARN"}
    d, out, log, calls = session("pinned", SPACE, user, rules="NCCL_PROTO=LL128:segv")
    # NCCLTUNE_RUN is 0-based: the journal's run N sees N - 1 (docs/probe-protocol.md);
    # the session has no retry of a crash here that was not journalled, so the probe's
    # runs and the journal's records are the same list
    runs = rel.journal_runs(out)
    rel.check([c.get("nccltune_run") for c in calls] == [str(r["run"] - 1) for r in runs],
              "pinned: NCCLTUNE_RUN is not the journal's run number minus one",
              [c.get("nccltune_run") for c in calls][:8], [r["run"] for r in runs][:8])
    phases = {r.get("phase") for r in rel.journal_runs(out)}
    rel.check({"baseline", "search", "retry", "final"} <= phases,
              "pinned: the session did not go through every phase", sorted(phases))
    for c in calls:
        for k, v in user.items():
            rel.check(c["env"].get(k) == v, "pinned: run saw %s=%r, the user pinned %r"
                      % (k, c["env"].get(k), v), c["env"])
        rel.check(c["env"].get("NCCL_BUFFSIZE") == "131072", "pinned: fixed NCCL_BUFFSIZE missing",
                  c["env"])
        extra = set(c["env"]) - allowed - set(user)
        rel.check(not extra, "pinned: variables the space does not mention were set", sorted(extra))
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    best = (res.get("best") or {}).get("env", {})
    rel.check("NCCL_ALGO" not in best and "NCCL_P2P_LEVEL" not in best,
              "pinned: results.json recommends a pinned variable", best)
    rel.check(res.get("pinned", {}).get("NCCL_ALGO") == "Ring", "pinned: not recorded in results.json",
              res.get("pinned"))
    # a resumed session keeps the recorded pins even if the environment changed since
    n = len(calls)
    for name in ("results.json", "report.html"):
        if os.path.exists(os.path.join(out, name)):
            os.unlink(os.path.join(out, name))
    with open(os.path.join(out, "journal.jsonl"), "rb") as f:
        lines = f.read().split(b"\n")
    with open(os.path.join(out, "journal.jsonl"), "wb") as f:
        f.write(b"\n".join(lines[:6]) + b"\n")
    p = rel.run_tuner(["run", "--resume", out, "--quiet"],
                      env=rel.clean_env({"NCCL_ALGO": "Tree", "NCCL_P2P_LEVEL": "NVL"}))
    rel.check(p.returncode == 0, "pinned-resume: exit %d" % p.returncode, p.stderr[-1000:])
    later = rel.probe_runs(log)[n:]
    rel.check(later, "pinned-resume: the resume ran nothing")
    for c in later:
        rel.check(c["env"].get("NCCL_ALGO") == "Ring" and c["env"].get("NCCL_P2P_LEVEL") == "PIX",
                  "pinned-resume: a resumed run lost the recorded pins", c["env"])
    shutil.rmtree(d, ignore_errors=True)

    # NVLS: the default space, and a space of ours, never set it
    for name, space in (("nvls-default", None), ("nvls-custom", SPACE)):
        d, out, log, calls = session(name, space, {})
        for c in calls:
            rel.check("NCCL_NVLS_ENABLE" not in c["env"], "%s: NCCL_NVLS_ENABLE set" % name, c["env"])
        shutil.rmtree(d, ignore_errors=True)
    # ... unless the space names it
    named = json.loads(json.dumps(SPACE))
    named["params"]["NCCL_NVLS_ENABLE"] = {"values": [0, 1]}
    d, out, log, calls = session("nvls-named", named, {})
    rel.check(any("NCCL_NVLS_ENABLE" in c["env"] for c in calls),
              "nvls-named: a space naming NCCL_NVLS_ENABLE never set it")
    shutil.rmtree(d, ignore_errors=True)
    # ... or the user set it (then it is passed through, pinned)
    d, out, log, calls = session("nvls-user", SPACE, {"NCCL_NVLS_ENABLE": "0"})
    rel.check(all(c["env"].get("NCCL_NVLS_ENABLE") == "0" for c in calls),
              "nvls-user: the user's NCCL_NVLS_ENABLE=0 was not passed through")
    shutil.rmtree(d, ignore_errors=True)
    # a variable nccltune has no table entry for (NCCL adds some in every release) is
    # searched with a conservative value syntax and reaches the probe as given
    future = json.loads(json.dumps(SPACE))
    future["params"]["NCCL_FUTURE_KNOB"] = {"values": ["1", "2", None]}
    d, out, log, calls = session("future-variable", future, {})
    rel.check({c["env"].get("NCCL_FUTURE_KNOB") for c in calls} >= {"1", "2"},
              "future-variable: NCCL_FUTURE_KNOB never reached the probe with each value",
              sorted({str(c["env"].get("NCCL_FUTURE_KNOB")) for c in calls}))
    shutil.rmtree(d, ignore_errors=True)
    rel.finish()


if __name__ == "__main__":
    main()
