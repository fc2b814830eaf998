#!/usr/bin/env python3
"""test_gpu.py - nccltune-probe on real GPUs (suite 'gpu').

usage: test_gpu.py PROBE PARSE_REPORT PLUGIN

Exits 77 (skipped) when --fingerprint sees no GPU, saying why. Otherwise: in place and
out of place, per-process and single-process launch, must report ok with correct sums
and a sane schema, with --teardown clean and fast alike (and no probe process left
on a GPU after them); NCCL_PROTO=Bogus and NCCL_ALGO=Bogus must fail at stage env, and,
left to NCCL (--no-env-check), at init when there are several ranks (NCCL's WARN lines
then reach stderr); a result spoiled on the GPU (--test-corrupt-rank) must fail at stage
verify naming the rank. The extensions: --capabilities; --ops lists (each size's own
count); decisions ("nccl" on every result with several ranks, none with one rank or
with the user's NCCL_DEBUG); --sweep through PLUGIN (forced pairs run as forced, IGNORE
pairs "not available", a spoiled choice "verify" while the run goes on, a stalled
choice named by sweep_in_flight), in the process, all and (when mpirun works) mpi
modes; and no private NCCL log folder left in TMPDIR afterwards."""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

PROBE, PARSER, PLUGIN = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []
TMP = tempfile.mkdtemp(prefix="test-gpu-")   # TMPDIR of every run: must stay empty
STEPS = ["cuda_init", "nccl_init", "eager", "capture", "instantiate", "warmup", "timing",
         "verify", "teardown"]


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(args, env_extra=None, drop=("NCCL_DEBUG",), cmd=None):
    env = dict(os.environ)
    env["NCCL_NVLS_ENABLE"] = "0"   # never multicast on shared machines
    env["TMPDIR"] = TMP
    for name in drop:
        env.pop(name, None)
    env.update(env_extra or {})
    p = subprocess.run((cmd or [PROBE]) + args, capture_output=True, text=True, env=env,
                       timeout=240)
    return p.returncode, p.stdout, p.stderr


def tuner_parse(out, what):
    p = subprocess.run([PARSER], input=out, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        fail("%s: the tuner's parser rejects the report: %s" % (what, p.stderr.strip()))
    return p.stdout.strip()


rc, out, err = run(["--fingerprint"])
try:
    fp = json.loads(out)
except ValueError:
    fp = {}
if rc != 0 or fp.get("gpu_count", 0) < 1:
    print("skipped: no GPU visible (%s)" % "; ".join(fp.get("warnings", [err.strip()])))
    sys.exit(77)
ngpu = fp["gpu_count"]

WORK = ["--bytes", "43008,1024", "--ops", "8", "--iters", "20", "--warmup", "2"]
for extra in [[], ["--out-of-place"], ["--launch", "all"], ["--dtype", "f16"],
              ["--dtype", "f32", "--out-of-place", "--launch", "all"]]:
    what = "run %s" % " ".join(extra)
    rc, out, err = run(WORK + extra)
    if rc != 0:
        fail("%s: exit status %d: %s | %s" % (what, rc, out.strip(), err[-500:]))
        continue
    obj = json.loads(out)
    if tuner_parse(out, what) != "ok %d 2" % ngpu:
        fail("%s: want ok with %d ranks and 2 results: %s" % (what, ngpu, out))
    if obj.get("source") != "measured" or obj.get("nranks") != ngpu:
        fail("%s: source/nranks wrong: %s" % (what, out))
    for res, size in zip(obj.get("results", []), [43008, 1024]):
        us = res["us"]
        if res["bytes"] != size or res["ops"] != 8 or res["samples"] != 20 or not res["correct"]:
            fail("%s: result fields wrong: %r" % (what, res))
        if not all(math.isfinite(us[k]) and us[k] >= 0 for k in us):
            fail("%s: latencies not finite: %r" % (what, us))
        if not us["min"] <= us["p10"] <= us["median"] <= us["p90"] <= us["max"]:
            fail("%s: quantiles out of order: %r" % (what, us))
    phases = obj.get("phases_s", {})
    if sorted(phases) != sorted(STEPS) or not all(v >= 0 for v in phases.values()):
        fail("%s: phases_s wrong: %r" % (what, phases))

# Both ends of a verified run: clean destroys the communicators, fast leaves them to
# the process exit. Same reports (ok, correct, same fields) either way, a teardown phase
# either way, and nothing left on the GPU afterwards.
for launch in ["process", "all"]:
    for how in ["clean", "fast"]:
        what = "--launch %s --teardown %s" % (launch, how)
        rc, out, err = run(WORK + ["--launch", launch, "--teardown", how])
        if rc != 0:
            fail("%s: exit status %d: %s | %s" % (what, rc, out.strip(), err[-500:]))
            continue
        if tuner_parse(out, what) != "ok %d 2" % ngpu:
            fail("%s: want ok with %d ranks and 2 results: %s" % (what, ngpu, out))
        obj = json.loads(out)
        if not all(res["correct"] for res in obj.get("results", [])):
            fail("%s: not correct: %s" % (what, out))
        if obj.get("phases_s", {}).get("teardown", -1) < 0:
            fail("%s: no teardown phase: %s" % (what, out))
smi = shutil.which("nvidia-smi")
if smi:
    p = subprocess.run([smi, "--query-compute-apps=pid,process_name,used_memory",
                        "--format=csv,noheader"], capture_output=True, text=True, timeout=60)
    left = [line for line in p.stdout.splitlines() if "nccltune-probe" in line]
    if p.returncode != 0 or left:
        fail("after the runs: nvidia-smi status %d, probe processes still on a GPU: %r"
             % (p.returncode, left))

# A wrong sum on the GPU is caught: --test-corrupt-rank spoils one element of that
# rank's result on the device before the exact check, in every launch mode.
for rank in sorted({0, ngpu - 1}):
    for launch in ["process", "all"]:
        what = "--test-corrupt-rank %d --launch %s" % (rank, launch)
        rc, out, err = run(WORK + ["--test-corrupt-rank", str(rank), "--launch", launch])
        if rc != 1 or tuner_parse(out, what) != "fail verify" or \
                ("wrong sum on rank %d:" % rank) not in out:
            fail("%s: want a verify failure naming rank %d, got %d %r" % (what, rank, rc, out))
rc, out, err = run(WORK + ["--test-corrupt-rank", str(ngpu)])
if rc != 1 or tuner_parse(out, "corrupt a missing rank") != "fail init" or \
        "only %d rank(s)" % ngpu not in out:
    fail("--test-corrupt-rank %d: want an init failure, got %d %r" % (ngpu, rc, out))

for var in ["NCCL_PROTO", "NCCL_ALGO"]:
    # The probe's own check refuses unknown names at stage env on any machine.
    what = "%s=Bogus" % var
    rc, out, err = run(WORK, {var: "Bogus"})
    if rc != 1 or tuner_parse(out, what) != "fail env" or var not in out:
        fail("%s: want an env failure naming %s, got %d %r" % (what, var, rc, out))
    # Left to NCCL: with several ranks init must fail; with one, NCCL never looks.
    what += " --no-env-check"
    rc, out, err = run(WORK + ["--no-env-check"], {var: "Bogus"})
    try:
        obj = json.loads(out)
    except ValueError:
        fail("%s: stdout not JSON (exit %d): %r" % (what, rc, out))
        continue
    tuner_parse(out, what)
    if ngpu == 1 and obj.get("ok"):
        print("note: %s accepted by NCCL with 1 rank" % what)
    elif rc != 1 or obj.get("ok") is not False or obj.get("stage") not in ("init", "capture"):
        fail("%s: want an init/capture failure with exit 1, got %d %r" % (what, rc, obj))

    if ngpu > 1 and rc == 1 and " NCCL WARN " not in err:
        fail("%s: NCCL's warning did not reach stderr: %s" % (what, err[-500:]))

# ---- the extensions ----
rc, out, err = run(["--capabilities"])
if rc != 0 or json.loads(out or "{}") != {"schema": "nccltune-probe/1",
                                           "capabilities": ["ops-list", "decisions", "sweep",
                                                            "window", "compute"]}:
    fail("--capabilities: %d %r" % (rc, out))


def check_decision(d, what):
    if not isinstance(d, dict) or d.get("algo") not in ALGOS or d.get("proto") not in PROTOS \
            or not isinstance(d.get("ctas"), int) or d["ctas"] < 1 or d.get("symmetric") is not False:
        fail("%s: not a decision: %r" % (what, d))


ALGOS = ["Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"]
PROTOS = ["LL", "LL128", "Simple"]

# --ops lists and decisions, in both single-host modes
for launch in ["process", "all"]:
    what = "--ops 8,2 --launch %s" % launch
    rc, out, err = run(["--bytes", "43008,1024", "--ops", "8,2", "--iters", "20", "--warmup", "2",
                        "--launch", launch])
    if rc != 0 or tuner_parse(out, what) != "ok %d 2" % ngpu:
        fail("%s: %d %r %s" % (what, rc, out, err[-300:]))
        continue
    obj = json.loads(out)
    if [res["ops"] for res in obj["results"]] != [8, 2]:
        fail("%s: per-size ops wrong: %s" % (what, out))
    for res in obj["results"]:
        if ngpu == 1 and "nccl" in res:
            fail("%s: one rank runs no algorithm, yet a decision: %r" % (what, res))
        if ngpu > 1:
            check_decision(res.get("nccl"), "%s, %d bytes" % (what, res["bytes"]))
    rc, out, err = run(["--bytes", "43008", "--ops", "8", "--iters", "5", "--launch", launch],
                       {"NCCL_DEBUG": "WARN"}, drop=())
    if rc != 0 or any("nccl" in res for res in json.loads(out)["results"]):
        fail("%s with the user's NCCL_DEBUG: want no decision, got %d %r" % (what, rc, out))

# the sweep: forced pairs, IGNORE pairs, a clamped CTA count, two sizes
SWEEP = {"schema": "nccltune-sweep/1", "rounds": 3, "seed": 5, "choices": [
    {"bytes": 43008, "algo": "Ring", "proto": "LL", "ctas": 1},
    {"bytes": 43008, "algo": "ring", "proto": "ll", "ctas": 2},
    {"bytes": 43008, "algo": "Ring", "proto": "Simple"},
    {"bytes": 43008, "algo": "Tree", "proto": "LL"},
    {"bytes": 43008},
    {"bytes": 43008, "algo": "Ring", "proto": "LL", "ctas": 64},
    {"bytes": 43008, "algo": "NVLS", "proto": "Simple"},      # NCCL_NVLS_ENABLE=0: IGNORE
    {"bytes": 43008, "algo": "PAT", "proto": "Simple"},       # PAT has no all-reduce
    {"bytes": 1024, "algo": "Ring", "proto": "LL128", "ctas": 0},
]}
sweep_file = os.path.join(TMP, "sweep.json")
with open(sweep_file, "w") as f:
    json.dump(SWEEP, f)
SWEEP_RUN = ["--bytes", "43008,1024", "--ops", "8,4", "--iters", "30", "--warmup", "2",
             "--sweep", sweep_file]
PLUGIN_ENV = {"NCCL_TUNER_PLUGIN": PLUGIN}
CANON = {"ring": "Ring", "ll": "LL"}


def check_sweep_report(obj, what, spoiled=None):
    sw = obj.get("sweep", [])
    if len(sw) != len(SWEEP["choices"]) or [e.get("index") for e in sw] != list(range(len(sw))):
        fail("%s: want %d entries in order: %r" % (what, len(SWEEP["choices"]), sw))
        return
    if [r["ops"] for r in obj.get("results", [])] != [8, 4]:
        fail("%s: results wrong: %r" % (what, obj.get("results")))
    for i, (c, e) in enumerate(zip(SWEEP["choices"], sw)):
        at = "%s, choice %d" % (what, i)
        algo = CANON.get(c.get("algo"), c.get("algo"))
        proto = CANON.get(c.get("proto"), c.get("proto"))
        if (e["bytes"], e["algo"], e["proto"], e["ctas"]) != (c["bytes"], algo, proto,
                                                                c.get("ctas", 0)):
            fail("%s: the entry does not echo the choice (canonical names): %r" % (at, e))
        if i == spoiled:
            if e.get("ok") is not False or e.get("stage") != "verify" or \
                    "wrong sum on rank %d" % (ngpu - 1) not in e.get("error", ""):
                fail("%s: want a verify failure naming rank %d: %r" % (at, ngpu - 1, e))
            continue
        if ngpu > 1 and i in (6, 7):
            want = "not available: %s/Simple is not usable here (NCCL's cost table has it " \
                   "IGNORE)" % algo
            if e.get("ok") is not False or e.get("stage") != "env" or e.get("error") != want:
                fail("%s: want %r, got %r" % (at, want, e))
            continue
        if ngpu > 1 and i in (3, 8) and e.get("ok") is False:
            # Tree/LL and Ring/LL128 depend on the machine: ok as forced, or IGNORE
            if e.get("stage") != "env" or not e.get("error", "").startswith("not available"):
                fail("%s: may be unusable here, but then 'not available': %r" % (at, e))
            continue
        if e.get("ok") is not True or e.get("samples") != 30:
            fail("%s: want ok with 30 samples: %r" % (at, e))
            continue
        us = e["us"]
        if not us["min"] <= us["p10"] <= us["median"] <= us["p90"] <= us["max"]:
            fail("%s: quantiles out of order: %r" % (at, us))
        if ngpu == 1:
            if "nccl" in e:
                fail("%s: one rank, yet a decision: %r" % (at, e))
            continue
        d = e.get("nccl")
        check_decision(d, at)
        if not isinstance(d, dict):
            continue
        if algo and d.get("algo") != algo or proto and d.get("proto") != proto:
            fail("%s: forced %s/%s, NCCL ran %r" % (at, algo, proto, d))
        if i == 0 and d.get("ctas") != 1 or i == 1 and d.get("ctas", 99) > 2:
            fail("%s: forced %s CTAs, NCCL ran %r" % (at, c.get("ctas"), d))
        if i == 5 and not 1 <= d.get("ctas", 0) <= 64:
            fail("%s: 64 CTAs are clamped to the pool, and the entry says what ran: %r" % (at, d))
    if ngpu > 1:
        for res in obj.get("results", []):
            check_decision(res.get("nccl"), "%s, results %d" % (what, res["bytes"]))


for launch in ["process", "all"]:
    what = "--sweep --launch %s" % launch
    rc, out, err = run(SWEEP_RUN + ["--launch", launch], PLUGIN_ENV)
    if rc != 0 or tuner_parse(out, what) != "ok %d 2" % ngpu:
        fail("%s: %d %r %s" % (what, rc, out, err[-500:]))
    else:
        check_sweep_report(json.loads(out), what)
    # a wrong sum in one choice: that choice fails, the run goes on
    what = "--sweep --test-corrupt-choice 1 --launch %s" % launch
    rc, out, err = run(SWEEP_RUN + ["--launch", launch, "--test-corrupt-choice", "1",
                                    "--test-corrupt-rank", str(ngpu - 1)], PLUGIN_ENV)
    if rc != 0 or tuner_parse(out, what) != "ok %d 2" % ngpu:
        fail("%s: %d %r %s" % (what, rc, out, err[-500:]))
    else:
        check_sweep_report(json.loads(out), what, spoiled=1)
    # a choice that hangs: the failure names it and carries the entries final by then
    what = "--sweep --test-stall-choice 2 --launch %s" % launch
    rc, out, err = run(SWEEP_RUN + ["--launch", launch, "--test-stall-choice", "2",
                                    "--step-timeout", "4"], PLUGIN_ENV)
    tuner_parse(out, what)
    try:
        obj = json.loads(out)
    except ValueError:
        obj = {}
    if rc != 1 or obj.get("ok") is not False or obj.get("stage") != "replay" or \
            obj.get("sweep_in_flight") != 2 or not isinstance(obj.get("sweep"), list):
        fail("%s: want a replay failure with sweep_in_flight 2, got %d %r" % (what, rc, out))
    elif ngpu > 1 and [e["index"] for e in obj["sweep"] if e["index"] in (6, 7)] != [6, 7]:
        fail("%s: the not-available entries (final before the replays) are missing: %r"
             % (what, obj["sweep"]))

# under MPI, when this machine can start it
# ---- the server's step: --compute-us and --window symmetric ----
# The compute kernel (hand-written PTX, JIT-compiled by the driver) runs before every
# captured all-reduce: the step grows by about ops x kernel_us, the kernel alone is
# timed at about its duration, and allreduce_us is what is left of one op.
SRV = ["--bytes", "43008", "--ops", "16", "--iters", "10", "--warmup", "2"]
rc, out, err = run(SRV)
base = json.loads(out)["results"][0]["us"]["median"] if rc == 0 else None
for launch in ["process", "all"]:
    what = "--compute-us 50,8 --launch %s" % launch
    rc, out, err = run(SRV + ["--compute-us", "50,8", "--launch", launch])
    if rc != 0 or tuner_parse(out, what) != "ok %d 1" % ngpu:
        fail("%s: %d %r %s" % (what, rc, out, err[-500:]))
        continue
    obj = json.loads(out)
    comp, res = obj.get("compute", {}), obj["results"][0]
    if comp.get("kernel_us") != 50 or comp.get("ctas") != 8:
        fail("%s: compute echo wrong: %r" % (what, comp))
    if not 45 <= comp.get("us", {}).get("median", 0) <= 80:
        fail("%s: the kernel alone took %r us, not about 50" % (what, comp.get("us")))
    if not 50 <= res["us"]["median"] <= 50 + (base or 0) + 40:
        fail("%s: one op of the step is %r us, not about 50 + the all-reduce" % (what, res["us"]))
    if abs(res.get("step_us", 0) - 16 * res["us"]["median"]) > 1e-6 * res.get("step_us", 1) + 1e-3:
        fail("%s: step_us %r is not ops x us" % (what, res.get("step_us")))
    if not 0 <= res.get("allreduce_us", -1) <= res["us"]["median"]:
        fail("%s: allreduce_us %r" % (what, res.get("allreduce_us")))
rc, out, err = run(SRV + ["--compute-us", "20"])   # one CTA per SM (132 on an H200)
ctas = json.loads(out or "{}").get("compute", {}).get("ctas", 0)
if rc != 0 or not isinstance(ctas, int) or ctas < 1:
    fail("--compute-us 20 (one CTA per SM): %d %r" % (rc, out))

# Symmetric windows: the run must work (one rank: NCCL may run no kernel at all) and say
# so; cuMem off is refused before NCCL starts.
for extra in [[], ["--out-of-place"], ["--launch", "all", "--teardown", "clean"]]:
    what = "--window symmetric %s" % " ".join(extra)
    rc, out, err = run(SRV + ["--window", "symmetric"] + extra)
    if rc != 0 or tuner_parse(out, what) != "ok %d 1" % ngpu:
        fail("%s: %d %r %s" % (what, rc, out, err[-500:]))
    elif json.loads(out).get("window") != "symmetric":
        fail("%s: no window echo: %r" % (what, out))
rc, out, err = run(SRV + ["--window", "symmetric"], {"NCCL_CUMEM_ENABLE": "0"})
obj = json.loads(out or "{}")
if rc != 1 or obj.get("stage") != "env" or "NCCL_CUMEM_ENABLE=0" not in obj.get("error", ""):
    fail("--window symmetric with NCCL_CUMEM_ENABLE=0: want stage env, got %d %r" % (rc, out))

mpirun = shutil.which("mpirun")
rc, out, err = run(["--version"])
if mpirun and "with MPI launch" in out:
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(ngpu),
           "-x", "NCCL_NVLS_ENABLE", "-x", "TMPDIR", "-x", "NCCL_TUNER_PLUGIN", PROBE]
    rc, out, err = run(SWEEP_RUN + ["--launch", "mpi"], PLUGIN_ENV, cmd=cmd)
    try:
        obj = json.loads(out)
    except ValueError:
        obj = None
        print("note: mpirun did not start the probe (%d): %s" % (rc, err[-300:]))
    if obj is not None:
        if rc != 0 or tuner_parse(out, "--sweep --launch mpi") != "ok %d 2" % ngpu:
            fail("--sweep --launch mpi: %d %r %s" % (rc, out, err[-500:]))
        else:
            check_sweep_report(obj, "--sweep --launch mpi")

left = os.listdir(TMP)
if left != ["sweep.json"]:
    fail("the private NCCL log folders were not all removed: %r" % left)
shutil.rmtree(TMP, ignore_errors=True)

if failures:
    print("%d failure(s)" % len(failures), file=sys.stderr)
    sys.exit(1)
print("all GPU checks passed on %d GPU(s)" % ngpu)
