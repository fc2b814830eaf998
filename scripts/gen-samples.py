#!/usr/bin/env python3
"""gen-samples.py - the documentation's samples of a session, from a real run.

README.md's "What a session looks like" and docs/formats.md's `run --json` sample are
what `scripts/tune.sh` prints on a machine without GPUs: `nccltune run` with no --probe
or --model, so the built-in MODEL pcie-gen5-8gpu stands in (seeded: the same figures
every time). This script runs that session in a temporary folder and writes each sample
between its markers:

    <!-- sample:NAME (scripts/gen-samples.py) -->
    ...
    <!-- end sample:NAME -->

What varies from run to run or machine to machine is normalised, and nothing else: the
session folder (shown as ~/.local/state/nccltune/box-20261206-101500), the path of the
nccltune that ran (shown as build/cli/nccltune) and the progress lines' ETA (wall-clock
rates). The README shows the progress lines shortened ("...").

Usage: gen-samples.py [--build DIR] [--check]
  --build DIR  the build folder whose nccltune runs (default: build)
  --check      write nothing; exit 1 with a diff when a sample differs from the run
               (tests/session/meson.build runs this as session-samples)
Exits 77 where a GPU is visible: there the session would tune the GPUs, not the model."""
import difflib
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOWN_STATE = "~/.local/state"
SHOWN_FOLDER = "box-20261206-101500"
SHOWN_NCCLTUNE = "build/cli/nccltune"
MARK = re.compile(r"(<!-- sample:(?P<name>[a-z-]+) \(scripts/gen-samples\.py\) -->\n)"
                  r"(?P<body>.*?)"
                  r"(<!-- end sample:(?P=name) -->)", re.S)


def gpu_visible():
    if glob.glob("/dev/nvidia[0-9]*"):
        return True
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return p.returncode == 0 and "GPU" in p.stdout


def run_session(nt, tmp, extra, merged):
    """The session scripts/tune.sh runs, in tmp: (exit status, stdout, stderr); with
    merged, stderr is in stdout as a terminal shows them, and "" is stderr."""
    cwd = os.path.join(tmp, "cwd")
    os.makedirs(cwd, exist_ok=True)
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "state"))
    for k in list(env):
        if k.startswith("NCCL_"):
            del env[k]   # a pinned variable would change the session
    p = subprocess.run([nt, "run"] + extra, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT if merged else subprocess.PIPE, text=True,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr or ""


def normalise(text, nt, tmp):
    state = os.path.join(tmp, "state")
    text = text.replace(os.path.realpath(nt), SHOWN_NCCLTUNE).replace(nt, SHOWN_NCCLTUNE)
    text = text.replace(state, SHOWN_STATE)
    return re.sub(r"(nccltune/)[^/\s]+-\d{8}-\d{6}(-\d+)?", r"\g<1>" + SHOWN_FOLDER, text)


def session_sample(out):
    """The terminal's text, progress lines shortened: the first two, the first of each
    later phase; '...' for each gap; every other line as printed."""
    keep, seen, gap = [], set(), False
    progress = re.compile(r"^\[MODEL [^]]+\] \[(\d+)/\d+\] (\w+) +(\w+)")
    for line in out.splitlines():
        m = progress.match(line)
        if not m:
            keep.append(line)
            gap = False
            continue
        line = re.sub(r" \| ETA .*$", "", line)
        key = (m.group(2), m.group(3) == "ok")
        if int(m.group(1)) <= 2 or (key[1] and key not in seen):
            seen.add(key)
            keep.append(line)
            gap = False
        elif not gap:
            keep.append("...")
            gap = True
    return "```\n" + "\n".join(keep).rstrip("\n") + "\n```\n"


def summary_sample(js):
    """The --json object, one key per line, results.json's objects shortened."""
    o = json.loads(js)
    lines = []
    for k, v in o.items():
        if k in ("baseline", "best", "noise") and isinstance(v, dict):
            v = {"...": "as in results.json"}
        lines.append(" %s: %s" % (json.dumps(k), json.dumps(v)))
    return "```json\n{" + ",\n".join(lines)[1:] + "}\n```\n"


def update(path, samples, check):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = set()

    def fill(m):
        name = m.group("name")
        found.add(name)
        return m.group(1) + samples.get(name, m.group("body")) + m.group(4)

    new = MARK.sub(fill, text)
    missing = [n for n in samples if n not in found]
    rel = os.path.relpath(path, ROOT)
    if missing:
        print("%s: no markers for sample %s" % (rel, ", ".join(missing)), file=sys.stderr)
        return False
    if new == text:
        return True
    if check:
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                   rel, rel + " (from the run)"))
        print("%s: a sample differs from what the code prints now; run "
              "scripts/gen-samples.py to regenerate it" % rel, file=sys.stderr)
        return False
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(new)
    os.replace(path + ".tmp", path)
    print("updated %s" % rel)
    return True


def main():
    args = sys.argv[1:]
    check = "--check" in args
    build = os.path.join(ROOT, "build")
    if "--build" in args:
        i = args.index("--build")
        if i + 1 >= len(args):
            sys.exit("gen-samples.py: --build needs a folder")
        build = os.path.abspath(args[i + 1])
    nt = os.path.join(build, "cli", "nccltune")
    if not os.access(nt, os.X_OK):
        sys.exit("gen-samples.py: %s is not built" % nt)
    if gpu_visible():
        print("gen-samples.py: a GPU is visible: the samples show the MODEL session of a "
              "machine without GPUs; skipped")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="nccltune-samples-")
    try:
        rc, out, err = run_session(nt, tmp, [], True)
        if rc != 0:
            sys.exit("gen-samples.py: nccltune run: exit %d: %s" % (rc, (out + err)[-2000:]))
        shutil.rmtree(os.path.join(tmp, "state"))
        rc, js, jerr = run_session(nt, tmp, ["--quiet", "--json"], False)
        if rc != 0:
            sys.exit("gen-samples.py: nccltune run --json: exit %d: %s" % (rc, jerr[-2000:]))
        session = session_sample(normalise(out + err, nt, tmp))
        summary = summary_sample(normalise(js, nt, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ok = update(os.path.join(ROOT, "README.md"), {"session": session}, check)
    ok = update(os.path.join(ROOT, "docs", "formats.md"), {"run-json": summary}, check) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
