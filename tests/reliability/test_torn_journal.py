#!/usr/bin/env python3
"""test_torn_journal.py - a journal whose last line was torn (the tuner died while
writing it) is repaired on resume: the torn line is skipped with a warning naming the
file and line, the session continues and finishes, and the final journal is clean. A
journal damaged *before* its last line is refused (exit 2, file:line in the message)
and left untouched."""
import os
import shutil

import rel


def base_session(name, budget):
    d = rel.tmpdir(name)
    out = os.path.join(d, "s")
    log = os.path.join(d, "probe.log")
    tag = rel.unique_tag(name)
    p = rel.run_tuner(["run", "--probe", rel.probe(tag, log, mode="random", seed=7),
                       "--budget", str(budget), "--seed", "5", "--out", out, "--timeout", "2",
                       "--quiet"])
    rel.check(p.returncode == rel.EXIT_OK, "%s: session exit %d" % (name, p.returncode), p.stderr[-1000:])
    return d, out, log, tag


def journal_path(out):
    return os.path.join(out, "journal.jsonl")


def cut(out, keep_lines, tail):
    """Keep the first keep_lines lines of the journal, then append `tail` (bytes); drop
    the results so the session is unfinished again."""
    path = journal_path(out)
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    with open(path, "wb") as f:
        f.write(b"\n".join(lines[:keep_lines]) + b"\n" + tail)
    for name in ("results.json", "report.html"):
        try:
            os.unlink(os.path.join(out, name))
        except FileNotFoundError:
            pass
    shutil.rmtree(os.path.join(out, "exports"), ignore_errors=True)
    return lines


def torn(name, tail_of, quiet=False):
    d, out, log, tag = base_session(name, 14)
    lines = cut(out, 8, b"")
    # the torn line: the start of what line 9 was (tail_of decides how it ends)
    cut(out, 8, tail_of(lines[8]))
    kept = open(journal_path(out), "rb").read().split(b"\n")[:8]
    # --quiet turns progress off, never warnings
    p = rel.run_tuner(["run", "--resume", out] + (["--quiet"] if quiet else []))
    rel.check(p.returncode == rel.EXIT_OK, "%s: resume exit %d" % (name, p.returncode), p.stderr[-1500:])
    rel.check("torn" in p.stderr and "journal.jsonl:9" in p.stderr,
              "%s: no warning naming journal.jsonl:9 as torn" % name, p.stderr[-1000:])
    final = open(journal_path(out), "rb").read().split(b"\n")
    rel.check(final[:8] == kept, "%s: the records before the torn line changed" % name)
    _, bad = rel.journal(out)
    rel.check(not bad, "%s: the torn line is still in the journal" % name, bad[:3])
    runs = rel.journal_runs(out)
    rel.check([r["run"] for r in runs] == list(range(1, len(runs) + 1)),
              "%s: run numbers are not 1..n" % name, [r["run"] for r in runs])
    rel.check(len(runs) <= 14, "%s: %d runs, budget 14" % (name, len(runs)))
    rel.check(os.path.exists(os.path.join(out, "results.json")), "%s: no results.json" % name)
    rel.check_no_leftovers(tag)
    shutil.rmtree(d, ignore_errors=True)


def damaged_middle():
    name = "damaged"
    d, out, log, tag = base_session(name, 10)
    cut(out, 4, b"")
    path = journal_path(out)
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    lines[2] = lines[2][:25] + b"#" + lines[2][26:]      # line 3 no longer parses
    with open(path, "wb") as f:
        f.write(b"\n".join(lines))
    before = open(path, "rb").read()
    calls = len(rel.probe_runs(log))
    p = rel.run_tuner(["run", "--resume", out, "--quiet"])
    rel.check(p.returncode == rel.EXIT_USAGE, "%s: resume exit %d, want 2" % (name, p.returncode),
              p.stderr[-1000:])
    rel.check("journal.jsonl:3" in p.stderr, "%s: message does not name journal.jsonl:3" % name,
              p.stderr[-1000:])
    rel.check(open(path, "rb").read() == before, "%s: a refused journal was modified" % name)
    rel.check(len(rel.probe_runs(log)) == calls, "%s: the probe ran for a refused resume" % name)
    rel.check(not os.path.exists(os.path.join(out, "results.json")), "%s: results.json written" % name)
    shutil.rmtree(d, ignore_errors=True)


def main():
    rel.require_programs()
    torn("torn-half", lambda line: line[:len(line) // 2])              # no newline
    torn("torn-garbage-nl", lambda line: line[:len(line) // 3] + b"\n")  # newline, no JSON
    torn("torn-nul", lambda line: b"\0" * 40, quiet=True)  # a zero-filled block
    damaged_middle()
    rel.finish()


if __name__ == "__main__":
    main()
