#!/bin/sh
# test_report.sh - report.html for each fixture session: written atomically into the
# folder, self-contained (inline SVG, nothing fetched, no script), MODEL banner exactly
# when the result came from a model, hostile text escaped; `show` for each.
set -eu
TOOL=$1
DATA=$NCCLTUNE_SOURCE_ROOT/tests/workflows/data
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for s in measured model noconfig defaults-best; do
	cp -r "$DATA/$s" "$T/$s"
done
mkdir "$T/accepted"
cp "$DATA/hostile/accepted.json" "$T/accepted/results.json"

for s in measured model noconfig defaults-best accepted; do
	R=$T/$s/report.html
	"$TOOL" report "$T/$s" || fail "$s: status $?"
	[ -s "$R" ] || fail "$s: no report"
	[ "$(stat -c %a "$R")" = 644 ] || fail "$s: mode"
	ls "$T/$s" | grep -q '\.tmp\.' && fail "$s: temporary file left behind"
	head -c 15 "$R" | grep -q '^<!DOCTYPE html>' || fail "$s: not HTML"
	tail -c 8 "$R" | grep -q '</html>' || fail "$s: not complete"
	grep -q "<svg" "$R" || [ "$s" = accepted ] || fail "$s: no inline SVG"
	grep -qi 'https\?:' "$R" && fail "$s: a URL scheme in the page"
	grep -qi '<script\|<link\|<img\|<iframe\|@import\|url(\| src=\| href=' "$R" &&
		fail "$s: the page references something outside itself"
	grep -q "Content-Security-Policy\" content=\"default-src 'none'" "$R" || fail "$s: CSP"
	if [ "$s" = model ]; then
		grep -q 'class="banner"><b>MODEL</b>' "$R" || fail "model: no MODEL banner"
		grep -q 'pcie-gen5-8gpu' "$R" || fail "model: model name missing"
	else
		grep -q 'class="banner"' "$R" && fail "$s: MODEL banner on a measured result"
	fi
	"$TOOL" show "$T/$s" > "$T/$s.txt" || fail "$s: show status"
	grep -q '^  result ' "$T/$s.txt" || fail "$s: show has no result line"
	# results.json's noise (only the measured fixture has one) in the page and in show
	if [ "$s" = measured ]; then
		grep -q 'One run varies by about 2.1% (spread of the final repeats of 4 ' "$R" ||
			fail "measured: no noise line in the report"
		grep -q '^  noise      one run varies by about 2.1%' "$T/$s.txt" || fail "show: noise"
		# the pinned variable is exported (marked), and the page says so
		grep -q 'the exports set them too, marked pinned): .*NCCL_P2P_LEVEL' "$R" ||
			fail "measured: the report says nothing of the exported pin"
		grep -q 'not exported' "$R" && fail "measured: the report says pins are not exported"
	else
		grep -q 'One run varies' "$R" && fail "$s: a noise line without a noise figure"
	fi
done
# Content: the convergence and family charts, the top table, failures, the machine.
R=$T/measured/report.html
for want in 'aria-label="convergence"' 'aria-label="latency by family"' 'Top configurations' \
            'Failures and pruned regions' 'NCCL_ALGO=Tree&#58; failed at graph capture' \
            '00000000&#58;18&#58;00.0' 'class="l-sys">SYS' '8.56&#215;' 'NCCL_P2P_LEVEL=SYS' \
            '>LL / Ring<'; do
	grep -qF "$want" "$R" || fail "measured: missing $want"
done
# one dot per measured journal run: 48 runs, 11 failed (Tree) -> 37 dots, 11 crosses
dots=$(grep -o '<circle cx="[0-9.]*" cy="[0-9.]*" r="3.2"' "$R" | wc -l)
[ "$dots" = 37 ] || fail "measured: $dots dots, want 37"
crosses=$(grep -o '&#215;<title>run' "$R" | wc -l)
[ "$crosses" = 11 ] || fail "measured: $crosses crosses, want 11"
# show of a session that has not finished (no results.json): the best so far from the
# journal, the baseline, and the resume command
cp -r "$DATA/measured" "$T/unfinished" && rm "$T/unfinished/results.json"
"$TOOL" show "$T/unfinished" > "$T/unfinished.txt" || fail "unfinished: show status $?"
want=$(python3 - "$T/unfinished/journal.jsonl" <<'PYEOF'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])][1:]
ok = [r for r in runs if r.get("outcome") == "ok" and r["phase"] != "baseline"]
b = min(ok, key=lambda r: r["objective_us"])
us = b["objective_us"]
print("%s per step (run %d): " % ("%.1f us" % us if us < 1000 else "%.2f ms" % (us / 1000), b["run"])
      + " ".join("%s=%s" % kv for kv in b["env"].items()))
PYEOF
)
grep -qxF "  best       $want" "$T/unfinished.txt" || fail "unfinished: best so far, want $want: $(cat "$T/unfinished.txt")"
grep -q "^  baseline   .* per step (run 1, NCCL's defaults)" "$T/unfinished.txt" || fail "unfinished: baseline"
grep -q "^  when it was interrupted, resume it: .* run --resume $T/unfinished\$" "$T/unfinished.txt" ||
	fail "unfinished: no resume command"
# "How to apply": the install command of a recommended result, as it can be run (the
# folder as given), and nothing to install otherwise
box() { sed -n 's/.*<h2>How to apply<\/h2>\(.*\)/\1/p' "$1" | sed 's/<\/section>.*//'; }
box "$T/measured/report.html" | grep -qF "export --install $(echo "$T/measured" | sed 's/:/\&#58;/g')</code>" ||
	fail "measured: no install command in the how-to-apply box: $(box "$T/measured/report.html")"
for s in model noconfig defaults-best; do
	box "$T/$s/report.html" | grep -q 'nothing to install' || fail "$s: how-to-apply box"
	box "$T/$s/report.html" | grep -q -- '--install' && fail "$s: an install command"
done
grep -q 'No configuration worked\|none worked' "$T/noconfig/report.html" || fail "noconfig text"
grep -q "NCCL's defaults were the best" "$T/defaults-best/report.html" || fail "defaults text"
# hostile text arrives escaped, never as markup
R=$T/accepted/report.html
grep -q '<script>\|"l-[a-z]*"><b>' "$R" && fail "accepted: markup from the file in the page"
grep -qF 'class="l-sys">&lt;b&gt;' "$R" || fail "accepted: escaped topology cell"
grep -qF '&lt;script&gt;alert(1)&lt;/script&gt; &quot;GPU&quot; `id` $(id)' "$R" || fail "accepted: escaped name"
grep -qF '&lt;/td&gt;&lt;script&gt;x&lt;/script&gt;' "$R" || fail "accepted: escaped reason"
# the same report twice is the same bytes (nothing time- or machine-dependent added)
cp "$T/measured/report.html" "$T/first.html"
"$TOOL" report "$T/measured"
cmp -s "$T/first.html" "$T/measured/report.html" || fail "report not reproducible"
# a damaged journal: the report is still written and says why the runs are missing
cp -r "$DATA/measured" "$T/damaged"
sed -i '3s/.*/{broken/' "$T/damaged/journal.jsonl"
"$TOOL" report "$T/damaged" || fail "damaged journal: status $?"
grep -q 'The journal could not be read' "$T/damaged/report.html" || fail "damaged: no note"
"$TOOL" show "$T/damaged" | grep -q '^  journal    unreadable, runs left out: ' || fail "damaged: show"
"$TOOL" export shell "$T/damaged" > /dev/null || fail "damaged journal blocks export"
# a results.json is not a folder to write into: 2
rc=0
"$TOOL" report "$T/measured/results.json" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "report on a file: status $rc"
rc=0
"$TOOL" report "$T/no-such" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "report on nothing: status $rc"
# show strips control characters; the MODEL warning is on the source line
grep -qx '  source     MODEL pcie-gen5-8gpu - not a measurement' "$T/model.txt" || fail "show model"
if LC_ALL=C grep -q "$(printf '\033')" "$T/accepted.txt"; then fail "show: escape char"; fi
echo "report: ok"
