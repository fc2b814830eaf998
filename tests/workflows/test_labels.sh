#!/bin/sh
# test_labels.sh - what a whole session's exports, show and summary say about where the
# numbers come from and about pinned variables: a model session (nccltune-model-probe)
# and a measured one (the fake probe), each with NCCL_NTHREADS pinned from the
# environment. Every export carries the source; env.json is {"schema": "nccltune-env/1",
# "source", "env", "pinned"}; the pinned variable is in every export, marked; a model's
# exports, show and summary say to tune the real machine instead of how to install.
set -eu
NT=$1
FAKE=$2
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for kind in model measured; do
	s=$T/$kind
	if [ $kind = model ]; then
		probe="--model pcie-gen5-8gpu"
	else
		probe="--probe $FAKE"
	fi
	NCCL_NTHREADS=256 "$NT" run $probe --budget 20 --seed 3 --out "$s" > "$T/$kind.out" 2>&1 ||
		fail "$kind session: $(tail -5 "$T/$kind.out")"
	python3 - "$s" "$kind" <<'PYEOF' || fail "$kind: env.json"
import json, sys
s, kind = sys.argv[1], sys.argv[2]
doc = json.load(open(s + "/exports/env.json"))
assert set(doc) == {"schema", "source", "env", "pinned"}, doc
assert doc["schema"] == "nccltune-env/1" and doc["source"] == kind, doc
assert doc["pinned"] == {"NCCL_NTHREADS": "256"}, doc
assert "NCCL_NTHREADS" not in doc["env"], doc
PYEOF
	for f in sitecustomize.py env.sh nccl.env nccl.conf tuner.csv; do
		grep -q "^# source: $kind" "$s/exports/$f" || fail "$kind: $f does not say its source"
		[ $f = tuner.csv ] && continue   # rows only when algorithm and protocol are one word
		grep -q "pinned: set when the session ran" "$s/exports/$f" || fail "$kind: $f: no pinned mark"
	done
	grep -q '^export NCCL_NTHREADS=.256.$' "$s/exports/env.sh" || fail "$kind: env.sh misses the pin"
	grep -qx 'NCCL_NTHREADS=256' "$s/exports/nccl.env" || fail "$kind: nccl.env misses the pin"
	"$NT" show "$s" > "$T/$kind.show" || fail "$kind: show"
	grep -q "pinned (set when the session ran; the exports set them too, marked pinned): NCCL_NTHREADS=256" \
		"$T/$kind.show" || fail "$kind: show says nothing of the pin"
	grep -q "^pinned:   NCCL_NTHREADS=256 (set when the session ran" "$T/$kind.out" ||
		fail "$kind: the summary says nothing of the pin"
	if [ $kind = model ]; then
		grep -q "A machine model's numbers are no reason to set anything in production" \
			"$s/exports/sitecustomize.py" || fail "model: the export does not say to tune the real machine"
		grep -q "^  a MODEL result, not a measurement: nothing to install" "$T/$kind.show" ||
			fail "model: show"
		grep -q "^next:     these are MODEL figures" "$T/$kind.out" || fail "model: summary"
		grep -q -- "--install" "$T/$kind.show" && fail "model: show tells how to install"
		grep -q -- "--install" "$T/$kind.out" && fail "model: the summary tells how to install"
		# install refuses a model's result unless told otherwise
		rc=0
		"$NT" export --format nccl-conf --install="$T/model.conf" "$s" > /dev/null 2> "$T/err" || rc=$?
		[ "$rc" = 2 ] || fail "model: export --install: exit $rc"
		grep -q "a result of the machine model pcie-gen5-8gpu, not a measurement: .* not installed (--allow-model" \
			"$T/err" || fail "model: export --install said $(cat "$T/err")"
		[ ! -e "$T/model.conf" ] || fail "model: export --install wrote a file"
		"$NT" export --format nccl-conf --install="$T/model.conf" --allow-model --allow-unproven "$s" > /dev/null ||
			fail "model: --allow-model"
		grep -q "^# source: model" "$T/model.conf" || fail "model: --allow-model: no label"
		# the stand-in model is for the demo command only: a warm start re-tunes a real
		# machine and never falls back to the model when no GPU is visible
		if [ -e /dev/nvidia0 ] || nvidia-smi -L >/dev/null 2>&1; then
			echo "note: a GPU is visible: the no-fallback case does not apply here"
		else
			rc=0
			"$NT" run --warm-start "$s" --budget 6 --out "$T/warm" > /dev/null 2> "$T/err" || rc=$?
			[ "$rc" = 1 ] || fail "warm start without a GPU: exit $rc"
			grep -q "no GPU visible, and --warm-start $s re-tunes a real machine" "$T/err" ||
				fail "warm start without a GPU: $(cat "$T/err")"
			[ ! -e "$T/warm/journal.jsonl" ] || fail "warm start without a GPU: a journal"
		fi
	else
		# nccltune as it can be run: the build tree's path, which is not in PATH
		grep -qxF "  $NT export --install $s" "$T/$kind.show" || fail "measured: show: no install hint"
		grep -q "A machine model" "$s/exports/sitecustomize.py" && fail "measured: a model's note"
	fi
done
echo "labels: ok"
