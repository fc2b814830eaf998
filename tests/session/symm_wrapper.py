#!/usr/bin/env python3
"""symm_wrapper.py - a --probe for test_symmetric.sh: logs every invocation (its
arguments and the NCCL_CUMEM_ENABLE and NCCL_NVLS_ENABLE it got), runs nccltune-model-probe with the same
arguments and passes its report on, optionally changed. Knobs, from the environment:
  WRAP_PROBE=PATH        the model probe (required)
  WRAP_LOG=FILE          append {"args": [...], "cumem": value or null, "nvls": value
                         or null, "odd": [names
                         with a '.' or 'symm' in the environment]} per invocation
  WRAP_KERNEL_US=US      report the kernel alone as measured at US (compute.us), each
                         result's allreduce_us as its us.median less US: a probe whose
                         measured kernel differs from the one asked
  WRAP_NO_DECISIONS=1    drop every result's "nccl" (no TUNING line, as at one rank)"""
import json
import os
import subprocess
import sys

args = sys.argv[1:]
log = os.environ.get("WRAP_LOG")
if log:
    with open(log, "a") as f:
        # "odd": names no NCCL or CUDA variable has (a server option leaked as a variable)
        odd = sorted(k for k in os.environ if "." in k or "symm" in k.lower())
        f.write(json.dumps({"args": args, "cumem": os.environ.get("NCCL_CUMEM_ENABLE"),
                            "nvls": os.environ.get("NCCL_NVLS_ENABLE"), "odd": odd}) + "\n")
p = subprocess.run([os.environ["WRAP_PROBE"]] + args, stdout=subprocess.PIPE)
out = p.stdout.decode()
k, nodec = os.environ.get("WRAP_KERNEL_US"), os.environ.get("WRAP_NO_DECISIONS")
if (k or nodec) and "--fingerprint" not in args and "--capabilities" not in args:
    try:
        doc = json.loads(out)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("ok"):
        if k and "compute" in doc:
            doc["compute"]["us"] = {s: float(k) for s in ("median", "p10", "p90", "min", "max")}
        for r in doc.get("results", []):
            if k and "allreduce_us" in r:
                r["allreduce_us"] = max(0.0, r["us"]["median"] - float(k))
            if nodec:
                r.pop("nccl", None)
        out = json.dumps(doc) + "\n"
sys.stdout.write(out)
sys.exit(p.returncode)
