#!/usr/bin/env python3
"""sweep_wrapper.py - a --probe for the two-level tests: logs every invocation, then
runs nccltune-model-probe with the same arguments (exec, so the tuner's deadline and
process group apply to it). Knobs, from the environment:
  WRAP_PROBE=PATH         the model probe (required)
  WRAP_LOG=FILE           append one JSON line per invocation: {"pid", "args", "kind"},
                          kind "capabilities", "fingerprint", "sweep" or "run"
  WRAP_NO_CAPS=1          answer --capabilities with an error (exit 2): a plain probe
  WRAP_EDIT=drop-last|echo|algo  rewrite an ok sweep report: drop its last entry
                          (fewer answers than choices asked), or change the first entry's
                          ctas or algo echo (an answer to another choice)
  WRAP_RANKS=N            answer --capabilities and --fingerprint N times, one line each,
                          as `mpirun -np N` of a probe that does not silence ranks > 0
  WRAP_SWEEP_ADD=ARGS     append these words to every sweep run ("--test-corrupt-choice 0")
  WRAP_ONCE_ADD=ARGS      ... to the first sweep run only (WRAP_STATE keeps the count)
  WRAP_SLEEP_AT=N         sleep WRAP_SLEEP_S (default 30) before the N-th sweep run
  WRAP_STATE=FILE         counts sweep runs across invocations
  WRAP_CHOICE_SLEEP_S=S   sleep S seconds per choice of the sweep file before a sweep run
                          (a sweep's time grows with its choices, as on a GPU)"""
import json
import os
import sys
import time

args = sys.argv[1:]
kind = ("capabilities" if "--capabilities" in args else "fingerprint" if "--fingerprint" in args
        else "sweep" if "--sweep" in args else "run")
log = os.environ.get("WRAP_LOG")
if log:
    with open(log, "a") as f:
        f.write(json.dumps({"pid": os.getpid(), "args": args, "kind": kind}) + "\n")
if kind == "capabilities" and os.environ.get("WRAP_NO_CAPS"):
    sys.stderr.write("sweep_wrapper: --capabilities: unknown option\n")
    sys.exit(2)
if kind in ("capabilities", "fingerprint") and os.environ.get("WRAP_RANKS"):
    import subprocess
    probe = os.environ["WRAP_PROBE"]
    p = subprocess.run([probe] + args, stdout=subprocess.PIPE, timeout=60)
    line = p.stdout.decode().strip() + "\n"
    sys.stdout.write(line * int(os.environ["WRAP_RANKS"]))
    sys.exit(p.returncode)
extra = []
if kind == "sweep":
    n = 0
    state = os.environ.get("WRAP_STATE")
    if state:
        try:
            with open(state) as f:
                n = int(f.read() or 0)
        except FileNotFoundError:
            n = 0
        with open(state, "w") as f:
            f.write(str(n + 1))
    extra += os.environ.get("WRAP_SWEEP_ADD", "").split()
    if n == 0:
        extra += os.environ.get("WRAP_ONCE_ADD", "").split()
    if os.environ.get("WRAP_SLEEP_AT") and n + 1 == int(os.environ["WRAP_SLEEP_AT"]):
        time.sleep(float(os.environ.get("WRAP_SLEEP_S", "30")))
    if os.environ.get("WRAP_CHOICE_SLEEP_S"):
        with open(args[args.index("--sweep") + 1]) as f:
            nchoices = len(json.load(f)["choices"])
        time.sleep(float(os.environ["WRAP_CHOICE_SLEEP_S"]) * nchoices)
probe = os.environ["WRAP_PROBE"]
if kind == "sweep" and os.environ.get("WRAP_EDIT"):
    import subprocess
    p = subprocess.run([probe] + args + extra, stdout=subprocess.PIPE, timeout=120)
    rep = json.loads(p.stdout)
    if rep.get("ok") and rep.get("sweep"):
        if os.environ["WRAP_EDIT"] == "drop-last":
            rep["sweep"].pop()
        elif os.environ["WRAP_EDIT"] == "algo":
            rep["sweep"][0]["algo"] = "Tree" if rep["sweep"][0]["algo"] != "Tree" else "Ring"
        else:
            rep["sweep"][0]["ctas"] = rep["sweep"][0]["ctas"] + 3
    sys.stdout.write(json.dumps(rep) + "\n")
    sys.exit(p.returncode)
os.execv(probe, [probe] + args + extra)
