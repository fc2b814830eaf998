#!/usr/bin/env python3
"""fit.py - fit a model file's constants to the figures it claims, and refresh the numbers
the file records about itself.

Usage:
  fit.py MODEL.json --explore BUILD/models/nccltune-model-explore
         [--param PATH=LO:HI ...] [--iterations N] [--write]

--param names a constant by its key path (e.g. costs.cta_bw_GBps.shm.LL) and its bounds.
The objective is the sum over the calibration figures that give "us" of
(log(model/target) / tolerance)^2: a relative error, weighted by the tolerance the file
states for that figure. The search is Nelder-Mead on the log of each parameter (pure
Python, no dependencies); each evaluation runs the explore tool on a temporary copy.

Without --param nothing is fitted; the recorded numbers are refreshed. --write then
rewrites the file with: the fitted values, every figure's "model_us", "fit.max_rel_error"
and "fit.parameters", and the "landscape" block (default, best, gain, best_env; its
"explanation" and "tolerance" are kept). Without --write it prints what it would change.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile


def get_path(doc, path):
    node = doc
    for key in path.split("."):
        node = node[key]
    return node


def set_path(doc, path, value):
    keys = path.split(".")
    node = doc
    for key in keys[:-1]:
        node = node[key]
    if keys[-1] not in node:
        raise KeyError(path)
    node[keys[-1]] = value


def dumps(value, indent=0):
    """JSON with small objects and arrays kept on one line, like the hand-written files."""
    flat = json.dumps(value, ensure_ascii=False)
    if len(flat) + indent <= 100 or not isinstance(value, (dict, list)):
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = ['%s%s: %s' % (pad, json.dumps(k, ensure_ascii=False), dumps(v, indent + 2))
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + dumps(v, indent + 2) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def explore(tool, doc, landscape):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(json.dumps(doc))
        path = f.name
    try:
        args = [tool, path, "--json"]
        if not landscape:
            args.append("--calibration")
        if landscape and "landscape" in doc:
            args += ["--bytes", str(doc["landscape"]["bytes"]), "--dtype",
                     doc["landscape"]["dtype"]]
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    return json.loads(out)


def objective(tool, doc):
    res = explore(tool, doc, False)["calibration"]
    total = 0.0
    for fig, row in zip(doc["calibration"], res):
        if "us" not in fig:
            continue
        if not row.get("ok"):
            return 1e12
        total += (math.log(row["us"] / fig["us"]) / fig["tolerance"]) ** 2
    return total


def nelder_mead(f, x0, iterations):
    n = len(x0)
    simplex = [list(x0)]
    for i in range(n):
        x = list(x0)
        x[i] += 0.3
        simplex.append(x)
    values = [f(x) for x in simplex]
    for _ in range(iterations):
        order = sorted(range(n + 1), key=lambda k: values[k])
        simplex = [simplex[k] for k in order]
        values = [values[k] for k in order]
        centroid = [sum(x[i] for x in simplex[:-1]) / n for i in range(n)]
        worst = simplex[-1]
        refl = [c + (c - w) for c, w in zip(centroid, worst)]
        fr = f(refl)
        if fr < values[0]:
            exp = [c + 2 * (c - w) for c, w in zip(centroid, worst)]
            fe = f(exp)
            simplex[-1], values[-1] = (exp, fe) if fe < fr else (refl, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = refl, fr
        else:
            con = [c + 0.5 * (w - c) for c, w in zip(centroid, worst)]
            fc = f(con)
            if fc < values[-1]:
                simplex[-1], values[-1] = con, fc
            else:
                best = simplex[0]
                simplex = [best] + [[b + 0.5 * (x - b) for b, x in zip(best, s)]
                                    for s in simplex[1:]]
                values = [values[0]] + [f(x) for x in simplex[1:]]
        if max(values) - min(values) < 1e-10:
            break
    k = min(range(n + 1), key=lambda i: values[i])
    return simplex[k], values[k]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--explore", required=True)
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()

    with open(a.model) as f:
        doc = json.load(f)
    params = []
    for spec in a.param:
        path, bounds = spec.split("=")
        lo, hi = (float(v) for v in bounds.split(":"))
        get_path(doc, path)
        params.append((path, lo, hi))

    if params:
        def apply(x):
            for (path, lo, hi), v in zip(params, x):
                set_path(doc, path, round(min(hi, max(lo, math.exp(v))), 4))

        def f(x):
            apply(x)
            return objective(a.explore, doc)

        x0 = [math.log(get_path(doc, p)) for p, _, _ in params]
        x, value = nelder_mead(f, x0, a.iterations)
        apply(x)
        for path, _, _ in params:
            print("fitted %s = %g" % (path, get_path(doc, path)))
        print("objective %.6g" % value)

    result = explore(a.explore, doc, True)
    worst = 0.0
    for fig, row in zip(doc["calibration"], result["calibration"]):
        if "us" in fig and row.get("ok"):
            fig["model_us"] = round(row["us"], 2)
            rel = row["us"] / fig["us"] - 1
            worst = max(worst, abs(rel))
            print("%-70.70s target %8.1f model %8.2f (%+.1f%%)" % (fig["figure"], fig["us"],
                                                                  row["us"], 100 * rel))
        elif "us" in fig:
            print("%-70.70s FAILS at %s" % (fig["figure"], row.get("stage")))
    doc["fit"]["max_rel_error"] = round(worst, 4)
    if params:
        doc["fit"]["parameters"] = [p for p, _, _ in params]
    land = result["landscape"]
    if "landscape" in doc:
        L = doc["landscape"]
        L["default_us"] = round(land["default_us"], 2)
        L["best_us"] = round(land["best_us"], 2)
        L["gain"] = round(land["gain"], 3)
        L["best_env"] = land["best_env"]
    print("landscape: default %.2f us, best %.2f us (%.2fx): %s" % (
        land["default_us"], land["best_us"], land["gain"], land["best_env"]))
    if a.write:
        tmp = a.model + ".tmp"
        with open(tmp, "w") as f:
            f.write(dumps(doc) + "\n")
        os.replace(tmp, a.model)
        print("wrote %s" % a.model)
    return 0


if __name__ == "__main__":
    sys.exit(main())
