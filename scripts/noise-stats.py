#!/usr/bin/env python3
"""noise-stats.py NOISE.JSONL - what scripts/device-noise.sh measured: per variant and
configuration, the time per step (sum over the report's results of median us per op x
ops), how much one run varies (standard deviation of log time, in %), the paired gain of
the second configuration over the first with a 95% interval (t, n-1 degrees of freedom),
and the lag-1 autocorrelation of each series (drift between rounds would show as a
clearly positive value). Exit 1 when a run failed or a sum was wrong."""
import json
import math
import statistics as st
import sys

T975 = {5: 2.571, 10: 2.228, 15: 2.131, 19: 2.093, 20: 2.086, 30: 2.042}


def t975(dof):
    return T975.get(dof) or T975[min(T975, key=lambda k: abs(k - dof))]


def step_us(rep):
    return sum(r["us"]["median"] * r["ops"] for r in rep["results"])


def main():
    rows = [json.loads(line) for line in open(sys.argv[1])]
    bad = 0
    series = {}
    for r in rows:
        rep = r["report"]
        if not rep or not rep.get("ok") or not all(x["correct"] for x in rep["results"]):
            bad += 1
            print("FAILED: %s %s round %d: %s" % (r["variant"], r["config"], r["round"],
                                                  rep and rep.get("error")))
            continue
        series.setdefault(r["variant"], {}).setdefault(r["config"], {})[r["round"]] = step_us(rep)
    print("| variant | configuration | runs | mean us/step | one run varies (sd of log) "
          "| lag-1 autocorrelation |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for v, confs in series.items():
        for c, xs in confs.items():
            logs = [math.log(xs[k]) for k in sorted(xs)]
            mu = st.mean(logs)
            ac = (sum((logs[i] - mu) * (logs[i + 1] - mu) for i in range(len(logs) - 1)) /
                  sum((x - mu) ** 2 for x in logs))
            print("| %s | %s | %d | %.1f | %.2f%% | %.2f |" % (
                v, c, len(logs), st.mean(xs.values()), 100 * st.stdev(logs), ac))
    print()
    print("| variant | paired gain of the 2nd over the 1st [95%] | sd of the log ratio | rounds |")
    print("| --- | --- | ---: | ---: |")
    for v, confs in series.items():
        names = list(confs)
        if len(names) < 2:
            continue
        a, b = confs[names[0]], confs[names[1]]
        ks = sorted(set(a) & set(b))
        lr = [math.log(a[k] / b[k]) for k in ks]
        m, s = st.mean(lr), st.stdev(lr)
        h = t975(len(lr) - 1) * s / math.sqrt(len(lr))
        print("| %s | %.3fx [%.3f, %.3f] | %.2f%% | %d |" % (
            v, math.exp(m), math.exp(m - h), math.exp(m + h), 100 * s, len(lr)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
