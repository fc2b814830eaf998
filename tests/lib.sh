# tests/lib.sh - what the bash tests share, sourced after `set -u`:
#   lib_init NAME           a scratch folder $tmp (/tmp/nccltune-NAME-XXXXXX), removed
#                           on exit; the failure count at 0
#   fail WHY...             say "FAIL: WHY" on stderr, count it, carry on
#   lib_need_model_probe    $probe, the built model probe, or exit 77 (skipped)
#   lib_unset_nccl          unset the caller's own NCCL_* variables (they would be pinned)
#   lib_json FILE EXPR      print a Python expression of the JSON document d in FILE
#   lib_finish              "N failure(s)" and exit 1, or "ok" and exit 0
# Usage: . "$(dirname "$0")/../lib.sh"; lib_init NAME

lib_init() {
	tmp=$(mktemp -d "/tmp/nccltune-$1-XXXXXX") || { echo "mktemp failed" >&2; exit 2; }
	trap 'rm -rf "$tmp"' EXIT
	failures=0
}

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

lib_need_model_probe() {
	probe="${NCCLTUNE_BUILD_ROOT:-.}/models/nccltune-model-probe"
	[ -x "$probe" ] || { echo "skipped: $probe is not built"; exit 77; }
}

lib_unset_nccl() {
	local v
	for v in $(env | sed -n 's/^\(NCCL_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
}

lib_json() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

lib_finish() {
	[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
	echo "ok"
}
