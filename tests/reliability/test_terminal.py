#!/usr/bin/env python3
"""test_terminal.py - what a probe or a file says cannot drive the terminal, and the
journal stays valid UTF-8.

faultprobe's fail-tty mode fails with an error holding OSC 0 (window title), OSC 52
(clipboard), clear-screen sequences, a newline followed by a fake "nccltune:" line, a
C1 CSI and invalid UTF-8, and prints 3000 bytes of two-byte UTF-8 on stderr, which the
journal's 2 KiB tail cuts. Every byte nccltune prints (progress lines, notes, the
summary, `show`, `check`'s error with the probe's stderr, an error quoting a hostile
journal) must hold no control character but newline, no C1 control and no invalid
UTF-8, and no line may be the fake one; the escapes are shown as \\xHH. The journal
decodes as strict UTF-8, with U+FFFD where the probe's bytes were not UTF-8 and none at
the cut of the stderr tail."""
import json
import os
import shutil
import subprocess

import rel

C1 = [chr(c) for c in range(0x80, 0xa0)]


def clean(what, data):
    """Check that bytes `data` are safe for a terminal."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        rel.check(False, "%s: output is not valid UTF-8 (%s)" % (what, e), data[-300:])
        return
    bad = sorted({"%02x" % ord(c) for c in text if (ord(c) < 0x20 and c != "\n") or ord(c) == 0x7f})
    rel.check(not bad, "%s: control characters printed raw: %s" % (what, bad), text[-600:])
    rel.check(not any(c in text for c in C1), "%s: a C1 control printed raw" % what, text[-600:])
    rel.check(not any(l.startswith("nccltune: fake line") for l in text.split("\n")),
              "%s: the probe's fake line was printed as a line" % what, text[-600:])


def escaped(text):
    """What fs_escape_text prints of text (valid UTF-8)."""
    out = ""
    for c in text:
        if ord(c) < 0x20 or ord(c) == 0x7f or 0x80 <= ord(c) < 0xa0:
            out += "".join("\\x%02x" % b for b in c.encode("utf-8"))
        else:
            out += c
    return out


def run(args, cwd=None):
    return subprocess.run([rel.NCCLTUNE] + args, env=rel.clean_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120, cwd=cwd)


def main():
    rel.require_programs()
    d = rel.tmpdir("terminal")
    out = os.path.join(d, "s")
    log = os.path.join(d, "probe.log")
    tag = rel.unique_tag("terminal")
    probe = rel.probe(tag, log, rules="NCCL_PROTO=LL:fail-tty;NCCL_ALGO=Tree:fail-tty")
    p = run(["run", "--probe", probe, "--budget", "16", "--seed", "4", "--out", out])
    rel.check(p.returncode == rel.EXIT_OK, "session: exit %d" % p.returncode, p.stderr[-800:])
    rel.check(any(r["mode"] == "fail-tty" for r in rel.probe_runs(log)), "no run failed with fail-tty")
    clean("progress and summary", p.stderr + p.stdout)
    rel.check(b"\\x1b]0;" in p.stderr, "the escape is not shown as \\x1b", p.stderr[-600:])

    # the journal: strict UTF-8, U+FFFD for the invalid bytes, none at the tail's cut
    raw = open(os.path.join(out, "journal.jsonl"), "rb").read()
    try:
        lines = raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as e:
        rel.check(False, "journal.jsonl is not valid UTF-8: %s" % e)
        lines = []
    tty_runs = [r for r in (json.loads(l) for l in lines) if r.get("type") == "run"
                and "owned title" in r.get("error", "")]
    rel.check(tty_runs, "no journalled run holds fail-tty's error")
    for r in tty_runs:
        rel.check("\ufffd" in r["error"] and "\x1b]0;" in r["error"],
                  "run %s: the error lost its text or kept invalid UTF-8" % r["run"], r["error"])
        rel.check("\ufffd" in json.dumps(r["report"], ensure_ascii=False),
                  "run %s: the report object kept invalid UTF-8" % r["run"])
        tail = r["stderr_tail"]
        rel.check(tail and "\ufffd" not in tail and set(tail) == {"\u00e9"},
                  "run %s: the stderr tail was cut inside a character" % r["run"], tail[:20])
        rel.check(len(tail.encode("utf-8")) <= 2047, "run %s: the stderr tail is too long" % r["run"])

    # progress lines (not a terminal) are at most 160 columns, the failure reason cut at
    # a word boundary with "...", never inside a word
    progress = [l for l in p.stderr.decode("utf-8").splitlines() if l.startswith("[MODEL")]
    rel.check(progress, "no progress lines", p.stderr[-500:])
    for l in progress:
        rel.check(len(l) <= 160, "a progress line of %d columns" % len(l), l)
    full = escaped(tty_runs[0]["error"]) if tty_runs else ""
    cut = [l for l in progress if "(cudaGraphInstantiate" in l]
    rel.check(cut, "no progress line shows fail-tty's reason", progress[:5])
    for l in cut:
        why = l[l.index("(cudaGraphInstantiate") + 1:l.rindex(") | best")]
        rel.check(why.endswith("...") and full.startswith(why[:-3]) and
                  full[len(why) - 3] == " ", "the reason is not cut at a word boundary: %r" % why)

    # show, and check with a probe whose --fingerprint prints the escapes on stderr
    p = run(["show", out])
    rel.check(p.returncode == rel.EXIT_OK, "show: exit %d" % p.returncode, p.stderr)
    clean("show", p.stdout + p.stderr)
    p = run(["check", "--probe", "%s --mode fail-tty" % rel.FAULTPROBE, out])
    rel.check(p.returncode == rel.EXIT_ERROR, "check: exit %d, want 1" % p.returncode, p.stderr)
    rel.check(b"owned title" in p.stderr, "check: the probe's stderr is not shown", p.stderr)
    clean("check", p.stdout + p.stderr)

    # a saved fingerprint whose GPU name holds escapes: show prints it, check prints the
    # difference to the machine now
    fpd = os.path.join(d, "hostile-fp")
    shutil.copytree(out, fpd)
    with open(os.path.join(fpd, "results.json")) as f:
        res = json.load(f)
    # (the loader refuses C0 controls in it; a C1 CSI and invalid UTF-8 get through)
    res["fingerprint"]["gpus"][0]["name"] = "GPU owned \x9b2J\x9b31m"
    with open(os.path.join(fpd, "results.json"), "wb") as f:
        f.write(json.dumps(res, ensure_ascii=False).encode("utf-8").replace(b"owned", b"owned \xff\xfe"))
    p = run(["show", fpd])
    rel.check(p.returncode == rel.EXIT_OK, "show, hostile fingerprint: exit %d" % p.returncode, p.stderr)
    rel.check(b"owned" in p.stdout, "show, hostile fingerprint: the GPU name is not shown", p.stdout)
    clean("show, hostile fingerprint", p.stdout + p.stderr)
    p = run(["check", fpd])
    rel.check(p.returncode == 3, "check, hostile fingerprint: exit %d, want 3" % p.returncode,
              p.stdout + p.stderr)
    rel.check(b"owned" in p.stdout, "check, hostile fingerprint: the GPU name is not shown", p.stdout)
    clean("check, hostile fingerprint", p.stdout + p.stderr)

    # a folder whose name holds escapes: the notes and the summary of a resume print it
    named = os.path.join(d, "s\x1b]0;owned\x07\x1b[2J")
    shutil.copytree(out, named)
    p = run(["run", "--resume", named])
    rel.check(p.returncode == rel.EXIT_OK, "hostile folder name: exit %d" % p.returncode,
              p.stderr[-800:])
    rel.check(b"resuming" in p.stderr, "hostile folder name: no note", p.stderr[-800:])
    clean("hostile folder name", p.stdout + p.stderr)

    # an error message quoting a hostile journal header
    s2 = os.path.join(d, "hostile")
    os.makedirs(s2)
    header = json.loads(lines[0])
    header["schema"] = "\x1b]0;owned\x07\x1b[2J\nnccltune: fake line"
    with open(os.path.join(s2, "journal.jsonl"), "w") as f:
        f.write(json.dumps(header) + "\n")
    p = run(["run", "--resume", s2])
    rel.check(p.returncode == rel.EXIT_USAGE, "hostile header: exit %d, want 2" % p.returncode,
              p.stderr)
    clean("hostile header", p.stdout + p.stderr)
    rel.check_no_leftovers(tag)
    shutil.rmtree(d, ignore_errors=True)
    rel.finish()


if __name__ == "__main__":
    main()
