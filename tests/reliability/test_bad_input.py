#!/usr/bin/env python3
"""test_bad_input.py - bad input everywhere: malformed or hostile space, workload,
results and journal files, unknown variables, impossible ranges, bad options, an
output folder that cannot be one, a probe that does not exist or cannot run, an output
file that cannot grow (RLIMIT_FSIZE: a full disk without mounting anything).

Each case runs nccltune in a scratch folder (so messages hold relative names) and
compares the exit status and stderr with tests/reliability/golden/bad-input/CASE.txt
("exit: N" then the exact stderr; the faultprobe path is written $FAULTPROBE). After a
failing case nothing is half-written: no results.json, no temporary file, and a journal
the case started from is unchanged. NCCLTUNE_UPDATE_GOLDEN=1 rewrites the golden files."""
import json
import os
import resource
import shutil
import signal
import subprocess

import rel

GOLDEN = os.path.join(rel.SOURCE, "tests", "reliability", "golden", "bad-input")

SPACE_OK = {"schema": "nccltune-space/1",
            "params": {"NCCL_PROTO": {"values": ["LL", "Simple", None]},
                       "NCCL_MAX_NCHANNELS": {"int": [1, 8]}}}
WORKLOAD_OK = {"schema": "nccltune-workload/1", "dtype": "bf16",
               "collectives": [{"op": "allreduce", "bytes": 43008, "count": 122}]}


def space(**params):
    s = json.loads(json.dumps(SPACE_OK))
    s["params"].update(params)
    return json.dumps(s)


def workload(**entry):
    w = json.loads(json.dumps(WORKLOAD_OK))
    w["collectives"][0].update(entry)
    return json.dumps(w)


def run_args(*extra):
    return ["run", "--probe", "$FAULTPROBE", "--budget", "4", "--quiet"] + list(extra)


# (name, files to create {path: text or None for a folder}, arguments, exit status)
CASES = [
    # search spaces
    ("space-not-json", {"s.json": '{"schema": "nccltune-space/1", "params": {'},
     run_args("--space", "s.json", "--out", "o"), 2),
    ("space-unknown-key", {"s.json": json.dumps(dict(SPACE_OK, sample=3))},
     run_args("--space", "s.json", "--out", "o"), 2),
    ("space-typo-variable", {"s.json": space(NCCL_NTHREAD={"values": [64, 128]})},
     run_args("--space", "s.json", "--out", "o"), 2),
    ("space-not-nccl", {"s.json": space(LD_PRELOAD={"values": ["/tmp/x.so"]})},
     run_args("--space", "s.json", "--out", "o"), 2),
    ("space-inverted-range", {"s.json": space(NCCL_MAX_NCHANNELS={"int": [16, 2]})},
     run_args("--space", "s.json", "--out", "o"), 2),
    ("space-out-of-range", {"s.json": space(NCCL_NTHREADS={"int": [1, 100000]})},
     run_args("--space", "s.json", "--out", "o"), 2),
    ("space-bad-value", {"s.json": space(NCCL_PROTO={"values": ["LL", "Fast"]})},
     run_args("--space", "s.json", "--out", "o"), 2),
    ("space-hostile-value", {"s.json": space(NCCL_PROTO={"values": ["LL; rm -rf ~"]})},
     run_args("--space", "s.json", "--out", "o"), 2),
    ("space-empty-values", {"s.json": space(NCCL_PROTO={"values": []})},
     run_args("--space", "s.json", "--out", "o"), 2),
    ("space-constraint-unknown",
     {"s.json": json.dumps(dict(SPACE_OK, constraints=["NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS"]))},
     run_args("--space", "s.json", "--out", "o"), 2),
    ("space-missing", {}, run_args("--space", "nothere.json", "--out", "o"), 2),
    ("space-is-folder", {"sdir": None}, run_args("--space", "sdir", "--out", "o"), 2),
    ("space-binary", {"s.json": "\x00\x01\x02\xff"}, run_args("--space", "s.json", "--out", "o"), 2),
    # workloads
    ("workload-bytes-zero", {"w.json": workload(bytes=0)},
     run_args("--workload", "w.json", "--out", "o"), 2),
    ("workload-bytes-string", {"w.json": workload(bytes="43008")},
     run_args("--workload", "w.json", "--out", "o"), 2),
    ("workload-op", {"w.json": workload(op="broadcast")},
     run_args("--workload", "w.json", "--out", "o"), 2),
    ("workload-dtype", {"w.json": json.dumps(dict(WORKLOAD_OK, dtype="fp8"))},
     run_args("--workload", "w.json", "--out", "o"), 2),
    ("workload-unknown-key", {"w.json": json.dumps(dict(WORKLOAD_OK, step_ms=30))},
     run_args("--workload", "w.json", "--out", "o"), 2),
    ("workload-empty", {"w.json": json.dumps(dict(WORKLOAD_OK, collectives=[]))},
     run_args("--workload", "w.json", "--out", "o"), 2),
    ("workload-and-bytes", {"w.json": json.dumps(WORKLOAD_OK)},
     run_args("--workload", "w.json", "--bytes", "4096", "--out", "o"), 2),
    # options
    ("budget-zero", {}, run_args("--budget", "0", "--out", "o"), 2),
    ("budget-word", {}, run_args("--budget", "many", "--out", "o"), 2),
    ("timeout-negative", {}, run_args("--timeout", "-1", "--out", "o"), 2),
    ("seed-negative", {}, run_args("--seed", "-4", "--out", "o"), 2),
    ("strategy-unknown", {}, run_args("--strategy", "annealing", "--out", "o"), 2),
    ("bytes-bad", {}, run_args("--bytes", "43008,,7", "--out", "o"), 2),
    ("option-unknown", {}, run_args("--budgte", "5", "--out", "o"), 2),
    ("probe-and-model", {}, run_args("--model", "pcie-gen5-8gpu", "--out", "o"), 2),
    # the user's own configurations (--try, --try-file): refused before anything runs,
    # naming the option and the item
    ("try-unknown-protocol", {}, run_args("--try", "NCCL_PROTO=Fast NCCL_ALGO=Ring", "--out", "o"), 2),
    ("try-nthreads", {}, run_args("--try", "NCCL_PROTO=LL NCCL_NTHREADS=100", "--out", "o"), 2),
    ("try-not-assignment", {}, run_args("--try", "LL", "--out", "o"), 2),
    ("try-not-nccl", {}, run_args("--try", "P2P_LEVEL=SYS", "--out", "o"), 2),
    ("try-no-value", {}, ["run", "--try"], 2),
    ("try-with-resume", {}, ["run", "--resume", "x", "--try", "NCCL_PROTO=LL"], 2),
    ("try-file-missing", {}, run_args("--try-file", "/nonexistent/tries", "--out", "o"), 2),
    ("try-file-bad-line", {"bad.txt": "# mine\nNCCL_PROTO=LL NCCL_ALGO=Ring\n"
                                      "NCCL_ALGO=Ring NCCL_BUFFSIZE=-1\n"},
     run_args("--try-file", "bad.txt", "--out", "o"), 2),
    ("try-nvls", {}, run_args("--try", "NCCL_NVLS_ENABLE=1 NCCL_PROTO=LL", "--out", "o"), 2),
    # output folders
    ("out-is-file", {"o": "not a folder\n"}, run_args("--out", "o"), 1),
    ("out-under-file", {"f": "a file\n"}, run_args("--out", "f/o"), 1),
    ("out-holds-session", {"o/journal.jsonl": '{"type": "session"}\n'}, run_args("--out", "o"), 2),
    # probes that cannot run
    ("probe-missing", {}, ["run", "--probe", "/nonexistent/nccltune-probe --x", "--budget", "4",
                           "--quiet", "--out", "o"], 1),
    ("probe-not-in-path", {}, ["run", "--probe", "nccltune-no-such-probe", "--budget", "4",
                               "--quiet", "--out", "o"], 1),
    ("probe-not-executable", {"p.sh": "#!/bin/sh\n"}, ["run", "--probe", "./p.sh", "--budget", "4",
                                                      "--quiet", "--out", "o"], 1),
    ("probe-unterminated-quote", {}, ["run", "--probe", "faultprobe 'x", "--budget", "4",
                                      "--quiet", "--out", "o"], 2),
    # probes that start but cannot run any configuration: the baseline's failure stops
    # the session after 1 run (baseline-*: the journal holds exactly that run)
    ("baseline-args-option", {}, ["run", "--probe", "$FAULTPROBE --bogus", "--budget", "48",
                                  "--quiet", "--out", "o"], 2),
    ("baseline-args-model", {}, ["run", "--model", "nosuch", "--budget", "48", "--quiet",
                                 "--out", "o"], 2),
    ("baseline-init-no-device", {}, ["run", "--probe", "$FAULTPROBE --mode fail-nodevice",
                                     "--budget", "48", "--quiet", "--out", "o"], 1),
]


def hostile_results(base):
    """Results files derived from a real session's results.json."""
    with open(os.path.join(base, "results.json")) as f:
        good = json.load(f)

    def variant(change):
        r = json.loads(json.dumps(good))
        change(r)
        return json.dumps(r)

    return [
        ("results-injection",
         variant(lambda r: r["best"]["env"].update(NCCL_PROTO="LL'; import os; os.system('id') #"))),
        ("results-newline", variant(lambda r: r["best"]["env"].update(NCCL_ALGO="Ring\nexport X=1"))),
        ("results-not-nccl", variant(lambda r: r["best"]["env"].update(LD_PRELOAD="/tmp/x.so"))),
        ("results-number", variant(lambda r: r["best"]["env"].update(NCCL_MAX_NCHANNELS=2))),
        ("results-objective", variant(lambda r: r["best"].update(objective_us=-5))),
        ("results-schema", variant(lambda r: r.update(schema="nccltune-result/7"))),
        ("results-unknown-key", variant(lambda r: r.update(comment="hi"))),
        ("results-truncated", json.dumps(good)[:300]),
    ]


def hostile_journals(base):
    """Session folders whose journal is damaged or hostile, from a real session."""
    with open(os.path.join(base, "journal.jsonl")) as f:
        lines = f.read().splitlines()
    header = json.loads(lines[0])

    def h(change):
        x = json.loads(json.dumps(header))
        change(x)
        return json.dumps(x)

    return [
        ("journal-schema", h(lambda x: x.update(schema="nccltune-journal/9")) + "\n"),
        ("journal-probe-string", h(lambda x: x.update(probe="rm -rf /")) + "\n"),
        ("journal-budget", h(lambda x: x.update(budget=-3)) + "\n"),
        ("journal-space", h(lambda x: x.update(space={"schema": "nccltune-space/1",
                                                      "params": {"LD_PRELOAD": {"values": ["x"]}}})) + "\n"),
        ("journal-no-header", "\n".join(lines[1:4]) + "\n"),
        ("journal-run-point", lines[0] + "\n" + json.dumps(dict(json.loads(lines[2]), point=[99, 99]))
         + "\n" + lines[3] + "\n"),
        ("journal-empty", ""),
        ("journal-over-budget", json.dumps(dict(header, budget=2)) + "\n" + "\n".join(lines[1:5])
         + "\n"),
        ("journal-pinned-not-nccl", h(lambda x: x["pinned"].update(LD_PRELOAD="/tmp/x.so")) + "\n"),
        # the header is read through jsonread's table: wrong types and duplicates refused
        ("journal-iters-type", h(lambda x: x.update(iters="many")) + "\n"),
        ("journal-header-duplicate",
         h(lambda x: None).replace('"budget": ', '"budget": 1, "budget": ', 1) + "\n"),
        # a fingerprint results.json's readers would refuse is not taken from a header
        ("journal-fingerprint-control",
         h(lambda x: x.update(fingerprint=dict(x.get("fingerprint") or {}, host="a\x1b[2Jb")))
         + "\n"),
        ("journal-fingerprint-gpus",
         h(lambda x: x.update(fingerprint=dict(x.get("fingerprint") or {}, gpu_count=-1))) + "\n"),
    ]


def untrusted_folders(base):
    """check runs the journal's probe: a folder or journal that is not the user's alone
    is refused. (name, files, preexec making it so)."""
    files = {p: open(os.path.join(base, p), encoding="latin-1").read()
             for p in ("journal.jsonl", "results.json")}
    files = {"s/" + p: t for p, t in files.items()}
    cases = [
        ("check-folder-writable", files, lambda: os.chmod("s", 0o777)),
        ("check-journal-writable", files, lambda: os.chmod("s/journal.jsonl", 0o664)),
    ]
    # a link of the user's own to a folder others may write: the target is what counts
    shared = {"shared/" + p[2:]: t for p, t in files.items()}
    cases.append(("check-folder-link-writable", shared,
                  lambda: (os.chmod("shared", 0o777), os.symlink("shared", "s"))))
    if os.geteuid() == 0:
        cases.append(("check-folder-not-mine", files, lambda: os.chown("s", 4242, 4242)))
    return cases


def normalise(text):
    return text.replace(rel.FAULTPROBE, "$FAULTPROBE").replace(rel.BUILD, "$BUILD")


def golden_check(name, status, stderr):
    got = "exit: %d\n%s" % (status, normalise(stderr))
    path = os.path.join(GOLDEN, name + ".txt")
    if os.environ.get("NCCLTUNE_UPDATE_GOLDEN"):
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as f:
            f.write(got)
        return
    try:
        with open(path) as f:
            want = f.read()
    except FileNotFoundError:
        rel.check(False, "%s: no golden file %s" % (name, path), got)
        return
    rel.check(got == want, "%s: output differs from %s" % (name, path), "got:\n" + got, "want:\n" + want)


def nothing_half_written(name, work, given=()):
    for root, _, files in os.walk(work):
        for f in files:
            rel.check(".tmp." not in f, "%s: temporary file left: %s" % (name, os.path.join(root, f)))
            rel.check(f != "results.json" or root == work or
                      os.path.relpath(os.path.join(root, f), work) in given,
                      "%s: results.json written by a failed run: %s" % (name, root))


def run_case(name, files, args, want, cwd_root, preexec=None, golden=True):
    work = os.path.join(cwd_root, name)
    os.makedirs(work)
    for path, text in files.items():
        full = os.path.join(work, path)
        if text is None:
            os.makedirs(full, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="latin-1") as f:
            f.write(text)
    before = {p: open(os.path.join(work, p), "rb").read() for p, t in files.items() if t is not None}
    args = [a.replace("$FAULTPROBE", rel.FAULTPROBE) for a in args]
    p = subprocess.run([rel.NCCLTUNE] + args, cwd=work, env=rel.clean_env(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60, preexec_fn=preexec)
    rel.check(p.returncode == want, "%s: exit %d, want %d" % (name, p.returncode, want), p.stderr)
    rel.check(p.stderr.strip() != "", "%s: failed without a message" % name)
    if golden:
        golden_check(name, p.returncode, p.stderr)
    nothing_half_written(name, work, files)
    if name.startswith("baseline-"):
        runs = rel.journal_runs(os.path.join(work, "o"))
        rel.check([r["phase"] for r in runs] == ["baseline"],
                  "%s: the journal holds %d runs, want the baseline alone" % (name, len(runs)))
    elif want == rel.EXIT_USAGE or name.startswith(("probe-", "out-")):
        # refused before the session started: no journal either
        rel.check("o/journal.jsonl" in files or not os.path.exists(os.path.join(work, "o", "journal.jsonl")),
                  "%s: a failed run left a session journal" % name)
    for path, data in before.items():
        rel.check(open(os.path.join(work, path), "rb").read() == data, "%s: %s was modified" % (name, path))
    return p


def limit_file_size():
    """In the child: files may not grow past 16 KiB (writes then fail with EFBIG, as on a
    full disk); SIGXFSZ ignored so the write fails instead of killing the tuner."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, 16 * 1024))


def main():
    rel.require_programs()
    root = rel.tmpdir("badinput")
    for name, files, args, want in CASES:
        run_case(name, files, args, want, root)
    # a FIFO where a file is read (fs_read_file, every reader's): refused at once
    run_case("space-is-fifo", {}, run_args("--space", "in.fifo", "--out", "o"), 2, root,
             preexec=lambda: os.mkfifo("in.fifo"))

    # a real session to derive hostile results and journals from
    base = os.path.join(root, "base")
    p = rel.run_tuner(["run", "--probe", rel.FAULTPROBE, "--budget", "6", "--out", base, "--quiet"])
    rel.check(p.returncode == 0, "base session exit %d" % p.returncode, p.stderr)
    for name, text in hostile_results(base):
        for fmt in ("shell", "sitecustomize"):
            run_case(name + "-" + fmt, {"results.json": text},
                     ["export", "--format", fmt, "results.json"], 2, root)
    run_case("export-no-results", {"d/journal.jsonl": "{}\n"}, ["export", "--format", "shell", "d"], 2, root)
    run_case("export-format", {}, ["export", "--format", "yaml", base], 2, root)
    for name, text in hostile_journals(base):
        run_case(name, {"s/journal.jsonl": text}, ["run", "--resume", "s", "--quiet"], 2, root)
    run_case("resume-not-session", {"s": None}, ["run", "--resume", "s", "--quiet"], 2, root)
    for name, files, prep in untrusted_folders(base):
        run_case(name, files, ["check", "s"], 2, root, preexec=prep)
        # a resume runs the journal's probe too: the same refusal
        run_case(name.replace("check-", "resume-"), files, ["run", "--resume", "s", "--quiet"],
                 2, root, preexec=prep)

    # a journal that cannot grow: the session stops with exit 1 naming the journal and
    # the reason, and what it wrote is whole (no golden file: the wording of the
    # system's error is not ours)
    p = run_case("journal-cannot-grow", {}, run_args("--budget", "40", "--out", "o"), 1, root,
                 preexec=limit_file_size, golden=False)
    rel.check("journal.jsonl" in p.stderr and "File too large" in p.stderr,
              "journal-cannot-grow: the message names neither the journal nor the reason", p.stderr)
    recs, bad = rel.read_jsonl(os.path.join(root, "journal-cannot-grow", "o", "journal.jsonl"))
    rel.check(recs and not bad, "journal-cannot-grow: the journal is not whole", bad[:2])
    shutil.rmtree(root, ignore_errors=True)
    rel.finish()


if __name__ == "__main__":
    main()
