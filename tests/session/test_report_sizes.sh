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
        ratio = "%.2f&#215;" % w["ratio"]
        ci = "%.2f&#215; &#8211; %.2f&#215;" % tuple(w["ratio_ci95"]) if w["ratio_ci95"] else ""
        if (int(row[0]), row[1], row[4], row[5]) != (w["bytes"], w["role"], ratio, ci):
            fail("row %r against %r" % (row, w))
        # show prints the same row: bytes, role, the ratio and its interval
        m = re.search(r"^\s+%d\s+%s\s+.*\s%.2fx( \[%s\])?$" % (
            w["bytes"], w["role"], w["ratio"],
            " .. ".join("%.2f" % x for x in w["ratio_ci95"])), show, re.M)
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

lib_finish
