#!/bin/sh
# test_report_render.sh - render report.html of the measured and the model fixture with
# headless Chromium and check a real picture comes out. Exits 77 (skipped) without
# Chromium, unless NCCLTUNE_REQUIRE_CHROMIUM=1 (CI, which installs it: .ci/run). The screenshots stay in the build folder for a human to look at:
#   BUILD/tests/workflows/report-measured.png, report-model.png
set -eu
TOOL=$1
DATA=$NCCLTUNE_SOURCE_ROOT/tests/workflows/data
CHROME=
for c in chromium chromium-browser google-chrome; do
	if command -v "$c" >/dev/null 2>&1; then CHROME=$c; break; fi
done
if [ -z "$CHROME" ]; then
	# CI installs it (.ci/run): there a missing Chromium is a failure, not a skip
	[ "${NCCLTUNE_REQUIRE_CHROMIUM:-}" = 1 ] &&
		{ echo "FAIL: chromium not found, and NCCLTUNE_REQUIRE_CHROMIUM=1" >&2; exit 1; }
	echo "chromium not found: skipped"; exit 77
fi
OUT=$NCCLTUNE_BUILD_ROOT/tests/workflows
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
for s in measured model; do
	cp -r "$DATA/$s" "$T/$s"
	"$TOOL" report "$T/$s" || fail "$s: report"
	rm -f "$OUT/report-$s.png"
	# --no-sandbox: CI runs as root in a container; the page has no script anyway.
	timeout 50 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --disable-extensions --user-data-dir="$T/profile" \
		--window-size=1000,3400 --screenshot="$OUT/report-$s.png" \
		"file://$T/$s/report.html" > "$T/log" 2>&1 || { cat "$T/log"; fail "$s: chromium"; }
	[ -s "$OUT/report-$s.png" ] || fail "$s: no screenshot"
	size=$(stat -c %s "$OUT/report-$s.png")
	[ "$size" -gt 40000 ] || fail "$s: screenshot only $size bytes (blank page?)"
	head -c 8 "$OUT/report-$s.png" | od -An -c | grep -q 'P   N   G' || fail "$s: not a PNG"
	echo "screenshot: $OUT/report-$s.png ($size bytes)"
done
