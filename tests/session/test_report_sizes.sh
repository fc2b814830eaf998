#!/bin/bash
# test_report_sizes.sh - report.html's per-size parts on a per-size session of the model
# probe (guards from the default ladder): the per_size table has one row per tuned and
# guard size with results.json's figures, as `show` prints them; the ablation of the
# best's variables is listed; every run shows its latency next to what NCCL ran, as the
# journal records it. Hostile strings in results.json (a role, an ablation's why) and in
# the journal (an algorithm name) are escaped or left out, never rendered as markup.
# Usage: test_report_sizes.sh NCCLTUNE SOURCE_ROOT. Exit 77 when the model probe is not built.
set -u
NT=$1
SRC=$2
. "$(dirname "$0")/../lib.sh"
lib_need_model_probe
lib_init report-sizes

out=$("$NT" run --model pcie-gen5-8gpu --space "$SRC/examples/space-pcie-per-size.json" \
	--budget 40 --seed 1 --out "$tmp/s" 2>&1)
[ $? -eq 0 ] || fail "session: $out"
"$NT" show "$tmp/s" > "$tmp/show.txt" 2>&1 || fail "show: $(cat "$tmp/show.txt")"

python3 - "$tmp/s" "$tmp/show.txt" <<'PYEOF' || failures=$((failures + 1))
import html, json, re, sys
d, show = sys.argv[1], open(sys.argv[2]).read()
page = open(d + "/report.html").read()
res = json.load(open(d + "/results.json"))
bad = 0
def fail(m):
    global bad
    print("FAIL:", m, file=sys.stderr)
    bad += 1
runs_all = [json.loads(l) for l in open(d + "/journal.jsonl")][1:]
def us(v):
    return "%.1f us" % v if v < 1000 else "%.2f ms" % (v / 1000)
sec = page.split("<h2>Per size</h2>", 1)
if len(sec) != 2:
    fail("no per-size section")
else:
    rows = re.findall(r'<tr><td class="num">(\d+)</td><td>(tuned|guard)</td>'
                      r'<td class="num">([^<]*)</td><td class="num">([^<]*)</td>'
                      r'<td class="num">([^<]*)</td><td class="num">([^<]*)</td></tr>',
                      sec[1].split("</section>")[0])
    want = res.get("per_size", [])
    if len(rows) != len(want) or not want:
        fail("per-size rows %r, results.json %r" % (rows, want))
    for row, w in zip(rows, want):
        # results.json holds best / baseline; the page and show state the speed-up, as
        # the headline does (baseline / best), the interval's ends swapped
        ratio = "%.2f&#215;" % (1 / w["ratio"])
        lo, hi = (1 / w["ratio_ci95"][1], 1 / w["ratio_ci95"][0]) if w["ratio_ci95"] else (0, 0)
        ci = "%.2f&#215; &#8211; %.2f&#215;" % (lo, hi) if w["ratio_ci95"] else ""
        if (int(row[0]), row[1], row[4], row[5]) != (w["bytes"], w["role"], ratio, ci):
            fail("row %r against %r" % (row, w))
        m = re.search(r"^\s+%d\s+%s\s+.*\s%.2fx( \[%.2fx \.\. %.2fx\])?$" % (
            w["bytes"], w["role"], 1 / w["ratio"], lo, hi), show, re.M)
        if not m:
            fail("show lacks the row of %d B" % w["bytes"])
    # the verdict in words, as show and the report say it (result/text.c)
    words = {"ok": "ok (each shown within 2% of NCCL's defaults)",
             "slower": "slower (shown more than 2% slower than NCCL's defaults)",
             "not_shown_safe": "not shown safe (the rounds could not show them within 2% "
                               "of NCCL's defaults)",
             "measured_once": "not judged (measured once)", "unmeasured": "unmeasured"}
    said = words.get(res["guards"]["verdict"], "?")
    esc = html.escape(said, quote=True).replace("&#x27;", "&#39;").replace(":", "&#58;")
    if "guards: <b>%s</b>" % esc not in sec[1] or "guards: %s" % said not in show:
        fail("the guards' verdict %r is not in the section or show" % res["guards"]["verdict"])
# the headline states baseline / best too: a faster tuned size reads above 1.00x in both
g = res["gain"]["ratio"] if isinstance(res.get("gain"), dict) else None
tuned = [w for w in res.get("per_size", []) if w["role"] == "tuned" and w["ratio"]]
if g and tuned and (g > 1) != (1 / tuned[0]["ratio"] > 1):
    fail("the headline %.2fx and the tuned size's speed-up disagree" % g)
# the per-size rules that are deployed, as show prints them
rules = res["best"].get("rules") or []
got = re.findall(r'<tr class="rule"><td class="num">(\d+)</td><td>([^<]*)</td><td>([^<]*)'
                 r'</td><td class="num">([^<]*)</td><td>([^<]*?)(?: \(NCCL|</td>)', page)
dash = "&#8211;"
want_rules = [(str(r["bytes"]), r["algo"] or dash, r["proto"] or dash,
               str(r["ctas"]) if r["ctas"] else dash,
               "%s/%s on %d CTA(s)" % (r["nccl"]["algo"], r["nccl"]["proto"], r["nccl"]["ctas"])
               if r.get("nccl") else dash) for r in rules]
if not rules or got != want_rules:
    fail("per-size rules %r, results.json %r" % (got, rules))
for r in rules:
    ran = r.get("nccl")
    ran = "%s/%s on %d CTA\\(s\\).*" % (ran["algo"], ran["proto"], ran["ctas"]) if ran else "-"
    if not re.search(r"^\s+%d\s+%s\s+%s\s+%s\s+%s$" % (r["bytes"], r["algo"] or "-",
                     r["proto"] or "-", r["ctas"] or "-", ran), show, re.M):
        fail("show lacks the rule of %d B" % r["bytes"])
# "How to apply": a model's result installs nothing and says how to get real figures
box = page.split("<h2>How to apply</h2>", 1)
if len(box) != 2 or "nothing to install" not in box[1].split("</section>")[0]:
    fail("no how-to-apply box, or it offers a model's result")
elif "--install" in box[1].split("</section>")[0]:
    fail("the how-to-apply box of a model's result has an install command")
# one protocol/algorithm family (the rules choose per size): no strip of one row
if "Latency by protocol and algorithm" in page or "by protocol / algorithm" in show:
    fail("a by-protocol/algorithm strip of a single family")
# failures (issue 28 item 5): each row names its per-size choice and the first line of
# its error; rows alike are one row with a count; show and the page print both
fl = res.get("failures", [])
keys = [(json.dumps(f["env"], sort_keys=True), f["stage"], f.get("choice"), f.get("error"))
        for f in fl]
if not fl or len(set(keys)) != len(keys):
    fail("failure rows repeat (or none): %r" % keys)
failed = [r for r in runs_all if r["outcome"] != "ok"]
if sum(f["count"] for f in fl) != len(failed):
    fail("failure counts %d, failed runs %d" % (sum(f["count"] for f in fl), len(failed)))
for f in fl:
    if not f.get("choice") or not f["choice"].startswith("rule.") or not f.get("error") \
            or "\n" in f["error"]:
        fail("a failure row without its per-size choice or error: %r" % f)
        continue
    if not re.search(r"^\s+%d\s+%s\s+.*\[%s\]$" % (f["count"], f["stage"],
                     re.escape(f["choice"])), show, re.M) or \
            ("error: " + f["error"]) not in show:
        fail("show lacks the failure row %r" % f)
    if html.escape(f["error"], quote=True).replace("&#x27;", "&#39;").replace(":", "&#58;") \
            not in page:
        fail("the page lacks the failure's error %r" % f["error"])
# the ablation's runs: their own marker and legend entry
ab_runs = [a["run"] for a in res.get("ablation", []) if a.get("run")]
marks = re.findall(r'<path class="ablation" [^>]*><title>run (\d+) \(ablation\)', page)
if not ab_runs or sorted(set(int(m) for m in marks)) != sorted(set(ab_runs)):
    fail("ablation markers %r, ablation runs %r" % (marks, ab_runs))
if "ablation (the best less one variable)" not in page:
    fail("no legend entry for the ablation's runs")
    if "guards: <b>%s</b>" % res["guards"]["verdict"] not in sec[1]:
        fail("the guards' verdict is not in the section")
    for a in res.get("ablation", []):
        if html.escape(a["why"], quote=True).replace("&#x27;", "&#39;").replace(":", "&#58;") \
                not in sec[1]:
            fail("ablation %s not listed" % a["var"])
# every run: its latency and what NCCL ran, as the journal says
runs = [json.loads(l) for l in open(d + "/journal.jsonl")][1:]
body = page.split("<h2>Runs and what NCCL ran</h2>", 1)
if len(body) != 2:
    fail("no runs section")
else:
    trs = re.findall(r'<tr><td class="num">(\d+)</td><td>([a-z]+)</td><td>([a-z_]+)</td>'
                     r'<td class="num">([^<]*)</td><td>(.*?)</td></tr>', body[1])
    if len(trs) != len(runs):
        fail("%d run rows, %d runs" % (len(trs), len(runs)))
    for tr, r in zip(trs, runs):
        if int(tr[0]) != r["run"] or tr[1] != r["phase"] or tr[2] != r["outcome"]:
            fail("run row %r" % (tr,))
        if r["outcome"] != "ok":
            continue
        want = "; ".join("%d B %s/%s %d CTA%s" % (x["bytes"], x["nccl"]["algo"],
                         x["nccl"]["proto"], x["nccl"]["ctas"], "" if x["nccl"]["ctas"] == 1
                         else "s") for x in r["report"]["results"])
        if tr[4] != want:
            fail("run %d: %r, want %r" % (r["run"], tr[4], want))
sys.exit(1 if bad else 0)
PYEOF

# a role or an ablation's kind outside the format's words is refused by the loader,
# naming the key (tuner/result/final_read.c): nothing of it reaches a page
for edit in 'res["per_size"][0]["role"] = "<script>alert(1)</script>"' \
            'res.setdefault("ablation", []).append({"var": "NCCL_X", "value": "1", "kind": "<i>k</i>", "dropped": True, "why": "x"})'; do
	rm -rf "$tmp/bad" && cp -r "$tmp/s" "$tmp/bad"
	python3 -c "import json, sys; res = json.load(open(sys.argv[1])); $edit; json.dump(res, open(sys.argv[1], 'w'))" "$tmp/bad/results.json"
	out=$("$NT" report "$tmp/bad" 2>&1) && fail "report accepted a hostile word: $edit"
	case "$out" in *"per_size[0].role: "*|*"].kind: expected"*) ;;
		*) fail "the refusal names no key: $out" ;; esac
	[ -e "$tmp/bad/report.html" ] && grep -qF '<i>k' "$tmp/bad/report.html" &&
		fail "a refused file was rendered"
done
# hostile strings in free text: an ablation's variable, value and why in results.json,
# an algorithm in the journal; the page must carry none of them as markup
cp -r "$tmp/s" "$tmp/h"
python3 - "$tmp/h" <<'PYEOF'
import json, sys
d = sys.argv[1]
res = json.load(open(d + "/results.json"))
res.setdefault("ablation", []).append({"var": "NCCL_X<b>", "value": "\"><img src=x>",
    "kind": "process", "dropped": True, "why": "<svg onload=alert(2)> javascript:x"})
json.dump(res, open(d + "/results.json", "w"))
lines = open(d + "/journal.jsonl").read().splitlines()
for i, l in enumerate(lines):
    r = json.loads(l)
    if r.get("type") == "run" and r.get("outcome") == "ok":
        r["report"]["results"][0]["nccl"]["algo"] = "<b>Ring</b>"
        lines[i] = json.dumps(r)
        break
open(d + "/journal.jsonl", "w").write("\n".join(lines) + "\n")
PYEOF
"$NT" report "$tmp/h" > "$tmp/h.out" 2>&1 || fail "report of the hostile copy: $(cat "$tmp/h.out")"
for needle in '<img' '<svg onload' '<b>Ring' 'NCCL_X<b>' 'javascript:'; do
	grep -qF "$needle" "$tmp/h/report.html" && fail "hostile text rendered: $needle"
done
grep -qF '&lt;svg onload=alert(2)&gt; javascript&#58;x' "$tmp/h/report.html" ||
	fail "the hostile why is not shown escaped"
# the run with the hostile algorithm shows no decision for that size (only NCCL's words pass)
python3 - "$tmp/h" <<'PYEOF' || fail "the hostile algorithm's size is shown"
import json, re, sys
d = sys.argv[1]
runs = [json.loads(l) for l in open(d + "/journal.jsonl")][1:]
r = next(r for r in runs if r["outcome"] == "ok")
page = open(d + "/report.html").read().split("<h2>Runs and what NCCL ran</h2>", 1)[1]
row = re.search(r'<tr><td class="num">%d</td>.*?</tr>' % r["run"], page).group(0)
first = r["report"]["results"][0]["bytes"]
sys.exit(1 if re.search(r"<td>(\d+ B [^;]*; )*%d B " % first, row) else 0)
PYEOF

# identical failures are one row with a count (a crashing probe: each crash is retried
# alike), in results.json and in show
FAKE=$NCCLTUNE_BUILD_ROOT/tests/session/fakeprobe
FAKEPROBE_MODE=crash "$NT" run --probe "$FAKE" --budget 6 --seed 2 --out "$tmp/c" > "$tmp/c.out" 2>&1
"$NT" show "$tmp/c" > "$tmp/c.show" 2>&1 || fail "show of the crashing session: $(cat "$tmp/c.show")"
python3 - "$tmp/c" "$tmp/c.show" <<'PYEOF' || fail "crashes alike are not grouped"
import json, re, sys
res = json.load(open(sys.argv[1] + "/results.json"))
show = open(sys.argv[2]).read()
rows = [f for f in res["failures"] if f["count"] >= 2]
runs = [json.loads(l) for l in open(sys.argv[1] + "/journal.jsonl")][1:]
assert rows and sum(f["count"] for f in res["failures"]) == len(runs), res["failures"]
assert all(f["error"] == "killed by signal 11 (Segmentation fault)" for f in res["failures"])
assert re.search(r"^\s+%d\s+crash\s+\(NCCL defaults\)$" % rows[0]["count"], show, re.M), show
PYEOF

lib_finish
