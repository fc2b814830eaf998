#!/usr/bin/env python3
"""test_cli.py - nccltune-probe end to end, without a GPU.

usage: test_cli.py PROBE PARSE_REPORT GOLDEN_DIR PLUGIN NOT_A_TUNER

Bad command lines must give exactly the golden JSON on stdout and exit 2 (--ops lists
that do not match --bytes, sweep files and a NCCL_TUNER_PLUGIN that is not nccltune's
plugin included); --help, --version and --capabilities work; with no visible GPU
(CUDA_VISIBLE_DEVICES set empty, which hides every GPU on any machine) a run fails
cleanly at stage init with exit 1 in every launch mode, a sweep with the real plugin
too, and the private NCCL log folder is gone afterwards; --fingerprint still describes
the machine, identically twice. Bad NCCL values fail at stage env before any GPU is
touched. Every report also goes through the tuner's strict parser (PARSE_REPORT)."""
import json
import os
import subprocess
import sys
import tempfile

PROBE, PARSER, GOLDEN, PLUGIN, NOT_A_TUNER = sys.argv[1:6]
failures = []

# (golden file, arguments): each must fail at stage "args" with exit status 2.
ARGS_CASES = [
    ("args-unknown.json", ["--bogus"]),
    ("args-missing-value.json", ["--bytes"]),
    ("args-abbreviated.json", ["--by", "1024"]),
    ("args-positional.json", ["extra"]),
    ("args-bad-bytes.json", ["--bytes", "12x"]),
    ("args-bad-dtype.json", ["--dtype", "fp8"]),
    ("args-bad-ops.json", ["--ops", "0"]),
    ("args-bad-launch.json", ["--launch", "pigeon"]),
    ("args-bad-teardown.json", ["--teardown", "quick"]),
    ("args-partial-element.json", ["--dtype", "f32", "--bytes", "43010"]),
    ("args-bad-timeout.json", ["--step-timeout", "-1"]),
    ("args-ops-count.json", ["--bytes", "1024,2048", "--ops", "8,4,2"]),
    ("args-bad-ops-list.json", ["--ops", "8,0"]),
    ("args-sweep-missing.json", ["--sweep", "/nonexistent/sweep.json"]),
    ("args-sweep-bad-key.json", ["--sweep", "sweep-bad-key.json"]),
    ("args-corrupt-choice-no-sweep.json", ["--test-corrupt-choice", "0"]),
]

# (golden file, arguments, NCCL_TUNER_PLUGIN or None): --sweep without nccltune's plugin
SWEEP_PLUGIN_CASES = [
    ("args-sweep-no-plugin.json", None),
    ("args-sweep-plugin-name.json", "nccltune"),
]
SWEEP_ARGS = ["--bytes", "43008,1024", "--sweep", "sweep-ok.json"]


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(args, env_extra=None, timeout=60, drop=()):
    env = dict(os.environ)
    env["NCCL_NVLS_ENABLE"] = "0"
    env.update(env_extra or {})
    for name in drop:
        env.pop(name, None)
    # relative sweep files are the golden folder's
    p = subprocess.run([PROBE] + args, capture_output=True, text=True, env=env,
                       timeout=timeout, cwd=GOLDEN)
    return p.returncode, p.stdout, p.stderr


def parse_with_tuner(stdout, what):
    p = subprocess.run([PARSER], input=stdout, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        fail("%s: the tuner's parser rejects the report: %s" % (what, p.stderr.strip()))
        return None
    return p.stdout.strip()


def check_args_cases():
    for name, args in ARGS_CASES:
        with open(os.path.join(GOLDEN, name)) as f:
            want = f.read()
        rc, out, err = run(args)
        if rc != 2:
            fail("%s: exit status %d, want 2" % (args, rc))
        if out != want:
            fail("%s: stdout differs from %s:\n got: %r\nwant: %r" % (args, name, out, want))
        if parse_with_tuner(out, str(args)) != "fail args":
            fail("%s: not parsed as an args failure" % args)
        if "nccltune-probe:" not in err:
            fail("%s: no diagnostic on stderr" % args)


def check_sweep_plugin_cases():
    for name, plugin in SWEEP_PLUGIN_CASES:
        with open(os.path.join(GOLDEN, name)) as f:
            want = f.read()
        env = {"NCCL_TUNER_PLUGIN": plugin} if plugin else {}
        for mode in ["process", "all"]:
            rc, out, err = run(SWEEP_ARGS + ["--launch", mode], env,
                               drop=() if plugin else ("NCCL_TUNER_PLUGIN",))
            what = "--sweep, NCCL_TUNER_PLUGIN=%s, --launch %s" % (plugin, mode)
            if rc != 2 or out != want:
                fail("%s: want exit 2 and %s, got %d %r" % (what, name, rc, out))
            if parse_with_tuner(out, what) != "fail args":
                fail("%s: not parsed as an args failure" % what)
    # files that are not nccltune's plugin: named in the message
    for path, why in [(NOT_A_TUNER, "has no nccltune_tuner_control_version (not nccltune's "
                                    "plugin)"),
                      ("/nonexistent/libnccl-tuner-x.so", "cannot load")]:
        rc, out, err = run(SWEEP_ARGS, {"NCCL_TUNER_PLUGIN": path})
        try:
            obj = json.loads(out)
        except ValueError:
            fail("NCCL_TUNER_PLUGIN=%s: stdout not JSON: %r" % (path, out))
            continue
        want = "--sweep needs nccltune's tuner plugin in NCCL_TUNER_PLUGIN: "
        if rc != 2 or obj.get("stage") != "args" or not obj.get("error", "").startswith(want) \
                or why not in obj["error"] or path not in obj["error"]:
            fail("NCCL_TUNER_PLUGIN=%s: want an args failure saying %r, got %d %r"
                 % (path, why, rc, out))


def check_capabilities():
    with open(os.path.join(GOLDEN, "capabilities.json")) as f:
        want = f.read()
    for args in [["--capabilities"], ["--capabilities", "--bytes", "43010", "--dtype", "f32"]]:
        rc, out, err = run(args, {"CUDA_VISIBLE_DEVICES": ""})
        if rc != 0 or out != want:
            fail("%s: want exit 0 and %r, got %d %r" % (args, want, rc, out))
    if json.loads(want) != {"schema": "nccltune-probe/1",
                            "capabilities": ["ops-list", "decisions", "sweep", "window", "compute"]}:
        fail("capabilities.json: not the words this probe implements: %r" % want)


def check_no_leftovers():
    """A run that fails (no GPU) with decisions on leaves nothing in TMPDIR: the private
    folder NCCL_DEBUG_FILE points into is removed on every path; a sweep with the real
    plugin gets past the argument checks to the same failure."""
    for extra, env in [([], {}),
                       (SWEEP_ARGS, {"NCCL_TUNER_PLUGIN": PLUGIN})]:
        for mode in ["process", "all"]:
            with tempfile.TemporaryDirectory() as tmp:
                rc, out, err = run(extra + ["--launch", mode, "--iters", "4"],
                                   dict(env, CUDA_VISIBLE_DEVICES="", TMPDIR=tmp),
                                   drop=("NCCL_DEBUG",))
                what = "no GPU, %s --launch %s" % (" ".join(extra), mode)
                if rc != 1 or parse_with_tuner(out, what) != "fail init":
                    fail("%s: want an init failure, got %d %r %s" % (what, rc, out, err[-300:]))
                left = os.listdir(tmp)
                if left:
                    fail("%s: left %r in TMPDIR" % (what, left))


# (golden file, environment): bad NCCL values must fail at stage "env" with exit 1,
# before any GPU is touched (so these run anywhere).
ENV_CASES = [
    ("env-proto-bogus.json", {"NCCL_PROTO": "Bogus"}),
    ("env-algo-prefix.json", {"NCCL_ALGO": "ring;tree"}),
    ("env-nthreads.json", {"NCCL_NTHREADS": "sixty-four"}),
]


def check_env_cases():
    for name, env in ENV_CASES:
        with open(os.path.join(GOLDEN, name)) as f:
            want = f.read()
        rc, out, err = run(["--ops", "4"], env)
        if rc != 1:
            fail("%s: exit status %d, want 1" % (env, rc))
        if out != want:
            fail("%s: stdout differs from %s:\n got: %r\nwant: %r" % (env, name, out, want))
        if parse_with_tuner(out, str(env)) != "fail env":
            fail("%s: not parsed as an env failure" % env)
    # --no-env-check leaves the value to NCCL: here the run gets as far as the GPU check
    rc, out, err = run(["--no-env-check", "--ops", "4"],
                       {"NCCL_PROTO": "Bogus", "CUDA_VISIBLE_DEVICES": ""})
    if rc != 1 or parse_with_tuner(out, "--no-env-check") != "fail init":
        fail("--no-env-check: want an init failure (no GPU visible), got %d %r" % (rc, out))


def nccl_runtime_version():
    """The NCCL the probe loads here, from its fingerprint ("2.28.9"), or None."""
    rc, out, err = run(["--fingerprint"], {"CUDA_VISIBLE_DEVICES": ""})
    try:
        return json.loads(out).get("nccl_version")
    except ValueError:
        return None


def check_ranks_per_gpu():
    """--ranks-per-gpu K: a bad K is stage args; K > 1 on an NCCL before 2.30 is stage env,
    before any GPU, in the process and all modes; every run report says the sharing."""
    for bad in ["0", "65", "two"]:
        rc, out, err = run(["--ranks-per-gpu", bad])
        if rc != 2 or parse_with_tuner(out, "--ranks-per-gpu " + bad) != "fail args":
            fail("--ranks-per-gpu %s: want exit 2 at stage args, got %d %r" % (bad, rc, out))
    version = nccl_runtime_version() or ""
    try:
        major, minor = (int(x) for x in version.split(".")[:2])
    except ValueError:
        major = minor = 0
    if (major, minor) < (2, 30):
        for mode in ["process", "all"]:
            rc, out, err = run(["--ranks-per-gpu", "2", "--launch", mode, "--iters", "5"])
            what = "--ranks-per-gpu 2 --launch %s on NCCL %s" % (mode, version)
            obj = json.loads(out) if out.strip() else {}
            if rc != 1 or obj.get("stage") != "env" or obj.get("ranks_per_gpu") != 2:
                fail("%s: want exit 1 at stage env with ranks_per_gpu 2, got %d %r"
                     % (what, rc, out))
            if "NCCL 2.30" not in obj.get("error", "") or "--nccl" not in obj.get("error", ""):
                fail("%s: the message does not say what is needed: %r" % (what, obj))
            if parse_with_tuner(out, what) != "fail env":
                fail("%s: not parsed as an env failure" % what)
    # the fingerprint says the sharing when there is some, and is unchanged otherwise
    rc, out, err = run(["--fingerprint", "--ranks-per-gpu", "2"], {"CUDA_VISIBLE_DEVICES": ""})
    rc1, out1, err1 = run(["--fingerprint"], {"CUDA_VISIBLE_DEVICES": ""})
    try:
        shared, plain = json.loads(out), json.loads(out1)
    except ValueError:
        shared = plain = {}
    if shared.get("ranks_per_gpu") != 2 or "ranks_per_gpu" in plain:
        fail("--fingerprint: ranks_per_gpu 2 with --ranks-per-gpu 2 and absent without, got "
             "%r and %r" % (shared.get("ranks_per_gpu"), plain.get("ranks_per_gpu")))
    # one rank per GPU: the report says so too (here: no GPU visible)
    rc, out, err = run(["--launch", "all", "--iters", "5"], {"CUDA_VISIBLE_DEVICES": ""})
    if json.loads(out).get("ranks_per_gpu") != 1:
        fail("a run's report does not say ranks_per_gpu 1: %r" % out)


def check_launcher_rank():
    """Under a launcher only rank 0 answers --capabilities and --fingerprint, and reports a
    bad command line."""
    for var in ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"]:
        for args in (["--capabilities"], ["--fingerprint"]):
            rc, out, err = run(args, {var: "1", "CUDA_VISIBLE_DEVICES": ""})
            if rc != 0 or out != "":
                fail("%s=1 %s: want silence and exit 0, got %d %r" % (var, args[0], rc, out))
            rc, out, err = run(args, {var: "0", "CUDA_VISIBLE_DEVICES": ""})
            if rc != 0 or out.count("\n") != 1:
                fail("%s=0 %s: want one line, got %d %r" % (var, args[0], rc, out))
        # a bad command line: every rank refuses, rank 0 alone reports
        rc, out, err = run(["--bogus"], {var: "1"})
        if rc != 2 or out != "" or "--bogus" not in err:
            fail("%s=1 --bogus: want exit 2, no report, the reason on stderr: %d %r"
                 % (var, rc, out))


def check_help_version():
    rc, out, err = run(["--help"])
    if rc != 0:
        fail("--help: exit status %d" % rc)
    for opt in ["--bytes", "--ops N[,N2...]", "--dtype", "--iters", "--warmup", "--out-of-place",
                "--launch", "--teardown", "--gpus", "--step-timeout", "--no-env-check",
                "--fingerprint", "--help", "--version", "nccltune-probe/1", "--sweep FILE",
                "--capabilities", "--test-corrupt-choice I", "--test-stall-choice I",
                "--ranks-per-gpu K"]:
        if opt not in out:
            fail("--help does not mention %s" % opt)
    rc, out, err = run(["--version"])
    if rc != 0 or not out.startswith("nccltune-probe ") or "nccltune-probe/1" not in out:
        fail("--version: status %d, output %r" % (rc, out))


def check_no_gpu():
    hide = {"CUDA_VISIBLE_DEVICES": "", "NCCL_DEBUG": "INFO"}
    for mode in ["process", "all"]:
        rc, out, err = run(["--launch", mode, "--iters", "5"], hide)
        what = "no GPU, --launch %s" % mode
        if rc != 1:
            fail("%s: exit status %d, want 1 (stderr: %s)" % (what, rc, err[-300:]))
        if out.count("\n") != 1:
            fail("%s: stdout is not exactly one line: %r" % (what, out))
        try:
            obj = json.loads(out)
        except ValueError as e:
            fail("%s: stdout is not JSON (%s): %r" % (what, e, out))
            continue
        if obj.get("ok") is not False or obj.get("stage") != "init":
            fail("%s: want ok false at stage init, got %r" % (what, obj))
        if not str(obj.get("error", "")).startswith("no CUDA device visible: cudaGetDeviceCount"):
            fail("%s: error does not say plainly that no GPU is visible: %r" % (what, obj))
        if parse_with_tuner(out, what) != "fail init":
            fail("%s: not parsed as an init failure" % what)


def check_fingerprint_no_gpu():
    hide = {"CUDA_VISIBLE_DEVICES": ""}
    rc1, out1, _ = run(["--fingerprint"], hide)
    rc2, out2, _ = run(["--fingerprint"], hide)
    if rc1 != 0 or rc2 != 0:
        fail("--fingerprint without GPU: exit status %d/%d, want 0" % (rc1, rc2))
    if out1 != out2:
        fail("--fingerprint is not stable:\n%s\n%s" % (out1, out2))
    try:
        fp = json.loads(out1)
    except ValueError as e:
        fail("--fingerprint: not JSON (%s): %r" % (e, out1))
        return
    want = {"schema": str, "source": str, "host": str, "kernel": str, "driver": str,
            "cuda_runtime": str, "cuda_driver": str, "nccl_version": str, "gpu_count": int,
            "gpus": list, "topology": list}
    for key, typ in want.items():
        if not isinstance(fp.get(key), typ):
            fail("--fingerprint: %s missing or not %s: %r" % (key, typ.__name__, fp))
    if fp.get("schema") != "nccltune-fingerprint/1" or fp.get("source") != "measured":
        fail("--fingerprint: schema/source wrong: %r" % fp)
    if fp.get("gpu_count") != 0 or fp.get("gpus") != [] or fp.get("topology") != []:
        fail("--fingerprint with no visible GPU must list none: %r" % fp)
    if not any("no CUDA device visible" in w for w in fp.get("warnings", [])):
        fail("--fingerprint: warnings do not say why there is no GPU: %r" % fp)
    if not fp.get("nccl_version", "").count(".") == 2:
        fail("--fingerprint: nccl_version %r is not X.Y.Z" % fp.get("nccl_version"))


def check_nccl_option():
    """--nccl PATH: the probe re-executes on a copy of its NCCL in another folder and its
    fingerprint names that copy; a file the loader cannot take by the name libnccl.so.2
    fails at stage env (exit 1) naming both files; a missing one, a directory and a
    folder name with ':' too; --nccl twice is a usage error; --help and --version ignore
    it."""
    hide = {"CUDA_VISIBLE_DEVICES": ""}
    rc, out, _ = run(["--fingerprint"], hide)
    try:
        own = json.loads(out).get("nccl_path")
    except ValueError:
        own = None
    if not own or not os.path.isfile(own):
        fail("--fingerprint: nccl_path %r is not the loaded library" % own)
        return
    with tempfile.TemporaryDirectory() as d:
        copy = os.path.join(d, "libnccl.so.2")
        other = os.path.join(d, "other.so")
        with open(own, "rb") as src:
            data = src.read()
        for path in (copy, other):
            with open(path, "wb") as dst:
                dst.write(data)
        rc, out, err = run(["--nccl", copy, "--fingerprint"], hide)
        try:
            got = json.loads(out).get("nccl_path") if rc == 0 else None
        except ValueError:
            got = None
        if got != os.path.realpath(copy):
            fail("--nccl %s --fingerprint: exit %d, nccl_path %r (stderr %s)" %
                 (copy, rc, got, err.strip()))
        for bad in (other, os.path.join(d, "missing.so")):
            rc, out, _ = run(["--nccl", bad, "--fingerprint"], hide)
            try:
                rep = json.loads(out)
            except ValueError:
                rep = {}
            if rc != 1 or rep.get("stage") != "env" or bad not in rep.get("error", ""):
                fail("--nccl %s: want exit 1 at stage env naming it, got %d %r" %
                     (bad, rc, out))
        # a folder whose name holds LD_LIBRARY_PATH's separator, and a directory: refused
        # before any re-execution, naming why
        colon = os.path.join(d, "a:b")
        os.mkdir(colon)
        with open(os.path.join(colon, "libnccl.so.2"), "wb") as dst:
            dst.write(data)
        for bad, why in ((os.path.join(colon, "libnccl.so.2"), "':' or ';'"),
                         (d, "not a regular file")):
            rc, out, _ = run(["--nccl", bad, "--fingerprint"], hide)
            try:
                rep = json.loads(out)
            except ValueError:
                rep = {}
            if rc != 1 or rep.get("stage") != "env" or why not in rep.get("error", ""):
                fail("--nccl %s: want exit 1 at stage env saying %s, got %d %r" %
                     (bad, why, rc, out))
        # a library this system cannot load (here: not an ELF file; on the rig's build
        # machine NCCL 2.30.7 needs a newer glibc) is a report at stage env naming the
        # loader's reason, not a probe that dies in the loader after re-executing
        junk = os.path.join(d, "junk")
        os.mkdir(junk)
        with open(os.path.join(junk, "libnccl.so.2"), "w") as dst:
            dst.write("not a shared object\n")
        rc, out, _ = run(["--nccl", os.path.join(junk, "libnccl.so.2"), "--fingerprint"], hide)
        try:
            rep = json.loads(out)
        except ValueError:
            rep = {}
        if rc != 1 or rep.get("stage") != "env" or "cannot be loaded here" not in \
                rep.get("error", ""):
            fail("--nccl of a file the loader refuses: want exit 1 at stage env, got %d %r"
                 % (rc, out))
        # --nccl twice: a usage error; --help and --version never re-execute (a missing
        # library does not matter to them)
        rc, out, _ = run(["--nccl", copy, "--nccl", copy, "--fingerprint"], hide)
        if rc != 2 or "--nccl: given twice" not in out:
            fail("--nccl twice: want exit 2 saying so, got %d %r" % (rc, out))
        for opt in ("--help", "--version"):
            rc, out, _ = run(["--nccl", os.path.join(d, "missing.so"), opt], hide)
            if rc != 0:
                fail("--nccl MISSING %s: want exit 0, got %d %r" % (opt, rc, out[-300:]))


check_args_cases()
check_sweep_plugin_cases()
check_capabilities()
check_no_leftovers()
check_env_cases()
check_help_version()
check_no_gpu()
check_fingerprint_no_gpu()
check_nccl_option()
check_ranks_per_gpu()
check_launcher_rank()
if failures:
    print("%d failure(s)" % len(failures), file=sys.stderr)
    sys.exit(1)
print("all probe CLI checks passed")
