#!/usr/bin/env python3
"""test_hostile_files.py - files planted in a session folder by someone else are never
followed or waited on:

* a symbolic link planted where an atomic write puts its temporary (the old names were
  NAME.tmp.PID, so the tuner's pid is enough to plant one) is never written through:
  results.json, the exports, `nccltune report` and `export --install` leave its target
  alone;
* a journal.jsonl that is a symbolic link (dangling, to a real journal, to /dev/zero),
  a FIFO or a huge file is refused at once, fresh (`--out`) or resumed, exit 2, and
  nothing it points to is created or read;
* a journal either has its header or does not exist: killed the moment it appears, it
  holds its header; when the header cannot be written, there is no journal; an empty journal (left by an older nccltune killed before writing
  its header) is replaced by a fresh `--out`, and a folder without a journal says there
  is nothing to resume."""
import json
import os
import resource
import shutil
import signal
import subprocess
import time

import rel


def plant(names, victim):
    """A preexec_fn: in the child (whose pid the tuner will have) plant a symbolic link
    to victim at each name, '{pid}' replaced by the pid."""
    def fn():
        pid = os.getpid()
        for n in names:
            p = n.replace("{pid}", str(pid))
            os.makedirs(os.path.dirname(p), exist_ok=True)
            os.symlink(victim, p)
    return fn


def run(args, preexec=None, timeout=60, cwd=None):
    return subprocess.run([rel.NCCLTUNE] + args, env=rel.clean_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout,
                          preexec_fn=preexec, cwd=cwd)


def victim_file(d, name):
    v = os.path.join(d, name)
    with open(v, "w") as f:
        f.write("precious\n")
    return v


def victim_unchanged(name, v):
    with open(v) as f:
        rel.check(f.read() == "precious\n", "%s: the symbolic link's target was overwritten" % name)


def planted_temporaries(d):
    victim = victim_file(d, "victim")
    out = os.path.join(d, "s")
    names = [os.path.join(out, "results.json.tmp.{pid}")] + \
        [os.path.join(out, "exports", f + ".tmp.{pid}") for f in
         ("sitecustomize.py", "env.sh", "nccl.env", "nccl.conf", "env.json", "tuner.csv")] + \
        [os.path.join(out, "report.html.tmp.{pid}")]
    # an --out folder holding planted files and no session is refused before anything
    # is written there (exit 2), and the links are left alone
    p = run(["run", "--probe", rel.FAULTPROBE, "--budget", "6", "--out", out, "--quiet"],
            preexec=plant(names, victim))
    rel.check(p.returncode == rel.EXIT_USAGE and "holds no session" in p.stderr,
              "planted: session exit %d" % p.returncode, p.stderr)
    rel.check(not os.path.exists(os.path.join(out, "journal.jsonl")), "planted: a journal")
    victim_unchanged("planted session", victim)
    shutil.rmtree(out)
    p = run(["run", "--probe", rel.FAULTPROBE, "--budget", "6", "--out", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "planted: session exit %d" % p.returncode, p.stderr)
    rel.check(os.path.isfile(os.path.join(out, "results.json")), "planted: no results.json")
    # nccltune report: a link where its temporary went before (the session's own
    # planted link has done its job: remove it first)
    for leftover in [f for f in os.listdir(out) if f.startswith("report.html.tmp")]:
        os.unlink(os.path.join(out, leftover))
    p = run(["report", out], preexec=plant([os.path.join(out, "report.html.tmp.{pid}")], victim))
    rel.check(p.returncode == rel.EXIT_OK, "planted: report exit %d" % p.returncode, p.stderr)
    victim_unchanged("planted report", victim)
    # (temporaries are mkstemp names today, so the links above are never hit; what can be
    # planted is the target itself:) report.html as a link to the victim is replaced by
    # the new file, never written through
    os.unlink(os.path.join(out, "report.html"))
    os.symlink(victim, os.path.join(out, "report.html"))
    p = run(["report", out])
    rel.check(p.returncode == rel.EXIT_OK, "linked target: report exit %d" % p.returncode,
              p.stderr)
    victim_unchanged("report.html linked to the victim", victim)
    rel.check(not os.path.islink(os.path.join(out, "report.html")) and
              os.path.isfile(os.path.join(out, "report.html")),
              "report.html is still the link, not a new regular file")
    # export --install into a target beside which a temporary is planted
    target = os.path.join(d, "site", "sitecustomize.py")
    os.makedirs(os.path.dirname(target))
    with open(target, "w") as f:
        f.write("# mine\n")
    p = run(["export", "--format", "sitecustomize", "--allow-model", "--install=" + target, out],
            preexec=plant([target + ".tmp.{pid}", target + ".nccltune-bak.tmp.{pid}"], victim))
    rel.check(p.returncode == rel.EXIT_OK, "planted: install exit %d" % p.returncode, p.stderr)
    victim_unchanged("planted install", victim)
    with open(target) as f:
        rel.check("nccltune" in f.read(), "planted: the install did not write its target")


def journal_links(d, base):
    """journal.jsonl as a symbolic link, a FIFO or a huge file: refused at once."""
    good = os.path.join(base, "journal.jsonl")
    # a fresh --out whose journal.jsonl is a dangling link: refused, the target not created
    out = os.path.join(d, "dangling")
    os.makedirs(out)
    target = os.path.join(d, "created-through-link")
    os.symlink(target, os.path.join(out, "journal.jsonl"))
    p = run(["run", "--probe", rel.FAULTPROBE, "--budget", "4", "--out", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_USAGE, "dangling link --out: exit %d, want 2" % p.returncode,
              p.stderr)
    rel.check("symbolic link" in p.stderr, "dangling link --out: message", p.stderr)
    rel.check(not os.path.exists(target), "dangling link --out: its target was created")
    cases = []
    # --resume through a link to a real journal, and through a link to /dev/zero
    for name, link_to in (("link-to-journal", good), ("link-to-zero", "/dev/zero")):
        s = os.path.join(d, name)
        os.makedirs(s)
        os.symlink(link_to, os.path.join(s, "journal.jsonl"))
        cases.append((name, s, "symbolic link"))
    s = os.path.join(d, "fifo")
    os.makedirs(s)
    os.mkfifo(os.path.join(s, "journal.jsonl"))
    cases.append(("fifo", s, "not a regular file"))
    s = os.path.join(d, "huge")
    os.makedirs(s)
    with open(os.path.join(s, "journal.jsonl"), "wb") as f:
        f.write(open(good, "rb").read())
        f.truncate(2 << 30)   # sparse: 2 GiB that take no room
    cases.append(("huge", s, "larger than"))
    for name, s, why in cases:
        try:
            p = run(["run", "--resume", s, "--quiet"], timeout=20)
        except subprocess.TimeoutExpired:
            rel.check(False, "%s: --resume hung" % name)
            continue
        rel.check(p.returncode == rel.EXIT_USAGE, "%s: --resume exit %d, want 2" % (name, p.returncode),
                  p.stderr)
        rel.check(why in p.stderr and "journal.jsonl" in p.stderr,
                  "%s: the message does not say '%s' naming the journal" % (name, why), p.stderr)
        rel.check(not os.path.exists(os.path.join(s, "results.json")), "%s: results written" % name)
    with open(good, "rb") as f:
        rel.check(f.read().startswith(b"{"), "the linked journal was modified")


def small_files():
    """In the child: files may not grow past 512 bytes (EFBIG, SIGXFSZ ignored)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))


def journal_whole(d):
    """Killed the moment journal.jsonl appears, the journal holds its header."""
    for i in range(6):
        out = os.path.join(d, "kill-%d" % i)
        path = os.path.join(out, "journal.jsonl")
        proc = rel.start_tuner(["run", "--probe", rel.FAULTPROBE, "--budget", "4", "--out", out,
                                "--quiet"])
        end = time.time() + 20
        while time.time() < end and not os.path.lexists(path) and proc.poll() is None:
            pass
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        if not os.path.lexists(path):
            rel.check(False, "kill %d: the journal never appeared" % i)
            continue
        with open(path, "rb") as f:
            first = f.read().split(b"\n")[0]
        try:
            header = json.loads(first)
        except ValueError:
            header = None
        rel.check(isinstance(header, dict) and header.get("type") == "session",
                  "kill %d: a journal without its header: %r" % (i, first[:80]))
        p = run(["run", "--resume", out, "--quiet"])
        rel.check(p.returncode == rel.EXIT_OK, "kill %d: resume exit %d" % (i, p.returncode), p.stderr)
    # the header cannot be written (files may not grow past 512 bytes, as on a full
    # disk): no journal at all is left, and the folder then takes a session
    out = os.path.join(d, "nohead")
    p = run(["run", "--probe", rel.FAULTPROBE, "--budget", "4", "--out", out, "--quiet"],
            preexec=small_files)
    rel.check(p.returncode == rel.EXIT_ERROR, "no room for the header: exit %d, want 1"
              % p.returncode, p.stderr)
    rel.check(not os.path.lexists(os.path.join(out, "journal.jsonl")),
              "no room for the header: a journal without its header was left")
    rel.check(not rel.leftover_temps(out), "no room for the header: temporaries left",
              rel.leftover_temps(out))
    p = run(["run", "--probe", rel.FAULTPROBE, "--budget", "4", "--out", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "no room for the header, then room: exit %d"
              % p.returncode, p.stderr)
    # an empty journal (an older nccltune killed before its header) is nothing: --out
    # takes the folder, and a folder without a journal has nothing to resume
    out = os.path.join(d, "empty")
    os.makedirs(out)
    open(os.path.join(out, "journal.jsonl"), "w").close()
    p = run(["run", "--probe", rel.FAULTPROBE, "--budget", "4", "--out", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "empty journal --out: exit %d" % p.returncode, p.stderr)
    rel.check(len(rel.journal_runs(out)) == 4, "empty journal --out: not a whole session")
    out = os.path.join(d, "nojournal")
    os.makedirs(out)
    p = run(["run", "--resume", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_USAGE and "nothing to resume" in p.stderr,
              "no journal: exit %d, want 2 saying there is nothing to resume" % p.returncode,
              p.stderr)


def main():
    rel.require_programs()
    d = rel.tmpdir("hostile-files")
    planted_temporaries(d)
    base = os.path.join(d, "base")
    p = run(["run", "--probe", rel.FAULTPROBE, "--budget", "4", "--out", base, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "base session exit %d" % p.returncode, p.stderr)
    journal_links(d, base)
    journal_whole(d)
    shutil.rmtree(d, ignore_errors=True)
    rel.finish()


if __name__ == "__main__":
    main()
