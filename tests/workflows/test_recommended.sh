#!/bin/sh
# test_recommended.sh - one meaning of "recommended" (issue 27 item 6): a measured result
# whose gain's 95% interval reaches 1.00x is installed only with --allow-unproven, and the
# refusal says why; show suggests no install for it; a shown-faster one installs as
# before. (The session's own verdict and --json keys: tests/session/test_inherit.sh.)
# Usage: test_recommended.sh NCCLTUNE
set -eu
NT=$1
DATA=$NCCLTUNE_SOURCE_ROOT/tests/workflows/data
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir "$T/proven" "$T/unproven"
cp "$DATA/measured/results.json" "$T/proven/"
python3 - "$DATA/measured/results.json" "$T/unproven/results.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["gain"]["ci95"] = [0.97, d["gain"]["ci95"][1]]
d["verdict"] = "not shown faster"
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
rc=0
"$NT" export --format nccl-conf --install="$T/u.conf" "$T/unproven" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 2 ] || fail "unproven install: exit $rc $(cat "$T/err")"
grep -q "not shown to be faster than NCCL's defaults (gain [0-9.]*x, 95% interval 0.97x" "$T/err" ||
	fail "unproven install: $(cat "$T/err")"
grep -q -- "--allow-unproven installs it anyway" "$T/err" || fail "unproven install: no flag named"
[ ! -e "$T/u.conf" ] || fail "unproven install wrote the file"
"$NT" export --format nccl-conf --install="$T/u.conf" --allow-unproven "$T/unproven" >"$T/out" 2>"$T/err" ||
	fail "--allow-unproven: $(cat "$T/err")"
grep -q "^NCCL_" "$T/u.conf" || fail "--allow-unproven: nothing installed"
rc=0
"$NT" export --format nccl-conf --allow-unproven "$T/unproven" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--allow-unproven without --install: exit $rc"
"$NT" show "$T/unproven" >"$T/show" || fail "show unproven"
grep -q "export --install" "$T/show" && ! grep -q "refuses it without" "$T/show" &&
	fail "show suggests installing an unproven result: $(cat "$T/show")"
grep -q "not shown to be faster than NCCL's defaults: nothing to" "$T/show" || fail "show: $(cat "$T/show")"
"$NT" export --format nccl-conf --install="$T/p.conf" "$T/proven" >"$T/out" 2>"$T/err" ||
	fail "proven install: $(cat "$T/err")"
"$NT" show "$T/proven" | grep -q "nccltune export --install" || fail "show proven: no install line"
echo ok
