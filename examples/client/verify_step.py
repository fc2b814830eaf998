#!/usr/bin/env python3
"""verify_step.py - a tensor-parallel verify step in PyTorch, the way a server runs it.

Run under torchrun, one process per GPU:

    torchrun --nproc_per_node 8 examples/client/verify_step.py --bytes 43008 --ops 122

Per all-reduce it runs the GEMM a row-parallel layer does before it (x[tokens, k] @
W[k, hidden], bf16, a distinct W per layer so caches are as cold as in a model) and then
the all-reduce of the layer's output, tokens x hidden x 2 bytes: --bytes 43008 is 3 tokens
of a 7168-wide model (Kimi K2, DeepSeek V3; 122 all-reduces per step = 61 layers x 2).
Each GEMM reads the previous all-reduce's output, so the step is one dependency chain, as
in a model. The whole step is captured with torch.cuda.graph and replayed; so are the
all-reduces alone and the GEMMs alone, and an eager prefill-size all-reduce is timed too
(--prefill-bytes, default 117,440,512 B = 8192 tokens x 7168 x 2). The variants are
replayed in interleaved rounds.

Rank 0 prints one JSON object (schema "nccltune-client/1") on stdout: the step time, the
all-reduce-only and GEMM-only times, the prefill all-reduce, the NCCL library torch loaded
(version and path), the NCCL/nccltune variables the process saw, and whether the
all-reduce sums were exact. Everything else goes to stderr. Exit 0 on success, 1 when a
measurement failed or a sum was wrong, 2 for bad options.

It needs nothing but PyTorch: run it with the interpreter a server uses, so that what is
installed into that interpreter (nccltune's .pth or sitecustomize block, its tuner plugin
and variables) reaches torch's NCCL in every worker. examples/client/compare.py runs it
under NCCL's defaults, the tuned result and --try configurations, interleaved."""
import argparse
import gc
import json
import os
import statistics
import sys
import time

SCHEMA = "nccltune-client/1"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bytes", type=int, default=43008,
                   help="bytes of one all-reduce (tokens x hidden x 2), default 43008")
    p.add_argument("--ops", type=int, default=122, help="all-reduces per step, default 122")
    p.add_argument("--hidden", type=int, default=7168, help="model width, default 7168")
    p.add_argument("--gemm-k", type=int, default=2304,
                   help="inner dimension of each GEMM (the TP shard), default 2304; 0: no GEMMs")
    p.add_argument("--prefill-bytes", type=int, default=117440512,
                   help="bytes of the eager prefill all-reduce, default 117440512; 0: none")
    p.add_argument("--replays", type=int, default=20, help="timed replays per round, default 20")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds, default 5")
    p.add_argument("--warmup", type=int, default=5, help="untimed replays first, default 5")
    p.add_argument("--weights-gib", type=float, default=8.0,
                   help="most GiB of distinct GEMM weights (then they repeat), default 8")
    a = p.parse_args(argv)
    row = a.hidden * 2
    if a.bytes <= 0 or a.bytes % row:
        p.error(f"--bytes {a.bytes}: not a whole number of tokens of {a.hidden} bf16 values "
                f"({row} bytes each)")
    if a.gemm_k < 0 or a.gemm_k > a.hidden:
        p.error(f"--gemm-k {a.gemm_k}: must be 0..--hidden ({a.hidden})")
    for name in ("ops", "replays", "rounds", "warmup"):
        if getattr(a, name) < 1:
            p.error(f"--{name}: must be at least 1")
    if a.prefill_bytes < 0 or a.prefill_bytes % 2:
        p.error(f"--prefill-bytes {a.prefill_bytes}: must be an even number >= 0")
    return a


def loaded_nccl():
    """The libnccl files this process mapped (after torch's first NCCL call), in map
    order, joined by " + ": a library preloaded with LD_PRELOAD (whose symbols win) beside
    the one torch links, as on the rig."""
    paths = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                path = line.split()[-1] if line.strip() else ""
                if ("libnccl" in os.path.basename(path) and path.startswith("/") and
                        path not in paths):
                    paths.append(path)
    except OSError:
        pass
    return " + ".join(paths) or None


def seen_env():
    keep = ("NCCL_", "NCCLTUNE_", "CUDA_DEVICE_MAX_CONNECTIONS", "TORCH_NCCL_")
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(keep)}


def summary(ms):
    ms = sorted(ms)
    q = lambda f: ms[min(len(ms) - 1, int(f * len(ms)))]
    return {"median": statistics.median(ms), "p10": q(0.10), "p90": q(0.90),
            "min": ms[0], "max": ms[-1], "samples": len(ms)}


def main(argv):
    a = parse_args(argv)
    import torch
    import torch.distributed as dist

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if not torch.cuda.is_available():
        print("verify_step.py: no CUDA device visible", file=sys.stderr)
        return 1
    # more local ranks than GPUs share them (the rig: two ranks on one GPU with NCCL 2.30
    # and NCCL_MULTI_RANK_GPU_ENABLE=1); one rank per GPU otherwise, as before
    local %= max(1, torch.cuda.device_count())
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    if "MASTER_ADDR" not in os.environ:   # run without torchrun: one rank
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29533", RANK="0",
                          WORLD_SIZE="1", LOCAL_RANK="0")
    dist.init_process_group("nccl", device_id=dev)
    tokens = a.bytes // (a.hidden * 2)
    bf16 = torch.bfloat16
    k = a.gemm_k
    per_w = max(1, k) * a.hidden * 2
    nweights = max(1, min(a.ops, int(a.weights_gib * (1 << 30)) // per_w))
    gen = torch.Generator(device=dev).manual_seed(1234 + rank)
    weights = [torch.randn(k, a.hidden, device=dev, dtype=bf16, generator=gen) * 0.02
               for _ in range(nweights)] if k else []
    x0 = torch.randn(tokens, max(k, 1), device=dev, dtype=bf16, generator=gen)
    outs = [torch.empty(tokens, a.hidden, device=dev, dtype=bf16) for _ in range(a.ops)]
    ars = [torch.ones(tokens, a.hidden, device=dev, dtype=bf16) for _ in range(a.ops)]

    def step():
        x = x0
        for i in range(a.ops):
            if k:
                torch.matmul(x, weights[i % nweights], out=outs[i])
            dist.all_reduce(outs[i])
            if k:
                x = outs[i][:, :k]

    def ar_only():
        for t in ars:
            dist.all_reduce(t)

    def gemm_only():
        x = x0
        for i in range(a.ops):
            torch.matmul(x, weights[i % nweights], out=outs[i])
            x = outs[i][:, :k]

    variants = {"step": step, "allreduce": ar_only}
    if k:
        variants["gemm"] = gemm_only
    graphs = {}
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for fn in variants.values():   # eager first: NCCL connects at first use
            for _ in range(3):
                fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    for name, fn in variants.items():
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        graphs[name] = g
    torch.cuda.synchronize()
    nccl_path = loaded_nccl()

    def timed(run, n):
        start = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        stop = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for i in range(n):
            start[i].record()
            run()
            stop[i].record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(start, stop)]

    for g in graphs.values():
        timed(g.replay, a.warmup)
    times = {name: [] for name in graphs}
    prefill = []
    big = None
    if a.prefill_bytes:
        big = torch.ones(a.prefill_bytes // 2, device=dev, dtype=bf16)
        timed(lambda: dist.all_reduce(big), 1)
    t0 = time.monotonic()
    order = list(graphs)
    for r in range(a.rounds):
        # every round in its own order, the same on every rank
        rot = order[r % len(order):] + order[:r % len(order)]
        for name in rot:
            times[name] += timed(graphs[name].replay, a.replays)
        if big is not None:
            prefill += timed(lambda: dist.all_reduce(big), 2)
    wall = time.monotonic() - t0

    # exact check of the all-reduce graph: inputs of ones sum to the world size
    for t in ars:
        t.fill_(1)
    graphs["allreduce"].replay()
    torch.cuda.synchronize()
    exact = all(bool((t == float(world)).all()) for t in ars)

    # the slowest rank's median is the step time, as a server waits for the slowest
    med = torch.tensor([statistics.median(times[n]) for n in order], device=dev,
                       dtype=torch.float64)
    dist.all_reduce(med, op=dist.ReduceOp.MAX)
    ok = torch.tensor([1 if exact else 0], device=dev)
    dist.all_reduce(ok, op=dist.ReduceOp.MIN)
    if rank == 0:
        doc = {
            "schema": SCHEMA,
            "ok": bool(ok.item()),
            "world_size": world,
            "torch": torch.__version__,
            "nccl_version": ".".join(str(v) for v in torch.cuda.nccl.version()),
            "nccl_path": nccl_path,
            "gpu": torch.cuda.get_device_name(dev),
            "workload": {"bytes": a.bytes, "ops": a.ops, "tokens": tokens, "hidden": a.hidden,
                         "gemm_k": k, "distinct_weights": nweights,
                         "prefill_bytes": a.prefill_bytes},
            "ms": {n: dict(summary(times[n]), slowest_rank_median=med[i].item())
                   for i, n in enumerate(order)},
            "prefill_ms": summary(prefill) if prefill else None,
            "exact": bool(ok.item()),
            "timed_s": wall,
            "env": seen_env(),
        }
        print(json.dumps(doc, sort_keys=True))
        sys.stdout.flush()
    # NCCL 2.30's communicator finalize waits until no CUDA graph that captured it is left
    # (it hung here with two ranks on one GPU): drop the graphs before the destroy
    g = None
    graphs.clear()
    torch.cuda.synchronize()
    gc.collect()
    dist.destroy_process_group()
    return 0 if ok.item() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
