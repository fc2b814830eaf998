#!/usr/bin/env python3
"""test_out_mount.py - output folders on a read-only and on a full file system, made
with a tiny tmpfs mounted in a private mount namespace (unshare -m), so nothing outside
this test sees it and it vanishes with the test. Needs the right to mount (root with
CAP_SYS_ADMIN); elsewhere the test is skipped (exit 77) and says why. (Without
mounting, test_bad_input's journal-cannot-grow case covers the write errors through
RLIMIT_FSIZE.)

Checks: a read-only folder is refused with exit 1 and the system's reason; a file
system that fills up during the runs, or when results.json is written, stops the session
with exit 1 naming the file and the reason; the journal written so far is whole, no
temporary file is left, no partial results.json exists, and once there is room again
`--resume` finishes the session without running the probe again."""
import os
import shlex
import shutil
import subprocess

import rel


def in_namespace(mnt, mount_opts, command, copy_to):
    """Mount a tmpfs on mnt with mount_opts, run command (a list) there, copy what it
    left in mnt to copy_to, return (exit status of command, its stderr)."""
    script = ("mount -t tmpfs -o %s none %s || exit 90\n"
              "%s 2>%s/stderr; rc=$?\n"
              "cp -a %s/. %s/ 2>/dev/null\n"
              "exit $rc\n" % (mount_opts, shlex.quote(mnt), " ".join(shlex.quote(c) for c in command),
                              shlex.quote(copy_to), shlex.quote(mnt), shlex.quote(copy_to)))
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                       env=rel.clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    err = ""
    try:
        with open(os.path.join(copy_to, "stderr")) as f:
            err = f.read()
        os.unlink(os.path.join(copy_to, "stderr"))
    except FileNotFoundError:
        pass
    return p.returncode, err


def can_mount(root):
    mnt = os.path.join(root, "probe-mnt")
    os.makedirs(mnt)
    try:
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            "mount -t tmpfs -o size=8k none %s" % shlex.quote(mnt)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return None if p.returncode == 0 else p.stdout.strip() or "exit %d" % p.returncode


def full_case(root, name, budget, size, culprit):
    mnt = os.path.join(root, name + "-mnt")
    copy = os.path.join(root, name)
    os.makedirs(mnt)
    os.makedirs(copy)
    tag = rel.unique_tag(name)
    cmd = [rel.NCCLTUNE, "run", "--probe", "%s --tag %s" % (rel.FAULTPROBE, tag), "--budget",
           str(budget), "--out", os.path.join(mnt, "s"), "--quiet"]
    rc, err = in_namespace(mnt, "size=" + size, cmd, copy)
    out = os.path.join(copy, "s")
    print("%s: exit %d: %s" % (name, rc, err.strip()))
    rel.check(rc == rel.EXIT_ERROR, "%s: exit %d, want 1" % (name, rc), err)
    rel.check(culprit in err and "No space left on device" in err,
              "%s: the message does not name %s and the reason" % (name, culprit), err)
    recs, bad = rel.journal(out)
    rel.check(recs and not bad, "%s: the journal is not whole" % name, bad[:2])
    rel.check(not rel.leftover_temps(out), "%s: temporary files left" % name, rel.leftover_temps(out))
    rel.check(not os.path.exists(os.path.join(out, "results.json")), "%s: partial results.json" % name)
    rel.check_no_leftovers(tag)
    # with room again, the session finishes from its journal
    runs = rel.journal_runs(out)
    p = rel.run_tuner(["run", "--resume", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "%s: resume exit %d" % (name, p.returncode), p.stderr)
    rel.check(rel.journal_runs(out)[:len(runs)] == runs, "%s: resume changed recorded runs" % name)
    rel.check(os.path.exists(os.path.join(out, "results.json")), "%s: no results.json after resume" % name)


def main():
    rel.require_programs()
    if not shutil.which("unshare"):
        rel.skip("unshare (util-linux) is not installed")
    root = rel.tmpdir("mount")
    why = can_mount(root)
    if why:
        shutil.rmtree(root, ignore_errors=True)
        rel.skip("cannot mount a tmpfs in a private mount namespace here (needs root with "
                 "CAP_SYS_ADMIN): " + why)

    # read-only: refused before anything runs
    mnt = os.path.join(root, "ro-mnt")
    os.makedirs(mnt)
    os.makedirs(os.path.join(root, "ro"))
    rc, err = in_namespace(mnt, "ro,size=8k", [rel.NCCLTUNE, "run", "--probe", rel.FAULTPROBE,
                                               "--budget", "4", "--out", os.path.join(mnt, "s"),
                                               "--quiet"], os.path.join(root, "ro"))
    print("read-only: exit %d: %s" % (rc, err.strip()))
    rel.check(rc == rel.EXIT_ERROR, "read-only: exit %d, want 1" % rc, err)
    rel.check("--out" in err and "Read-only file system" in err,
              "read-only: message does not name --out and the reason", err)

    # (tmpfs counts 4 KiB pages; the folder's .lock takes one of them)
    # full while running: 12 KiB hold the lock, the header and a few runs of a 12-run budget
    full_case(root, "full-journal", 12, "12k", "journal.jsonl")
    # full at the end: the lock and a 6-run journal fit in 12 KiB, results.json does not
    full_case(root, "full-results", 6, "12k", "results.json")
    # full after results.json: the exports and report.html are derived from it, so their
    # failure is a warning naming each file, the session still succeeds, and
    # `nccltune export` rebuilds any of them from results.json
    mnt = os.path.join(root, "exports-mnt")
    copy = os.path.join(root, "exports")
    os.makedirs(mnt)
    os.makedirs(copy)
    rc, err = in_namespace(mnt, "size=16k", [rel.NCCLTUNE, "run", "--probe", rel.FAULTPROBE,
                                             "--budget", "6", "--out", os.path.join(mnt, "s")],
                           copy)
    err = "\n".join(l for l in err.splitlines() if "warning" in l or "nccltune:" in l)
    print("full-exports: exit %d: %s" % (rc, err.strip()))
    out = os.path.join(copy, "s")
    rel.check(rc == rel.EXIT_OK, "full-exports: exit %d, want 0 (if the journal or results.json "
              "no longer fit in 16 KiB, the formats grew: adjust the size)" % rc, err)
    rel.check("warning" in err and "No space left on device" in err,
              "full-exports: no warning for the exports that could not be written", err)
    rel.check(not rel.leftover_temps(out), "full-exports: temporary files left", rel.leftover_temps(out))
    # (a 6-run session is too small to recommend: its export says so, in comments)
    p = rel.run_tuner(["export", "--format", "shell", out])
    rel.check(p.returncode == 0 and "not measured enough to recommend" in p.stdout,
              "full-exports: export from the results.json failed", p.stderr)
    shutil.rmtree(root, ignore_errors=True)
    rel.finish()


if __name__ == "__main__":
    main()
