#!/bin/bash
# device-nccl-conf.sh - on the GPU machine: does the real NCCL read the nccl-conf export
# the way nccltune's install assumes? One command, writing into $OUT.
#
#   1. nccltune export --format nccl-conf of the measured fixture -> $OUT/nccl.conf, and
#      nccltune export --format nccl-conf --install of the same into a file that already
#      has a user's line (NCCL_DEBUG_SUBSYS), through the CLI;
#   2. nccltune-probe with NCCL_CONF_FILE pointing at each, NCCL_DEBUG=INFO and
#      NCCL_DEBUG_SUBSYS=ENV,INIT,TUNING and NCCL_DEBUG_FILE (the probe keeps its ranks'
#      stdout, where NCCL logs by default): NCCL's log says which value it took for each
#      variable ("... set by environment to ...");
#   3. the same with NCCL_NTHREADS=256 and NCCL_MAX_NCHANNELS=4 in the environment: they
#      must win over the file;
#   4. the file with a user's NCCL_BUFFSIZE line before the block (what the install
#      refuses): NCCL takes the user's line, which is why it is refused.
# Run from the repository root with .carry/probe carried (scripts/device-build.sh).
# NCCL_NVLS_ENABLE=0 for every run; nothing changes GPU settings.
set -u
export NCCL_NVLS_ENABLE=0
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
out=${OUT:-$root/.carry/out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$root/.carry/probe/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
P=$root/.carry/probe/bin/nccltune-probe
NT=$root/.carry/probe/bin/nccltune
DATA=$root/tests/workflows/data/measured
if ldd "$P" | grep -q "not found"; then
	P=$root/.carry/probe/bin/nccltune-probe-nompi
fi
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

"$NT" export --format nccl-conf "$DATA" >"$out/nccl.conf" || say "export failed"
printf 'NCCL_DEBUG_SUBSYS=ENV,INIT,TUNING\n' >"$out/installed.conf"
"$NT" export --format nccl-conf --install="$out/installed.conf" "$DATA" >>"$summary" 2>&1 ||
	say "install failed"
{ printf 'NCCL_BUFFSIZE=262144\n'; cat "$out/nccl.conf"; } >"$out/shadowed.conf"
cp "$out/shadowed.conf" "$out/shadowed-copy.conf"
rc=0
"$NT" export --format nccl-conf --install="$out/shadowed-copy.conf" "$DATA" \
	>/dev/null 2>"$out/shadowed-install.err" || rc=$?
say "install into a file with NCCL_BUFFSIZE before the block: exit $rc: $(cat "$out/shadowed-install.err")"

# case NAME CONF [VAR=VALUE ...]: one probe run with NCCL_CONF_FILE=CONF.
case_run() {
	local name=$1 conf=$2 rc
	shift 2
	env -u NCCL_PROTO -u NCCL_ALGO -u NCCL_MAX_NCHANNELS -u NCCL_BUFFSIZE -u NCCL_NTHREADS \
		NCCL_CONF_FILE="$conf" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ENV,INIT,TUNING \
		NCCL_DEBUG_FILE="$out/$name.nccl.%p.log" "$@" \
		timeout 120 "$P" --bytes 43008 --ops 8 --iters 20 --warmup 5 \
		>"$out/$name.json" 2>"$out/$name.err"
	rc=$?
	say "== $name (NCCL_CONF_FILE=$(basename "$conf") $*): probe exit $rc"
	cat "$out/$name".nccl.*.log 2>/dev/null |
		grep -E "NCCL_(PROTO|ALGO|MAX_NCHANNELS|BUFFSIZE|NTHREADS|CONF_FILE|DEBUG_SUBSYS)|[Cc]onf" |
		sed 's/^[^ ]* [^ ]* [^ ]* //' | sort -u | tee -a "$summary"
}

case_run file "$out/nccl.conf"
case_run installed "$out/installed.conf"
case_run env-wins "$out/nccl.conf" NCCL_NTHREADS=256 NCCL_MAX_NCHANNELS=4
case_run shadowed "$out/shadowed.conf"
"$P" --version >>"$summary" 2>&1
ls -la "$out" >>"$summary"
# the device tool returns a few files: everything in one archive besides the summary
tar -C "$out" -czf /tmp/nccl-conf.tar.gz --exclude summary.txt . && mv /tmp/nccl-conf.tar.gz "$out/"
find "$out" -mindepth 1 ! -name summary.txt ! -name nccl-conf.tar.gz -delete
