#!/usr/bin/env python3
"""test_first_contact.py - what a new user meets first, against the fake probe:

* every "use it:" command of the summary and of `show` (and the resume hint) can be run
  as printed, a folder with a space quoted: `nccltune` when
  that name in PATH is this program, else the program's own path (after
  scripts/tune.sh, build/cli/nccltune is not in PATH);
* `--bytes` takes G and decimal fractions that give whole bytes (1.5M, 1G) and refuses
  the others (1.3K);
* the end-of-session summary wraps between tokens at the terminal's width (80 columns
  here, on a pseudo-terminal), else at 100, and never splits NCCL_MAX_NCHANNELS=9;
* `--quiet` still says, on stderr, that a model's figures are a model's and where the
  session folder is (and nothing about a model for a measured session);
* `nccltune run --json` prints one JSON object on stdout (status, verdict, source,
  baseline, best, gain with its interval, session folder) while the progress stays on
  stderr.

Usage: test_first_contact.py NCCLTUNE FAKEPROBE"""
import fcntl
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import termios

NT, FAKE = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
FAILS = []


def check(cond, what, detail=""):
    if not cond:
        FAILS.append(what)
        print("FAIL: %s%s" % (what, ("\n    " + str(detail)[-1500:]) if detail else ""),
              file=sys.stderr)


def env(path=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    if path is not None:
        e["PATH"] = path
    return e


def run(args, path=None, **kw):
    return subprocess.run([NT] + args, env=env(path), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120, **kw)


def use_lines(text):
    return [l for l in text.splitlines() if l.startswith("use it:") or
            re.match(r"^ {10}\S+ export ", l)]


def self_command(tmp):
    plain_path = "/usr/bin:/bin"
    out = os.path.join(tmp, "self dir")   # a folder a shell must have quoted
    p = run(["run", "--probe", FAKE, "--budget", "20", "--seed", "2", "--out", out], plain_path)
    check(p.returncode == 0, "self: exit %d" % p.returncode, p.stderr)
    lines = use_lines(p.stderr)
    check(len(lines) == 3, "self: not 3 export commands", p.stderr)
    for l in lines:
        cmd = l[len("use it:"):].strip() if l.startswith("use it:") else l.strip()
        check(cmd.startswith(NT + " export "), "self: not the program's path: " + cmd)
    shell = lines[0][len("use it:"):].strip()
    q = subprocess.run(shell, shell=True, env=env(plain_path), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(q.returncode == 0 and "export NCCL_" in q.stdout, "self: the printed command failed: "
          + shell, q.stderr)
    # show's "use it" commands too (issue 28): the program's path, the folder quoted,
    # each runnable as printed
    p = run(["show", out], plain_path)
    lines = p.stdout.splitlines()
    use = lines[lines.index("use it") + 1:] if "use it" in lines else []
    check(len(use) == 2 and all(l.startswith("  " + NT + " export ") for l in use),
          "show: the use-it commands do not name the program's path", p.stdout)
    if len(use) == 2:
        q = subprocess.run(use[1].strip(), shell=True, env=env(plain_path),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(q.returncode == 0 and "export NCCL_" in q.stdout,
              "show: the printed command failed: " + use[1], q.stderr)
    # nccltune in PATH (this very program): the plain name
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    os.symlink(NT, os.path.join(bindir, "nccltune"))
    p = run(["run", "--probe", FAKE, "--budget", "20", "--seed", "2", "--out",
             os.path.join(tmp, "self2")], bindir + ":" + plain_path)
    check(any(l.startswith("use it:   nccltune export --format shell ") for l in p.stderr.splitlines()),
          "self: nccltune is in PATH but the hint does not say nccltune", p.stderr)


def byte_lists(tmp):
    out = os.path.join(tmp, "bytes")
    p = run(["run", "--probe", FAKE, "--budget", "4", "--bytes", "1.5M,1G,0.5K", "--out", out,
             "--quiet"])
    check(p.returncode == 0, "bytes: exit %d" % p.returncode, p.stderr)
    with open(os.path.join(out, "journal.jsonl")) as f:
        header = json.loads(f.readline())
    sizes = [c["bytes"] for c in header["workload"]["collectives"]]
    check(sorted(sizes) == [512, 1572864, 1073741824], "bytes: the workload has %s" % sizes)
    p = run(["run", "--probe", FAKE, "--budget", "4", "--bytes", "1.3K", "--out",
             os.path.join(tmp, "bytes2"), "--quiet"])
    check(p.returncode == 2 and "'1.3K' is not a whole number of bytes" in p.stderr,
          "bytes: 1.3K: exit %d" % p.returncode, p.stderr)


def summary_lines(text):
    """The summary: from the line after the last progress line, without the export
    commands (one line each however long: they are copied and pasted)."""
    lines = text.replace("\r", "\n").split("\n")
    start = max(i for i, l in enumerate(lines) if l.startswith("session:"))
    return [l for l in lines[start:] if l not in use_lines("\n".join(lines[start:]))
            and not l.startswith("          (also in")]


def no_split_tokens(what, lines, width):
    for l in lines:
        check(len(l) <= width, "%s: a summary line of %d columns: %r" % (what, len(l), l))
        check(not re.search(r"NCCL_[A-Z0-9_]*$", l) or re.search(r"NCCL_[A-Z0-9_]+=\S+$", l),
              "%s: a token split at the line's end: %r" % (what, l))
        check(not re.match(r"^\s*[A-Z0-9_]*=\S*", l) or re.match(r"^\s*NCCL_", l),
              "%s: a line starts with the rest of a token: %r" % (what, l))


def wrapping(tmp):
    # a terminal of 80 columns: progress (the updating line) and summary on the pty
    out = os.path.join(tmp, "wrap")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen([NT, "run", "--probe", FAKE, "--budget", "20", "--seed", "2",
                             "--out", out], env=env(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    data = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    proc.wait(timeout=60)
    os.close(master)
    text = re.sub(r"\x1b\[K", "", data.decode("utf-8", "replace"))
    check(proc.returncode == 0, "wrap: exit %d" % proc.returncode, text)
    lines = summary_lines(text)
    check(any(l.startswith("best:") for l in lines), "wrap: no summary", text)
    no_split_tokens("80 columns", lines, 80)
    # not a terminal: 100 columns
    p = run(["run", "--probe", FAKE, "--budget", "20", "--seed", "2", "--out",
             os.path.join(tmp, "wrap100")])
    check(p.returncode == 0, "wrap 100: exit %d" % p.returncode, p.stderr)
    check(any(l.startswith("best:") for l in summary_lines(p.stderr)), "wrap 100: no summary",
          p.stderr)
    no_split_tokens("100 columns", summary_lines(p.stderr), 100)


def json_summary(tmp):
    out = os.path.join(tmp, "json")
    p = run(["run", "--probe", FAKE, "--budget", "20", "--seed", "2", "--out", out, "--json"])
    check(p.returncode == 0, "json: exit %d" % p.returncode, p.stderr)
    check("[1/20]" in p.stderr and "best:" in p.stderr, "json: progress is not on stderr", p.stderr)
    lines = p.stdout.splitlines()
    check(len(lines) == 1, "json: stdout is not one line", p.stdout)
    try:
        o = json.loads(p.stdout)
    except ValueError:
        check(False, "json: stdout is not JSON", p.stdout)
        return
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    check(o.get("schema") == "nccltune-run/1" and o.get("status") == 0 and o.get("error") is None,
          "json: schema/status/error", o)
    check(o.get("session") == out and o.get("results") == os.path.join(out, "results.json"),
          "json: the session folder", o)
    for k in ("verdict", "source", "baseline", "best", "gain"):
        check(o.get(k) == res.get(k), "json: %s differs from results.json" % k, (o.get(k), res.get(k)))
    check(o.get("verdict") == "recommended" and len(o["gain"].get("ci95", [])) == 2,
          "json: no gain with its interval", o.get("gain"))
    # a failure says so, in the same shape
    p = run(["run", "--resume", os.path.join(tmp, "nothing-here"), "--json"])
    try:
        o = json.loads(p.stdout)
    except ValueError:
        o = {}
    check(p.returncode == 2 and o.get("status") == 2 and "nothing to resume" in (o.get("error") or "")
          and o.get("best", 0) is None, "json: a failed resume", p.stdout + p.stderr)


def quiet(tmp):
    out = os.path.join(tmp, "quiet-model")
    p = run(["run", "--model", "pcie-gen5-8gpu", "--budget", "20", "--out", out, "--quiet"])
    check(p.returncode == 0, "quiet model: exit %d" % p.returncode, p.stderr)
    check(p.stdout == "", "quiet model: stdout not empty", p.stdout)
    check(p.stderr.splitlines() == [
        "nccltune: MODEL pcie-gen5-8gpu: the results are a machine model's, not a measurement",
        "nccltune: session: " + out], "quiet model: stderr", p.stderr)
    out = os.path.join(tmp, "quiet-fake")
    p = run(["run", "--probe", FAKE, "--budget", "20", "--out", out, "--quiet"])
    check(p.returncode == 0, "quiet fake: exit %d" % p.returncode, p.stderr)
    check(p.stderr.splitlines() == ["nccltune: session: " + out], "quiet fake: stderr",
          p.stderr)


def main():
    tmp = tempfile.mkdtemp(prefix="nccltune-first-")
    try:
        self_command(tmp)
        byte_lists(tmp)
        wrapping(tmp)
        json_summary(tmp)
        quiet(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print("%d check(s) failed" % len(FAILS), file=sys.stderr)
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
