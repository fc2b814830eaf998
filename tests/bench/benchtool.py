"""benchtool.py - what the tests of bench/'s Python tools share: the paths, a failure
counter, running one tool with --plugin and --json into a fresh file, and the exit."""
import json
import os
import subprocess
import sys

SRC = os.environ.get("NCCLTUNE_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
FAKE = os.path.join(SRC, "tests", "bench", "fake_probe.py")
_failures = [0]


def check(cond, what):
    """Count and print a failed check."""
    if not cond:
        _failures[0] += 1
        print(f"FAIL: {what}")


def run_tool(name, plugin, args, d, env=None):
    """Run bench/NAME.py with --plugin and --json D/NAME.json; (process, parsed JSON or None)."""
    out = os.path.join(d, name + ".json")
    if os.path.exists(out):
        os.unlink(out)
    p = subprocess.run([sys.executable, os.path.join(SRC, "bench", name + ".py"),
                        "--plugin", plugin, "--json", out] + args,
                       env=dict(os.environ, **(env or {})), capture_output=True, text=True)
    doc = None
    if os.path.exists(out):
        with open(out) as f:
            doc = json.load(f)
    return p, doc


def finish(name):
    """Print the verdict and exit 1 when any check failed."""
    n = _failures[0]
    print(f"{name}: all checks passed" if not n else f"{n} failures")
    sys.exit(1 if n else 0)
