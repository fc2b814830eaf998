#!/usr/bin/env python3
"""test_sweep_regret.py - bench/sweep_regret.py --quick on the model probe: both arms ran
every (model, seed) at the same budget, the sweep arm's sessions swept (inner results,
processes within the budget) and the plain arm's did not, and every regret is >= 0
against a reference no worse than NCCL's defaults. Usage: test_sweep_regret.py BUILD."""
import json
import os
import subprocess
import sys
import tempfile

import benchtool

build = sys.argv[1]
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "r.json")
    p = subprocess.run([sys.executable, os.path.join(benchtool.SRC, "bench", "sweep_regret.py"),
                        "--build", build, "--quick", "--json", out],
                       capture_output=True, text=True)
    benchtool.check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr[-600:]))
    doc = json.load(open(out)) if os.path.exists(out) else {"rows": [], "summary": []}
rows, summary = doc["rows"], doc["summary"]
# the space both arms searched is the tuner's own per-size default, read from a session
benchtool.check("rule.43008.algo" in (doc.get("space") or {}).get("params", {}),
                "the sessions' space is not the per-size default: %r" % doc.get("space"))
benchtool.check(len(rows) == 2 * 2 * 3, "%d sessions, expected 12" % len(rows))
for r in rows:
    benchtool.check(r["runs"] <= r["budget"], "%r: more processes than the budget" % r)
    if r["arm"] == "sweep":
        benchtool.check(r["inner"] > 2 * r["runs"], "%r: a sweep session without inner results" % r)
    else:
        benchtool.check(r["inner"] == 0, "%r: the plain arm swept" % r)
for x in summary:
    benchtool.check(0 <= x["median"] <= x["worst"], "%r: regrets out of order" % x)
    benchtool.check(x["reference_us"] <= x["defaults_us"], "%r: reference above defaults" % x)
benchtool.check(len(summary) == 4, "%d summary rows, expected 4" % len(summary))
benchtool.finish("bench-sweep-regret")
