#!/usr/bin/env python3
"""compare.py - run the PyTorch verify step (verify_step.py) under NCCL's defaults, the
tuned result and --try configurations, interleaved, and print the measured ratios next to
the ones the tuning session predicted.

    examples/client/compare.py --python /opt/venv/bin/python3 --nproc 8 \\
        --session results/SESSION --try "NCCL_PROTO=LL NCCL_MAX_NCHANNELS=2" --rounds 5

Each condition is a fresh `PYTHON -m torch.distributed.run --nproc_per_node N
verify_step.py ...` (NCCL reads its variables once per process), in rounds whose order
rotates, so drift of the machine hits every condition alike:

  defaults  NCCLTUNE_OFF=1: an installed nccltune block (.pth or sitecustomize) sets
            nothing; NCCL runs with its own defaults.
  tuned     the interpreter as installed: `nccltune export --install` put the tuned
            variables (and the tuner plugin with its table) there, and they reach torch's
            NCCL in every worker. With --apply the session's exports/env.json is set in
            the environment instead (for an interpreter nothing was installed into).
  try N     NCCLTUNE_OFF=1 and the configuration's variables.

Run it with NCCLTUNE_OFF=1 when nccltune is installed into the interpreter that runs it
(else that block sets the tuned variables in compare.py's own environment, which every
condition starts from: it refuses, exit 2). --nccl-debug also prints what NCCL ran
(its TUNING lines, each distinct decision with its count) in each condition.
NCCL_* variables of the calling environment are removed from every condition (they would
win over the installed block and blur the comparison) and listed; --keep-env keeps them.
The ratios are paired per round: exp(mean log(defaults_r / condition_r)) with a 95%
t-interval. Prints a table, and with --json FILE writes every run and ratio. Exit 0, 1
when a run failed or summed wrong, 2 for bad options."""
import argparse
import json
import math
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# two-sided 95% Student t quantiles, dof 1..30
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
       2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
       2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def fail(msg, code=2):
    print(f"compare.py: {msg}", file=sys.stderr)
    sys.exit(code)


def parse_try(text):
    env = {}
    for word in shlex.split(text):
        name, eq, value = word.partition("=")
        if not eq or not name.startswith("NCCL_") or not name[5:].replace("_", "").isalnum():
            fail(f"--try {text!r}: {word!r} is not NCCL_NAME=value")
        env[name] = value
    if not env:
        fail(f"--try {text!r}: no variables")
    return env


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--python", default=sys.executable,
                   help="the interpreter the server uses (default: this one)")
    p.add_argument("--nproc", type=int, default=1, help="GPUs (processes), default 1")
    p.add_argument("--session", help="a session folder: its results.json gives the predicted "
                   "ratios, its exports/env.json the --apply variables")
    p.add_argument("--apply", action="store_true",
                   help="set the session's exports/env.json for 'tuned' instead of relying "
                   "on what is installed into --python")
    p.add_argument("--try", dest="tries", action="append", default=[], metavar="VARS",
                   help="a configuration to compare, 'NCCL_A=1 NCCL_B=2' (repeatable)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds, default 3")
    p.add_argument("--keep-env", action="store_true",
                   help="keep the caller's NCCL_* variables in every condition")
    p.add_argument("--nccl-debug", action="store_true",
                   help="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING in every condition; "
                   "the workers' lines that name a tuner plugin or nccltune are kept")
    p.add_argument("--json", help="write every run and ratio to this file")
    p.add_argument("--launcher", help="the command that starts N workers, '{nproc}' "
                   "substituted (default: PYTHON -m torch.distributed.run --standalone "
                   "--nproc_per_node {nproc})")
    p.add_argument("worker_args", nargs=argparse.REMAINDER,
                   help="after --: options for verify_step.py (--bytes, --ops, --gemm-k ...)")
    a = p.parse_args(argv)
    if a.rounds < 1 or a.nproc < 1:
        fail("--rounds and --nproc must be at least 1")
    if a.worker_args and a.worker_args[0] == "--":
        a.worker_args = a.worker_args[1:]
    if a.apply and not a.session:
        fail("--apply needs --session")
    a.try_envs = [parse_try(t) for t in a.tries]
    return a


def session_env(session):
    path = os.path.join(session, "exports", "env.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    env = doc.get("env", doc) if isinstance(doc, dict) else None
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                            for k, v in env.items()):
        fail(f"{path}: not an object of NAME: value strings")
    return env


def predicted(session):
    """What the session measured: the gain of the best and of each try, or {}."""
    if not session:
        return {}
    path = os.path.join(session, "results.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    out = {"source": doc.get("source")}
    gain = doc.get("gain") or {}
    if isinstance(gain.get("ratio"), (int, float)):
        out["tuned"] = (gain["ratio"], gain.get("ci95"))
    for i, t in enumerate(doc.get("tries") or []):
        r = (t or {}).get("vs_baseline") or {}
        if isinstance(r.get("ratio"), (int, float)):
            out[f"try {i + 1}"] = (r["ratio"], r.get("ci95"))
    return out


def conditions(a):
    base = {k: v for k, v in os.environ.items() if a.keep_env or not k.startswith("NCCL_")}
    dropped = sorted(k for k in os.environ if k.startswith("NCCL_") and k not in base)
    off = dict(base, NCCLTUNE_OFF="1")
    tuned = dict(base)
    tuned.pop("NCCLTUNE_OFF", None)
    if a.apply:
        tuned.update(session_env(a.session))
    if a.nccl_debug:
        for env in (off, tuned):
            env.update(NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,ENV,TUNING")
    conds = [("defaults", off), ("tuned", tuned)]
    for i, t in enumerate(a.try_envs):
        conds.append((f"try {i + 1}", dict(off, **t)))
    return conds, dropped


def run_one(a, env):
    launcher = a.launcher or (f"{shlex.quote(a.python)} -m torch.distributed.run --standalone "
                              "--nproc_per_node {nproc}")
    cmd = shlex.split(launcher.replace("{nproc}", str(a.nproc)))
    cmd += [os.path.join(HERE, "verify_step.py")] + a.worker_args
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       check=False)
    doc = None
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                cand = json.loads(line)
            except ValueError:
                continue
            if isinstance(cand, dict) and cand.get("schema") == "nccltune-client/1":
                doc = cand
    if p.returncode != 0 or doc is None or not doc.get("ok"):
        tail = "\n".join(p.stderr.splitlines()[-12:])
        return None, f"exit {p.returncode}: {tail}"
    if a.nccl_debug:
        lines = (p.stdout + p.stderr).splitlines()
        doc["nccl_log"] = [line for line in lines
                           if "nccltune" in line.lower() or "tuner" in line.lower() or
                           "NCCL version" in line][:40]
        doc["nccl_decisions"] = decisions(lines)
    return doc, None


def decisions(lines):
    """What NCCL ran, from its TUNING lines ("AllReduce: 43008 Bytes -> Algo RING proto LL
    channel{Lo..Hi}={0..15}"): each distinct decision and how many lines (all ranks, every
    call, captured or not) said it."""
    out = {}
    for line in lines:
        at = line.find("Bytes -> Algo")
        if at < 0:
            continue
        start = line.rfind(" ", 0, line.rfind(":", 0, at)) + 1
        key = " ".join(line[start:].split())
        out[key] = out.get(key, 0) + 1
    return out


def installed_block_ran():
    """The file of an nccltune block that ran at this interpreter's start-up and set the
    tuned variables in this very process (a pth install's _nccltune_env module, or a
    sitecustomize with nccltune's block), or None (NCCLTUNE_OFF=1 made it set nothing)."""
    if os.environ.get("NCCLTUNE_OFF") == "1":
        return None
    mod = sys.modules.get("_nccltune_env")
    if mod is not None:
        return getattr(mod, "__file__", None) or "_nccltune_env"
    path = getattr(sys.modules.get("sitecustomize"), "__file__", None)
    if path:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                if "# >>> nccltune >>>" in f.read():
                    return path
        except OSError:
            return None
    return None


def paired(base, cand):
    logs = [math.log(b / c) for b, c in zip(base, cand)]
    n = len(logs)
    mean = sum(logs) / n
    if n < 2:
        return math.exp(mean), None
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1))
    h = T95[min(n - 1, len(T95)) - 1] * sd / math.sqrt(n)
    return math.exp(mean), (math.exp(mean - h), math.exp(mean + h))


def fmt_ratio(r, ci):
    if ci and len(ci) == 2 and all(isinstance(x, (int, float)) for x in ci):
        return f"{r:.2f}x [{ci[0]:.2f}, {ci[1]:.2f}]"
    return f"{r:.2f}x"


def main(argv):
    a = parse_args(argv)
    ran = installed_block_ran()
    if ran:
        # Its variables are in this process's environment, which every condition starts
        # from: 'defaults' would run the tuned result (seen on the rig, 2026-12-06).
        fail(f"{ran}: an installed nccltune block set the tuned variables in this process "
             "at start-up, so every condition would inherit them; run compare.py with "
             "NCCLTUNE_OFF=1 (the 'tuned' condition still gets what is installed)")
    conds, dropped = conditions(a)
    pred = predicted(a.session)
    if dropped:
        print(f"compare.py: not passed to the workers (use --keep-env): {' '.join(dropped)}",
              file=sys.stderr)
    runs = {name: [] for name, _ in conds}
    failed = False
    for r in range(a.rounds):
        order = conds[r % len(conds):] + conds[:r % len(conds)]
        for name, env in order:
            doc, why = run_one(a, env)
            if doc is None:
                print(f"compare.py: round {r + 1}, {name}: {why}", file=sys.stderr)
                failed = True
                continue
            runs[name].append(doc)
            print(f"compare.py: round {r + 1}/{a.rounds} {name}: step "
                  f"{doc['ms']['step']['slowest_rank_median']:.3f} ms", file=sys.stderr)
            for line in doc.get("nccl_log", [])[:3] if r == 0 else []:
                print(f"compare.py:   {name}: {line.strip()}", file=sys.stderr)
            for key, n in sorted(doc.get("nccl_decisions", {}).items()) if r == 0 else []:
                print(f"compare.py:   {name}: NCCL ran {key} ({n} lines)", file=sys.stderr)
    complete = [i for i in range(a.rounds) if all(len(runs[n]) > i for n, _ in conds)]
    rows = []
    first = next((runs[n][0] for n, _ in conds if runs[n]), None)
    if pred.get("source") == "model":
        print("note: the session's predictions are MODEL numbers, not measurements")
    if first:
        print(f"torch {first['torch']}, NCCL {first['nccl_version']} ({first['nccl_path']}), "
              f"{first['world_size']} GPU(s), {first['gpu']}")
    print(f"{'condition':<10} {'step ms':>9} {'all-reduces ms':>15} {'prefill ms':>11} "
          f"{'measured vs defaults':>22} {'session predicted':>20}")
    for name, _ in conds:
        docs = runs[name]
        if not docs:
            print(f"{name:<10} {'failed':>9}")
            continue
        med = lambda key: sorted(d["ms"][key]["slowest_rank_median"] for d in docs)[len(docs) // 2]
        pre = [d["prefill_ms"]["median"] for d in docs if d.get("prefill_ms")]
        n = min(len(runs["defaults"]), len(docs))
        ratio = None
        if name != "defaults" and n:
            base = [runs["defaults"][i]["ms"]["step"]["slowest_rank_median"] for i in range(n)]
            cand = [docs[i]["ms"]["step"]["slowest_rank_median"] for i in range(n)]
            ratio = paired(base, cand)
        p = pred.get(name)
        rows.append({"condition": name, "step_ms": med("step"), "allreduce_ms": med("allreduce"),
                     "prefill_ms": sorted(pre)[len(pre) // 2] if pre else None,
                     "ratio": ratio[0] if ratio else None,
                     "ci95": ratio[1] if ratio else None,
                     "predicted": p[0] if p else None, "predicted_ci95": p[1] if p else None})
        pre_text = f"{rows[-1]['prefill_ms']:.2f}" if pre else "-"
        print(f"{name:<10} {med('step'):>9.3f} {med('allreduce'):>15.3f} {pre_text:>11} "
              f"{(fmt_ratio(*ratio) if ratio else '-'):>22} {(fmt_ratio(*p) if p else '-'):>20}")
    if len(complete) < a.rounds:
        print(f"compare.py: {a.rounds - len(complete)} round(s) incomplete", file=sys.stderr)
    if a.json:
        tmp = a.json + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"schema": "nccltune-client-compare/1", "rows": rows, "runs": runs,
                       "dropped_env": dropped}, f, indent=1, sort_keys=True)
        os.replace(tmp, a.json)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
