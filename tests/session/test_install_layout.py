#!/usr/bin/env python3
"""test_install_layout.py - `meson install` installs what the examples call: every
program an example systemd unit runs (ExecStart=, ExecCondition= of examples/*.service
naming the install's bindir) is installed executable, and so is the man page generated
from the CLI's option tables. Installs into a temporary DESTDIR.
Usage: test_install_layout.py SOURCE_ROOT BUILD_ROOT"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC, BUILD = sys.argv[1:3]
failures = []


def fail(what):
    failures.append(what)
    print("FAIL: " + what, file=sys.stderr)


def option(opts, name):
    return next(o["value"] for o in opts if o["name"] == name)


def main():
    with open(os.path.join(BUILD, "meson-info", "intro-buildoptions.json")) as f:
        opts = json.load(f)
    prefix, bindir, mandir = (option(opts, n) for n in ("prefix", "bindir", "mandir"))
    bin_abs = os.path.join(prefix, bindir)
    dest = tempfile.mkdtemp(prefix="nccltune-install-")
    try:
        p = subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild", "--destdir", dest],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300)
        if p.returncode != 0:
            fail("meson install: exit %d: %s" % (p.returncode, p.stdout[-1500:]))
            return
        called = []
        for unit in sorted(glob.glob(os.path.join(SRC, "examples", "*.service"))):
            with open(unit) as f:
                for line in f:
                    m = re.match(r"^Exec(?:Start|StartPre|Condition)=-?(/\S+)", line.strip())
                    if m and os.path.dirname(m.group(1)) == bin_abs:
                        called.append((os.path.basename(unit), m.group(1)))
        if not called:
            print("the example units run programs of /usr/local/bin, this build installs "
                  "into %s: skipped" % bin_abs)
            sys.exit(77)
        for unit, path in called:
            inst = dest + path
            if not os.path.isfile(inst) or not os.access(inst, os.X_OK):
                fail("%s runs %s: not installed (executable) by meson install" % (unit, path))
        man = os.path.join(dest + os.path.join(prefix, mandir), "man1", "nccltune.1")
        if not os.path.isfile(man):
            fail("no man page %s" % man)
        else:
            with open(man) as f:
                text = f.read()
            if not text.startswith(".TH NCCLTUNE 1") or "\\-\\-budget" not in text:
                fail("the man page is not nccltune(1) with run's options: %r" % text[:200])
    finally:
        shutil.rmtree(dest, ignore_errors=True)


if __name__ == "__main__":
    main()
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        sys.exit(1)
    print("ok")
