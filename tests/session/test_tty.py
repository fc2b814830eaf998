#!/usr/bin/env python3
"""test_tty.py - the progress line on a terminal fits its width (issue 28 item 8).

A MODEL session runs with its stderr on a pseudo-terminal:
  * 80 columns (TIOCSWINSZ): every status line ("run N/B ...", rewritten in place with
    "\\r\\033[K") is at most 79 columns, so it never wraps and the clear erases all of it;
  * a terminal that reports no size: $COLUMNS (60) is the width;
  * TERM=dumb, or no TERM: not one escape sequence or carriage return; one line per run;
and with stderr on a pipe every progress line is at most 160 columns.
Usage: test_tty.py NCCLTUNE"""
import fcntl
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import termios

NT = sys.argv[1]
failures = []


def fail(what):
    failures.append(what)
    print("FAIL: " + what, file=sys.stderr)


def run_on_pty(args, env, cols):
    """nccltune's stdout and stderr on a pseudo-terminal of cols columns (0: no size)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24 if cols else 0, cols, 0, 0))
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.OPOST     # no "\n" -> "\r\n": the bytes as nccltune wrote them
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    p = subprocess.Popen([NT] + args, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                         env=env)
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
    os.close(master)
    rc = p.wait(timeout=120)
    return rc, data.decode("utf-8", "replace")


def status_lines(text):
    """The status lines as the terminal shows them: each rewrite after "\\r\\033[K"."""
    out = []
    for line in text.split("\n"):
        for seg in line.split("\r"):
            seg = seg.replace("\033[K", "")
            if re.search(r"\brun \d+/\d+  best ", seg):
                out.append(seg)
    return out


def main():
    tmp = tempfile.mkdtemp(prefix="nccltune-tty-")
    base = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    base.pop("COLUMNS", None)
    try:
        def args(name):
            return ["run", "--model", "pcie-gen5-8gpu", "--budget", "20", "--out",
                    os.path.join(tmp, name)]

        # 80 columns
        rc, text = run_on_pty(args("w80"), dict(base, TERM="xterm"), 80)
        lines = status_lines(text)
        if rc != 0 or len(lines) < 10:
            fail("80 columns: exit %d, %d status lines: %r" % (rc, len(lines), text[-800:]))
        long = [l for l in lines if len(l) > 79]
        if long:
            fail("80 columns: %d status lines over 79 columns, e.g. %r (%d)" %
                 (len(long), long[0], len(long[0])))
        if "\033[K" not in text:
            fail("80 columns: the status line is not rewritten in place: %r" % text[:400])
        # no size: $COLUMNS
        rc, text = run_on_pty(args("cols"), dict(base, TERM="xterm", COLUMNS="60"), 0)
        lines = status_lines(text)
        long = [l for l in lines if len(l) > 59]
        if rc != 0 or not lines or long:
            fail("COLUMNS=60: exit %d, %d status lines, over 59: %r" % (rc, len(lines), long[:1]))
        # TERM=dumb, and no TERM: plain lines
        for name, env in (("dumb", dict(base, TERM="dumb")),
                          ("noterm", {k: v for k, v in base.items() if k != "TERM"})):
            rc, text = run_on_pty(args(name), env, 80)
            if rc != 0 or "\033" in text or "\r" in text:
                fail("%s: exit %d, escape or carriage return in %r" % (name, rc, text[:400]))
            if len(re.findall(r"^\[MODEL pcie-gen5-8gpu\] \[\d+/20\] ", text, re.M)) < 10:
                fail("%s: not one line per run: %r" % (name, text[:600]))
        # a pipe: bounded plain lines
        p = subprocess.run([NT] + args("pipe"), env=base, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=120)
        prog = [l for l in p.stdout.splitlines() if l.startswith("[MODEL")]
        long = [l for l in prog if len(l) > 160]
        if p.returncode != 0 or len(prog) < 10 or long:
            fail("pipe: exit %d, %d progress lines, over 160: %r" %
                 (p.returncode, len(prog), long[:1]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures), file=sys.stderr)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
