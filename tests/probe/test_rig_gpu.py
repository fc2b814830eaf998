#!/usr/bin/env python3
"""test_rig_gpu.py - two ranks on one GPU with NCCL 2.30 (suite 'gpu'; issue 26).

usage: test_rig_gpu.py PROBE PARSE_REPORT PLUGIN

Exits 77 (skipped) unless NCCLTUNE_NCCL230 names a libnccl.so.2 of NCCL 2.30+ and a GPU
is visible. Then nccltune-probe --nccl $NCCLTUNE_NCCL230 --ranks-per-gpu 2 runs a real
2-rank communicator on GPU 0, and what only real NCCL can show is asserted:
  * every report says ranks_per_gpu 2 and that the probe set NCCL_MULTI_RANK_GPU_ENABLE=1;
    the process mode says whether MPS serves the two processes (and warns when not);
  * NCCL decides (TUNING lines -> "nccl" on every result) at nranks 2;
  * the plugin's rule is what NCCL ran at the tuned size (Ring/LL on 2 CTAs at 43008 B),
    and at a guard size (117440512 B, no rule) NCCL's own choice is what it runs
    without the plugin;
  * every forced sweep choice is what NCCL ran; a choice NCCL rules out (NVLS, PAT) is
    "not available" and a spoiled choice fails alone while the run goes on;
  * symmetric windows at nranks 2 run (a symmetric kernel or NCCL's own) or fail with a
    stage and a reason; --compute-us works at nranks 2;
  * teardown never loses a result: --teardown clean in the all mode and under mpirun, and
    a teardown that hangs (--test-stall-teardown) is reported ok with a warning, in both
    (when it starts) ends ok: true, any hang aborted and named in "warnings".
Each figure of this rig is of two ranks sharing one GPU's SMs and memory."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

PROBE, PARSER, PLUGIN = sys.argv[1], sys.argv[2], sys.argv[3]
LIB = os.environ.get("NCCLTUNE_NCCL230", "")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


if not LIB or not os.path.isfile(LIB):
    print("skipped: NCCLTUNE_NCCL230 does not name NCCL 2.30's libnccl.so.2 (%r)" % LIB)
    sys.exit(77)
TMP = tempfile.mkdtemp(prefix="test-rig-gpu-")
RIG = ["--nccl", LIB, "--ranks-per-gpu", "2"]


def run(args, env_extra=None, cmd=None, timeout=300):
    env = dict(os.environ)
    env["NCCL_NVLS_ENABLE"] = "0"
    env["TMPDIR"] = TMP
    for name in ("NCCL_DEBUG", "NCCL_MULTI_RANK_GPU_ENABLE", "NCCL_TUNER_PLUGIN",
                 "NCCLTUNE_TUNER_TABLE"):
        env.pop(name, None)
    env.update(env_extra or {})
    p = subprocess.run((cmd or [PROBE]) + args, capture_output=True, text=True, env=env,
                       timeout=timeout)
    try:
        obj = json.loads(p.stdout)
    except ValueError:
        obj = {}
    return p.returncode, p.stdout, p.stderr, obj


def tuner_parse(out, what):
    p = subprocess.run([PARSER], input=out, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        fail("%s: the tuner's parser rejects the report: %s" % (what, p.stderr.strip()))
    return p.stdout.strip()


rc, out, err, fp = run(["--fingerprint", "--nccl", LIB])
if rc != 0 or fp.get("gpu_count", 0) < 1:
    print("skipped: no GPU visible (%s)" % "; ".join(fp.get("warnings", [err.strip()[-200:]])))
    sys.exit(77)
major, minor = (int(x) for x in fp.get("nccl_version", "0.0").split(".")[:2])
if (major, minor) < (2, 30):
    print("skipped: NCCLTUNE_NCCL230 is NCCL %s, not 2.30+" % fp.get("nccl_version"))
    sys.exit(77)

ALGOS = ["Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"]
PROTOS = ["LL", "LL128", "Simple"]


def decision(d, what):
    if not isinstance(d, dict) or d.get("algo") not in ALGOS or d.get("proto") not in PROTOS \
            or not isinstance(d.get("ctas"), int) or d["ctas"] < 1:
        fail("%s: not a decision of NCCL's: %r" % (what, d))
        return None
    return (d["algo"], d["proto"], d["ctas"])


def ok_rig(rc, out, err, obj, what, nresults):
    if rc != 0 or tuner_parse(out, what) != "ok 2 %d" % nresults:
        fail("%s: want ok at nranks 2, got %d %r %s" % (what, rc, out, err[-600:]))
        return False
    if obj.get("ranks_per_gpu") != 2 or \
            "NCCL_MULTI_RANK_GPU_ENABLE=1" not in obj.get("probe_env", []):
        fail("%s: the report does not say the rig (ranks_per_gpu, probe_env): %r" % (what, out))
    for w in obj.get("warnings", []):
        print("note: %s: warning: %s" % (what, w))
    return True


# 1. plain runs: NCCL decides at nranks 2, in both single-host modes
WORK = ["--bytes", "43008,1024", "--ops", "8", "--iters", "10", "--warmup", "2"]
for launch in ["all", "process"]:
    what = "rig --launch %s" % launch
    rc, out, err, obj = run(RIG + WORK + ["--launch", launch])
    if not ok_rig(rc, out, err, obj, what, 2):
        continue
    for res in obj["results"]:
        decision(res.get("nccl"), "%s, %d bytes" % (what, res["bytes"]))
    if launch == "process":
        if not isinstance(obj.get("mps"), bool):
            fail("%s: the report does not say whether MPS serves the processes: %r" % (what, out))
        elif not obj["mps"] and not any("MPS" in w for w in obj.get("warnings", [])):
            fail("%s: two processes share the GPU without MPS, and no warning says so" % what)

# 2. the plugin's rule at the tuned size; NCCL's own at the guard size
GUARD = 117440512
table = os.path.join(TMP, "rig.table")
with open(table, "w") as f:
    f.write("nccltune-tuner/1\nallreduce 2 * 43008 43008 ring ll 2 0\n")
SIZES = ["--bytes", "43008,%d" % GUARD, "--ops", "8,1", "--iters", "5", "--warmup", "1",
         "--launch", "all"]
rc, out, err, own = run(RIG + SIZES)
rc2, out2, err2, ruled = run(RIG + SIZES, {"NCCL_TUNER_PLUGIN": PLUGIN,
                                            "NCCLTUNE_TUNER_TABLE": table})
if ok_rig(rc, out, err, own, "guard size, NCCL alone", 2) and \
        ok_rig(rc2, out2, err2, ruled, "guard size, with the plugin's table", 2):
    tuned = decision(ruled["results"][0].get("nccl"), "the rule's size")
    if tuned and tuned != ("Ring", "LL", 2):
        fail("the plugin's rule (Ring/LL, 2 CTAs at 43008 B) is not what NCCL ran: %r" % (tuned,))
    g_own = decision(own["results"][1].get("nccl"), "guard size, NCCL alone")
    g_ruled = decision(ruled["results"][1].get("nccl"), "guard size, with the plugin")
    if g_own and g_ruled and g_own != g_ruled:
        fail("at the guard size (no rule) NCCL's own choice %r changed under the plugin: %r"
             % (g_own, g_ruled))

# 3. the sweep at nranks 2: forced choices run as forced, ruled-out ones not available,
# a spoiled one fails alone
SWEEP = {"schema": "nccltune-sweep/1", "rounds": 2, "seed": 3, "choices": [
    {"bytes": 43008, "algo": "Ring", "proto": "LL", "ctas": 1},
    {"bytes": 43008, "algo": "Ring", "proto": "LL", "ctas": 2},
    {"bytes": 43008, "algo": "Ring", "proto": "Simple"},
    {"bytes": 43008, "algo": "Tree", "proto": "LL"},
    {"bytes": 43008, "algo": "Ring", "proto": "LL128"},
    {"bytes": 43008},
    {"bytes": 43008, "algo": "NVLS", "proto": "Simple"},
    {"bytes": 43008, "algo": "PAT", "proto": "Simple"},
]}
sweep_file = os.path.join(TMP, "sweep.json")
with open(sweep_file, "w") as f:
    json.dump(SWEEP, f)
SW = ["--bytes", "43008", "--ops", "8", "--iters", "10", "--warmup", "1", "--sweep", sweep_file,
      "--launch", "all"]
for extra, spoiled in [([], None), (["--test-corrupt-choice", "1", "--test-corrupt-rank", "1"], 1)]:
    what = "rig sweep %s" % " ".join(extra)
    rc, out, err, obj = run(RIG + SW + extra, {"NCCL_TUNER_PLUGIN": PLUGIN})
    if not ok_rig(rc, out, err, obj, what, 1):
        continue
    sw = obj.get("sweep", [])
    if len(sw) != len(SWEEP["choices"]):
        fail("%s: %d entries for %d choices" % (what, len(sw), len(SWEEP["choices"])))
        continue
    for i, (c, e) in enumerate(zip(SWEEP["choices"], sw)):
        at = "%s, choice %d" % (what, i)
        if i == spoiled:
            if e.get("ok") is not False or e.get("stage") != "verify":
                fail("%s: a spoiled choice must fail alone at verify: %r" % (at, e))
            continue
        if i in (6, 7):
            if e.get("ok") is not False or e.get("stage") != "env" or \
                    not e.get("error", "").startswith("not available"):
                fail("%s: NCCL rules it out: want 'not available', got %r" % (at, e))
            continue
        if i in (3, 4) and e.get("ok") is False:
            if e.get("stage") != "env" or not e.get("error", "").startswith("not available"):
                fail("%s: unusable here, but then 'not available': %r" % (at, e))
            print("note: %s: %s" % (at, e.get("error")))
            continue
        if e.get("ok") is not True:
            fail("%s: want ok: %r" % (at, e))
            continue
        d = decision(e.get("nccl"), at)
        if d and c.get("algo") and (d[0], d[1]) != (c["algo"], c["proto"]):
            fail("%s: forced %s/%s, NCCL ran %r" % (at, c["algo"], c["proto"], d))
        if d and c.get("ctas") and d[2] != c["ctas"]:
            fail("%s: forced %d CTAs, NCCL ran %r" % (at, c["ctas"], d))

# 4. symmetric windows and compute at nranks 2
SRV = ["--bytes", "43008", "--ops", "8", "--iters", "10", "--warmup", "2", "--launch", "all"]
rc, out, err, obj = run(RIG + SRV + ["--window", "symmetric"])
if rc == 0:
    if ok_rig(rc, out, err, obj, "rig --window symmetric", 1) and obj.get("window") != "symmetric":
        fail("rig --window symmetric: no window echo: %r" % out)
    print("note: symmetric windows at nranks 2: NCCL ran %r" % obj["results"][0].get("nccl"))
elif obj.get("ok") is not False or obj.get("stage") not in ("init", "capture", "env") or \
        not obj.get("error"):
    fail("rig --window symmetric: neither ok nor NCCL's reason: %d %r" % (rc, out))
else:
    print("note: NCCL refuses symmetric windows at nranks 2: %s" % obj["error"])
rc, out, err, obj = run(RIG + SRV + ["--compute-us", "20,8"])
if ok_rig(rc, out, err, obj, "rig --compute-us 20,8", 1) and \
        obj.get("compute", {}).get("kernel_us") != 20:
    fail("rig --compute-us: no compute echo: %r" % out)

# 5. teardown never loses a result: clean teardown, all mode and (when it starts) MPI
rc, out, err, obj = run(RIG + WORK + ["--launch", "all", "--teardown", "clean",
                                      "--step-timeout", "20"])
ok_rig(rc, out, err, obj, "rig --teardown clean --launch all", 2)
mpirun = shutil.which("mpirun")
rc, out, err, _ = run(["--version"])
if mpirun and "with MPI launch" in out:
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
           "-x", "NCCL_NVLS_ENABLE", "-x", "TMPDIR", "-x", "LD_LIBRARY_PATH", PROBE]
    rc, out, err, obj = run(["--nccl", LIB, "--bytes", "43008", "--ops", "4", "--iters", "5",
                             "--warmup", "1", "--step-timeout", "20"], cmd=cmd)
    if not obj:
        print("note: mpirun did not start the probe (%d): %s" % (rc, err[-300:]))
    else:
        ok_rig(rc, out, err, obj, "mpirun -np 2 (clean teardown)", 1)
        # a teardown that hangs (--test-stall-teardown: rank 0 stops as it starts) ends
        # in the watchdog, and the report keeps every result, ok, naming what hung
        t0 = time.monotonic()
        rc, out, err, obj = run(["--nccl", LIB, "--bytes", "43008", "--ops", "4", "--iters",
                                 "5", "--warmup", "1", "--step-timeout", "5",
                                 "--test-stall-teardown"], cmd=cmd, timeout=120)
        hung = [w for w in (obj or {}).get("warnings", []) if "teardown hung" in w]
        # mpirun calls the job failed (a rank left without MPI_Finalize): the report says
        # teardown_hung, so the tuner takes it whatever the exit status
        if tuner_parse(out, "mpirun, teardown stalled") != "ok 2 1" or not hung or \
                obj.get("teardown_hung") is not True:
            fail("mpirun -np 2, teardown stalled: want an ok report with teardown_hung and "
                 "a warning naming the hung teardown, got %d %r %s" % (rc, out, err[-300:]))
        print("note: mpirun -np 2, teardown stalled: reported in %.0f s" % (time.monotonic() - t0))
# the same in the all mode (one process, both ranks)
rc, out, err, obj = run(RIG + WORK + ["--launch", "all", "--step-timeout", "5",
                                      "--test-stall-teardown"], timeout=120)
if ok_rig(rc, out, err, obj, "rig --launch all, teardown stalled", 2) and \
        (not [w for w in obj.get("warnings", []) if "teardown hung" in w] or
         obj.get("teardown_hung") is not True):
    fail("rig --launch all, teardown stalled: no warning or teardown_hung: %r" % out)

shutil.rmtree(TMP, ignore_errors=True)
if failures:
    print("%d failure(s)" % len(failures), file=sys.stderr)
    sys.exit(1)
print("all rig checks passed (two ranks on one GPU, NCCL %s)" % fp.get("nccl_version"))
