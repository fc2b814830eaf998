#!/usr/bin/env python3
"""fake_torchrun.py - stands in for `python -m torch.distributed.run` in compare.py's test:
ignores the worker script and prints the worker's JSON with a step time that depends on
the environment it was given (NCCLTUNE_OFF set: 10 ms; NCCL_PROTO=LL: 8 ms; else the
"installed" tuned result: 5 ms, or NCCL_FAKE_STEP_MS), and with TUNING in
NCCL_DEBUG_SUBSYS one NCCL decision line per rank (Tree with NCCLTUNE_OFF, else Ring).
FAKE_FAIL=1 fails the run."""
import json
import os
import sys

env = os.environ
if env.get("FAKE_FAIL") == "1" and env.get("NCCL_PROTO") == "LL":
    print("worker crashed", file=sys.stderr)
    sys.exit(1)
if env.get("NCCLTUNE_OFF") == "1":
    step = 8.0 if env.get("NCCL_PROTO") == "LL" else 10.0
else:
    step = float(env.get("NCCL_FAKE_STEP_MS", "5.0"))
seen = {k: v for k, v in env.items() if k.startswith(("NCCL_", "NCCLTUNE_"))}
ms = lambda v: {"median": v, "p10": v, "p90": v, "min": v, "max": v, "samples": 20,
                "slowest_rank_median": v}
print("some torchrun noise")
if "TUNING" in env.get("NCCL_DEBUG_SUBSYS", ""):   # NCCL's TUNING line, one per rank
    algo = "TREE" if env.get("NCCLTUNE_OFF") == "1" else "RING"
    for rank in range(int(sys.argv[1])):
        print("vm:1:1 [%d] NCCL INFO AllReduce: 43008 Bytes -> Algo %s proto LL "
              "channel{Lo..Hi}={0..3}" % (rank, algo), file=sys.stderr)
print(json.dumps({"schema": "nccltune-client/1", "ok": True, "world_size": int(sys.argv[1]),
                  "torch": "2.11.0", "nccl_version": "2.28.9", "nccl_path": "/x/libnccl.so.2",
                  "gpu": "fake", "ms": {"step": ms(step), "allreduce": ms(step / 2)},
                  "prefill_ms": ms(100.0), "exact": True, "env": seen, "argv": sys.argv[2:]}))
