#!/usr/bin/env python3
"""test_gpu.py - nccltune-probe on real GPUs (suite 'gpu').

usage: test_gpu.py PROBE PARSE_REPORT

Exits 77 (skipped) when --fingerprint sees no GPU, saying why. Otherwise: in place and
out of place, per-process and single-process launch, must report ok with correct sums
and a sane schema, with --teardown clean and fast alike (and no probe process left
on a GPU after them); NCCL_PROTO=Bogus and NCCL_ALGO=Bogus must fail at stage env, and,
left to NCCL (--no-env-check), at init when there are several ranks; a result spoiled on
the GPU (--test-corrupt-rank) must fail at stage verify naming the rank."""
import json
import math
import os
import shutil
import subprocess
import sys

PROBE, PARSER = sys.argv[1], sys.argv[2]
failures = []
STEPS = ["cuda_init", "nccl_init", "eager", "capture", "instantiate", "warmup", "timing",
         "verify", "teardown"]


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(args, env_extra=None):
    env = dict(os.environ)
    env["NCCL_NVLS_ENABLE"] = "0"   # never multicast on shared machines
    env.update(env_extra or {})
    p = subprocess.run([PROBE] + args, capture_output=True, text=True, env=env, timeout=240)
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

if failures:
    print("%d failure(s)" % len(failures), file=sys.stderr)
    sys.exit(1)
print("all GPU checks passed on %d GPU(s)" % ngpu)
