#!/usr/bin/env bash
# bench/sweep.sh [--out FILE] - run the sweep measurement tools (issue 17) on this machine
# side by side and write one Markdown report with the commands, the machine and their
# output (default results/bench-sweep-<UTC date>.md):
#   1. sweep vs fresh process on the MODELS h200-nvlink-2gpu and nvlink-h200-8gpu
#      (bench/sweep_equivalence.py; MODEL numbers);
#   2. probe cost per inner choice with the MODEL probe (bench/sweep_cost.py);
#   3. tuner CPU per suggestion at sweep observation counts (bench-sweep-overhead;
#      MEASURED CPU of this machine).
# The GPU runs of the same tools are scripts/device-sweep-{equivalence,cost}.sh.
# Needs a build in build/ (meson setup build && meson compile -C build). A few minutes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=results/bench-sweep-$(date -u +%Y-%m-%d).md
case "${1:-}" in
--out) out=${2:?--out needs a file} ;;
-h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
"") ;;
*) echo "bench/sweep.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
MP=build/models/nccltune-model-probe
PLUGIN=$root/build/plugin/libnccl-tuner-nccltune.so
OV=build/bench/bench-sweep-overhead
for f in "$MP" "$PLUGIN" "$OV"; do
	[ -e "$f" ] || { echo "bench/sweep.sh: no $f (meson setup build && meson compile -C build)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# one section: a heading, the command as run, its output
section() {
	local title=$1; shift
	{
		printf '\n## %s\n\n```sh\n%s\n```\n\n```\n' "$title" "$*"
		"$@" 2>&1
		printf '```\n'
	} >>"$tmp/report.md"
}
{
	echo "# Sweep tools, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo
	echo "Made by \`bench/sweep.sh\` at $(git rev-parse --short HEAD 2>/dev/null || echo '?')."
	echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')."
	echo "Sections 1 and 2 are MODEL numbers (the model probe), not measurements; section 3"
	echo "is measured CPU time of this machine."
} >"$tmp/report.md"
for m in h200-nvlink-2gpu nvlink-h200-8gpu; do
	section "1. Sweep vs fresh process, MODEL $m" python3 bench/sweep_equivalence.py \
		--probe "$MP" --model "$m" --plugin "$PLUGIN" --repeats 3 --json "$tmp/eq-$m.json"
done
section "2. Probe cost per inner choice, MODEL h200-nvlink-2gpu" python3 bench/sweep_cost.py \
	--probe "$MP" --model h200-nvlink-2gpu --plugin "$PLUGIN" --choices 96 --repeats 5 \
	--json "$tmp/cost.json"
section "3. Tuner CPU per suggestion at sweep observation counts (measured)" "$OV" --reps 5
mkdir -p "$(dirname "$out")"
cp "$tmp/report.md" "$out"
echo "bench/sweep.sh: wrote $out"
