"""rel.py - shared helpers of the reliability tests: where the programs are, running the
tuner against faultprobe, reading journals and faultprobe's invocation log, finding
leftover processes by a unique tag, and a check() that records every failed expectation
(file:line, what was expected, what was seen) so one run shows all of them."""
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import traceback

BUILD = os.environ.get("NCCLTUNE_BUILD_ROOT", "")
SOURCE = os.environ.get("NCCLTUNE_SOURCE_ROOT", "")
NCCLTUNE = os.path.join(BUILD, "cli", "nccltune")
FAULTPROBE = os.path.join(BUILD, "tests", "reliability", "faultprobe")

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_NO_CONFIG, EXIT_INTERRUPTED = 0, 1, 2, 4, 130

_failures = []


def check(cond, what, *details):
    """Record a failed expectation with the caller's line; returns cond."""
    if not cond:
        frame = traceback.extract_stack(limit=2)[0]
        msg = "%s:%d: %s" % (os.path.basename(frame.filename), frame.lineno, what)
        for d in details:
            msg += "\n    " + str(d).replace("\n", "\n    ")
        _failures.append(msg)
        print("FAIL " + msg, file=sys.stderr)
    return cond


def finish():
    """Exit 1 if any check failed, 0 otherwise."""
    if _failures:
        print("%d check(s) failed" % len(_failures), file=sys.stderr)
        sys.exit(1)
    print("all checks passed")
    sys.exit(0)


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def require_programs():
    for p in (NCCLTUNE, FAULTPROBE):
        if not os.access(p, os.X_OK):
            print("missing program %s (NCCLTUNE_BUILD_ROOT=%r)" % (p, BUILD), file=sys.stderr)
            sys.exit(1)


def tmpdir(name):
    return tempfile.mkdtemp(prefix="nccltune-rel-%s-" % name)


def unique_tag(name):
    """A marker no other process on the machine carries in its command line."""
    return "relmark-%s-%d-%d" % (name, os.getpid(), int(time.time() * 1000) % 10**9)


def probe(tag, log, mode=None, rules=None, seed=None, state=None, delay_ms=None):
    """The --probe command line for faultprobe."""
    args = [FAULTPROBE, "--tag", tag, "--log", log]
    for opt, val in (("--mode", mode), ("--rules", rules), ("--seed", seed),
                     ("--state", state), ("--delay-ms", delay_ms)):
        if val is not None:
            args += [opt, str(val)]
    return " ".join(shlex.quote(a) for a in args)


def clean_env(extra=None):
    """The tuner's environment: ours minus every NCCL_ variable (a developer's own
    NCCL_DEBUG would pin and change what the tests expect), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    env.update(extra or {})
    return env


def run_tuner(args, env=None, timeout=120):
    """Run nccltune to completion; returns CompletedProcess (text)."""
    return subprocess.run([NCCLTUNE] + args, env=env if env is not None else clean_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout)


def start_tuner(args, env=None):
    """Start nccltune in the background (its own session, so a signal to it alone is
    ours to send)."""
    return subprocess.Popen([NCCLTUNE] + args, env=env if env is not None else clean_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().split(b"\n")
    except FileNotFoundError:
        return []


def read_jsonl(path):
    """(records, bad): the parsed lines and the raw lines that did not parse."""
    recs, bad = [], []
    for raw in read_lines(path):
        if not raw.strip():
            continue
        try:
            recs.append(json.loads(raw))
        except ValueError:
            bad.append(raw)
    return recs, bad


def journal(dir_):
    recs, bad = read_jsonl(os.path.join(dir_, "journal.jsonl"))
    return recs, bad


def journal_runs(dir_):
    recs, _ = journal(dir_)
    return [r for r in recs if r.get("type") == "run"]


def probe_runs(log):
    """faultprobe's own log of its invocations for a run (not --fingerprint)."""
    recs, bad = read_jsonl(log)
    check(not bad, "faultprobe log %s has unparsable lines" % log, bad[:3])
    return [r for r in recs if r.get("kind") == "run"]


def _cmdline(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        if st[st.rindex(")") + 2] == "Z":
            return None   # a zombie holds nothing
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except (OSError, ValueError, IndexError):
        return None


def tagged_pids(tag):
    """Live processes whose command line carries tag (faultprobe and its children)."""
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            cmd = _cmdline(int(name))
            if cmd and tag in cmd:
                pids.append(int(name))
    return pids


def check_no_leftovers(tag, grace_s=1.0):
    """No process with tag may be alive (after a short grace for a dying one). Kills
    any found, by pid: they are this test's own probes."""
    deadline = time.time() + grace_s
    pids = tagged_pids(tag)
    while pids and time.time() < deadline:
        time.sleep(0.05)
        pids = tagged_pids(tag)
    check(not pids, "processes of the probe outlived the tuner", *[(p, _cmdline(p)) for p in pids])
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def env_key(env):
    return tuple(sorted((env or {}).items()))


def leftover_temps(dir_):
    """Temporary files of atomic writes (fs_write_atomic: NAME.tmp.XXXXXX) left in dir_."""
    out = []
    for root, _, files in os.walk(dir_):
        out += [os.path.join(root, f) for f in files if ".tmp." in f]
    return out
