#!/usr/bin/env python3
"""test_compare.py - examples/client/compare.py against a fake torchrun (fake_torchrun.py):
the conditions get the environments they promise, the ratios are paired per round, the
session's predictions are printed beside them, failures exit 1, bad options exit 2."""
import json
import os
import subprocess
import sys
import tempfile

SRC = os.environ.get("NCCLTUNE_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
COMPARE = os.path.join(SRC, "examples", "client", "compare.py")
FAKE = os.path.join(SRC, "tests", "client", "fake_torchrun.py")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL: {what}")


def run(args, env=None):
    e = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, COMPARE, "--launcher",
                           f"{sys.executable} {FAKE} {{nproc}}"] + args,
                          env=e, capture_output=True, text=True, check=False)


with tempfile.TemporaryDirectory() as d:
    sess = os.path.join(d, "s")
    os.makedirs(os.path.join(sess, "exports"))
    with open(os.path.join(sess, "results.json"), "w") as f:
        json.dump({"source": "model", "gain": {"ratio": 2.1, "ci95": [2.0, 2.2]},
                   "tries": [{"vs_baseline": {"ratio": 1.2, "ci95": [1.1, 1.3]}}]}, f)
    with open(os.path.join(sess, "exports", "env.json"), "w") as f:
        json.dump({"NCCL_FAKE_STEP_MS": "4.0"}, f)
    out = os.path.join(d, "out.json")
    p = run(["--nproc", "2", "--session", sess, "--try", "NCCL_PROTO=LL", "--rounds", "3",
             "--json", out, "--", "--bytes", "43008"], {"NCCL_ALGO": "Tree"})
    check(p.returncode == 0, f"exit 0 (got {p.returncode}: {p.stderr})")
    check("MODEL numbers" in p.stdout, "a model session's predictions are labelled")
    check("not passed to the workers (use --keep-env): NCCL_ALGO" in p.stderr,
          "the caller's NCCL_ALGO is dropped and named")
    doc = json.load(open(out))
    rows = {r["condition"]: r for r in doc["rows"]}
    check(rows["defaults"]["step_ms"] == 10.0, "defaults ran with NCCLTUNE_OFF=1")
    check(abs(rows["tuned"]["ratio"] - 2.0) < 1e-9, f"tuned 2.00x (got {rows['tuned']['ratio']})")
    check(abs(rows["try 1"]["ratio"] - 1.25) < 1e-9, "try 1.25x")
    check(rows["tuned"]["predicted"] == 2.1 and rows["try 1"]["predicted"] == 1.2,
          "predictions from results.json")
    for run_doc in doc["runs"]["defaults"]:
        check(run_doc["env"].get("NCCLTUNE_OFF") == "1" and "NCCL_ALGO" not in run_doc["env"],
              "defaults: NCCLTUNE_OFF=1, no caller NCCL_*")
    for run_doc in doc["runs"]["try 1"]:
        check(run_doc["env"].get("NCCL_PROTO") == "LL" and run_doc["env"].get("NCCLTUNE_OFF") == "1",
              "try: its variables with the installed block off")
    for run_doc in doc["runs"]["tuned"]:
        check("NCCLTUNE_OFF" not in run_doc["env"], "tuned: the installed block is on")
        check(run_doc["argv"][-2:] == ["--bytes", "43008"], "worker options passed through")
    check("2.00x [2.00, 2.00]" in p.stdout and "2.10x [2.00, 2.20]" in p.stdout,
          "table shows measured and predicted ratios")

    # --apply: the session's env.json is set for 'tuned'
    p = run(["--session", sess, "--apply", "--rounds", "2", "--json", out])
    rows = {r["condition"]: r for r in json.load(open(out))["rows"]}
    check(p.returncode == 0 and abs(rows["tuned"]["ratio"] - 2.5) < 1e-9,
          f"--apply sets exports/env.json (got {rows['tuned']['ratio']})")

    # --nccl-debug: what NCCL ran in each condition, from its TUNING lines, counted
    p = run(["--rounds", "1", "--nproc", "2", "--nccl-debug"])
    check(p.returncode == 0 and
          "defaults: NCCL ran AllReduce: 43008 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..3} "
          "(2 lines)" in p.stderr and
          "tuned: NCCL ran AllReduce: 43008 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..3} "
          "(2 lines)" in p.stderr, f"--nccl-debug prints NCCL's decisions: {p.stderr[-600:]}")

    # an installed block that ran in compare.py's own process (a sitecustomize with
    # nccltune's block on its path) would hand its variables to 'defaults': refused,
    # exit 2, unless NCCLTUNE_OFF=1 made it set nothing
    site = os.path.join(d, "site")
    os.makedirs(site)
    with open(os.path.join(site, "sitecustomize.py"), "w") as f:
        f.write("# >>> nccltune >>>\nimport os as _os\nif _os.environ.get(\"NCCLTUNE_OFF\") != \"1\":\n"
                "    _os.environ.setdefault(\"NCCL_FAKE_STEP_MS\", \"4.0\")\n# <<< nccltune <<<\n")
    p = run(["--rounds", "1"], {"PYTHONPATH": site})
    check(p.returncode == 2 and "run compare.py with NCCLTUNE_OFF=1" in p.stderr,
          f"an installed block in compare.py's process is refused (exit {p.returncode}: {p.stderr})")
    p = run(["--rounds", "1", "--json", out], {"PYTHONPATH": site, "NCCLTUNE_OFF": "1"})
    rows = {r["condition"]: r for r in json.load(open(out))["rows"]}
    check(p.returncode == 0 and rows["defaults"]["step_ms"] == 10.0,
          f"with NCCLTUNE_OFF=1 it runs, defaults at 10 ms (exit {p.returncode}: {p.stderr})")

    # a failing run: exit 1, named
    p = run(["--try", "NCCL_PROTO=LL", "--rounds", "1"], {"FAKE_FAIL": "1"})
    check(p.returncode == 1 and "try 1: exit 1" in p.stderr, "a failed run exits 1 and is named")

    # bad options: exit 2
    for bad in (["--try", "PROTO=LL"], ["--rounds", "0"], ["--apply"]):
        p = run(bad)
        check(p.returncode == 2, f"{bad}: exit 2 (got {p.returncode})")

print("client compare: ok" if not failures else f"{failures} failure(s)")
sys.exit(1 if failures else 0)
