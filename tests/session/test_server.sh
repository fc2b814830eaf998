#!/bin/bash
# test_server.sh - the server's environment (issue 18), through the CLI with the fake
# probe and the model probe: --nccl PATH reaches every probe run as the probe's --nccl
# (recorded in the journal's probe command, so resume and check use it too), the session
# stops when the fingerprint names another library, the summary names the library,
# check compares nccl_path, --python finds a wheel's NCCL in a venv's site-packages.
# Usage: test_server.sh NCCLTUNE FAKEPROBE
set -u
NT=$1
FAKE=$2
MODEL="${NCCLTUNE_BUILD_ROOT:-.}/models/nccltune-model-probe"
# the model probe is always built (models/meson.build): without it this test cannot run
[ -x "$MODEL" ] || { echo "FAIL: $MODEL is not built"; exit 1; }
failures=0
tmp=$(mktemp -d /tmp/nccltune-server-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

mkdir -p "$tmp/lib"
echo "not really NCCL" > "$tmp/lib/libnccl.so.2"
lib="$tmp/lib/libnccl.so.2"

# --nccl: the probe is told, the fingerprint agrees, the summary says so
out=$(FAKEPROBE_LOG="$tmp/log" "$NT" run --probe "$FAKE" --nccl "$lib" --budget 6 --seed 1 \
	--out "$tmp/s1" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "--nccl: exit $rc: $out"
case "$out" in *"NCCL: every run loads $lib"*) ;; *) fail "--nccl: no note naming the library: $out" ;; esac
case "$out" in *"nccl:     2.28.3 ($lib): the result holds for this library"*) ;;
	*) fail "--nccl: the summary does not name the library: $out" ;; esac
runs=$(grep -c . "$tmp/log" 2>/dev/null || echo 0)
with=$(grep -c -- "--nccl $lib" "$tmp/log" 2>/dev/null || echo 0)
[ "$runs" -gt 0 ] && [ "$runs" -eq "$with" ] || fail "--nccl: $with of $runs probe runs got --nccl $lib"
head -1 "$tmp/s1/journal.jsonl" | grep -q -- "\"--nccl\",[[:space:]]*\"$lib\"" ||
	fail "--nccl: the journal's probe command lacks it"
grep -q "\"nccl_path\":[[:space:]]*\"$lib\"" "$tmp/s1/results.json" ||
	fail "--nccl: results.json's fingerprint lacks nccl_path"

# the probe loaded another copy: the session stops before spending its budget
out=$(FAKEPROBE_NCCL_PATH=/usr/lib/other/libnccl.so.2 "$NT" run --probe "$FAKE" --nccl "$lib" \
	--budget 6 --out "$tmp/s2" 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "--nccl mismatch: exit $rc, want 1"
case "$out" in *"loaded /usr/lib/other/libnccl.so.2 instead"*) ;; *) fail "--nccl mismatch: $out" ;; esac

# a missing library is a usage error naming it
out=$("$NT" run --probe "$FAKE" --nccl "$tmp/none.so" --budget 6 --out "$tmp/s3" 2>&1)
[ $? -eq 2 ] || fail "--nccl missing: want exit 2: $out"
case "$out" in *"$tmp/none.so"*) ;; *) fail "--nccl missing: not named: $out" ;; esac
out=$("$NT" run --probe "$FAKE" --nccl "$lib" --python python3 --out "$tmp/s4" 2>&1)
[ $? -eq 2 ] || fail "--nccl with --python: want exit 2: $out"

# --ranks-per-gpu K (the rig): every probe run, the fingerprint and the journal's probe
# command carry it, so a resume and check run the same probe; a model has no GPU to share
out=$(FAKEPROBE_LOG="$tmp/log7" "$NT" run --probe "$FAKE" --nccl "$lib" --ranks-per-gpu 2 \
	--budget 6 --seed 1 --out "$tmp/s7" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "--ranks-per-gpu: exit $rc: $out"
case "$out" in *"the rig: 2 ranks share each GPU"*) ;;
	*) fail "--ranks-per-gpu: the session does not say its figures are the rig's: $out" ;; esac
grep -q "\"ranks_per_gpu\":[[:space:]]*2" "$tmp/s7/results.json" ||
	fail "--ranks-per-gpu: results.json's fingerprint lacks ranks_per_gpu"
runs=$(grep -c . "$tmp/log7" 2>/dev/null || echo 0)
with=$(grep -c -- "--ranks-per-gpu 2" "$tmp/log7" 2>/dev/null || echo 0)
[ "$runs" -gt 0 ] && [ "$runs" -eq "$with" ] ||
	fail "--ranks-per-gpu: $with of $runs probe runs got --ranks-per-gpu 2"
head -1 "$tmp/s7/journal.jsonl" | grep -q -- "\"--ranks-per-gpu\",[[:space:]]*\"2\"" ||
	fail "--ranks-per-gpu: the journal's probe command lacks it"
out=$(FAKEPROBE_LOG="$tmp/log8" "$NT" check "$tmp/s7" 2>&1)
[ $? -eq 0 ] || fail "check of a --ranks-per-gpu session: $out"
out=$("$NT" run --model pcie-gen5-8gpu --ranks-per-gpu 2 --budget 6 --out "$tmp/s8" 2>&1)
[ $? -eq 2 ] || fail "--ranks-per-gpu with --model: want exit 2: $out"
case "$out" in *"has no GPU to share"*) ;; *) fail "--ranks-per-gpu with --model: $out" ;; esac
out=$("$NT" run --probe "$FAKE" --ranks-per-gpu 0 --out "$tmp/s9" 2>&1)
[ $? -eq 2 ] || fail "--ranks-per-gpu 0: want exit 2: $out"
out=$("$NT" run --resume "$tmp/s7" --ranks-per-gpu 2 2>&1)
[ $? -eq 2 ] || fail "--resume with --ranks-per-gpu: want exit 2: $out"

# check: same library unchanged; another library is a change naming nccl_path
out=$("$NT" check "$tmp/s1" 2>&1)
[ $? -eq 0 ] || fail "check with --nccl: want unchanged: $out"
case "$out" in *"($lib)"*) ;; *) fail "check: the machine line does not name the library: $out" ;; esac
out=$(FAKEPROBE_NCCL_PATH=/opt/x/libnccl.so.2 "$NT" check "$tmp/s1" 2>&1)
[ $? -eq 3 ] || fail "check, other library: want exit 3: $out"
case "$out" in *"nccl_path: $lib -> /opt/x/libnccl.so.2"*) ;; *) fail "check: $out" ;; esac

# --python: the wheel's NCCL under the venv's site-packages
if python3 -m venv --without-pip "$tmp/venv" >/dev/null 2>&1; then
	py="$tmp/venv/bin/python3"
	out=$("$NT" run --probe "$FAKE" --python "$py" --budget 6 --out "$tmp/s5" 2>&1)
	[ $? -eq 2 ] || fail "--python without a wheel NCCL: want exit 2: $out"
	case "$out" in *"no PyTorch wheel NCCL"*) ;; *) fail "--python: $out" ;; esac
	site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	mkdir -p "$site/nvidia/nccl/lib" && cp "$lib" "$site/nvidia/nccl/lib/libnccl.so.2"
	want=$(realpath "$site/nvidia/nccl/lib/libnccl.so.2")
	out=$("$NT" run --probe "$FAKE" --python "$py" --budget 6 --out "$tmp/s6" 2>&1)
	[ $? -eq 0 ] || fail "--python: exit: $out"
	grep -q "\"nccl_path\":[[:space:]]*\"$want\"" "$tmp/s6/results.json" ||
		fail "--python: nccl_path is not $want"
else
	fail "python3 -m venv is unavailable here: --python cannot be tested (install python3-venv)"
fi

# the model probe records --nccl (and refuses a missing file)
fp=$("$MODEL" --model h200-nvlink-2gpu --nccl "$lib" --fingerprint)
case "$fp" in *"\"nccl_path\":\"$lib\""*) ;; *) fail "model --nccl: $fp" ;; esac
"$MODEL" --model h200-nvlink-2gpu --nccl "$tmp/none.so" --fingerprint >/dev/null 2>&1
[ $? -eq 2 ] || fail "model --nccl missing file: want exit 2"
out=$("$NT" run --model h200-nvlink-2gpu --nccl "$lib" --budget 6 --out "$tmp/m1" 2>&1)
[ $? -eq 0 ] || fail "model session --nccl: $out"

# --like: the profile's variables reach every run, are recorded and exported as comments
out=$(FAKEPROBE_LOG="$tmp/log2" "$NT" run --probe "$FAKE" --like sglang --budget 6 \
	--out "$tmp/l1" 2>&1)
[ $? -eq 0 ] || fail "--like sglang: $out"
case "$out" in *"server:   sglang sets NCCL_CUMEM_ENABLE=0 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=8 before"*) ;;
	*) fail "--like: the summary does not say what the server sets: $out" ;; esac
case "$out" in *"set by the server (sglang) for every run: NCCL_CUMEM_ENABLE=0"*) ;;
	*) fail "--like sglang: no note: $out" ;; esac
case "$out" in *"--like sglang: settings as read from sglang main at commit"*) ;;
	*) fail "--like sglang: the version it copies is not shown: $out" ;; esac
runs=$(grep -c . "$tmp/log2" 2>/dev/null || echo 0)
with=$(grep -c "NCCL_CUMEM_ENABLE=0" "$tmp/log2" 2>/dev/null || echo 0)
[ "$runs" -gt 0 ] && [ "$runs" -eq "$with" ] || fail "--like: $with of $runs runs had NCCL_CUMEM_ENABLE=0"
# SGLang's _set_envs_and_config sets NCCL_NVLS_ENABLE=0 too (without --enable-nccl-nvls)
with=$(grep -c "NCCL_NVLS_ENABLE=0" "$tmp/log2" 2>/dev/null || echo 0)
[ "$runs" -eq "$with" ] || fail "--like: $with of $runs runs had NCCL_NVLS_ENABLE=0"
head -1 "$tmp/l1/journal.jsonl" | grep -q '"server":{"like":"sglang","env":{"NCCL_CUMEM_ENABLE":"0","NCCL_NVLS_ENABLE":"0","CUDA_DEVICE_MAX_CONNECTIONS":"8"}}' ||
	fail "--like: the journal header does not record the server's variables"
grep -q '"like":[[:space:]]*"sglang"' "$tmp/l1/results.json" || fail "--like: results.json has no server"
"$NT" export "$tmp/l1" --format shell > "$tmp/l1.sh" 2>&1 || fail "--like: export failed"
grep -q "^# set by the server (sglang): CUDA_DEVICE_MAX_CONNECTIONS=8" "$tmp/l1.sh" ||
	fail "--like: export lacks the 'set by the server' comment: $(cat "$tmp/l1.sh")"
grep -q "^export NCCL_CUMEM_ENABLE" "$tmp/l1.sh" && fail "--like: the export sets the server's variable"
# a resumed --like session reads the profile back from the journal header: the runs it
# adds still get the server's variables and results.json still names the server
mkdir -m 700 "$tmp/l1r"
head -n 3 "$tmp/l1/journal.jsonl" > "$tmp/l1r/journal.jsonl"
FAKEPROBE_LOG="$tmp/log2r" "$NT" run --resume "$tmp/l1r" --quiet > "$tmp/l1r.out" 2>&1 ||
	fail "--like: resume failed: $(cat "$tmp/l1r.out")"
runs=$(grep -c . "$tmp/log2r" 2>/dev/null || echo 0)
with=$(grep -c "NCCL_CUMEM_ENABLE=0" "$tmp/log2r" 2>/dev/null || echo 0)
[ "$runs" -gt 0 ] && [ "$runs" -eq "$with" ] ||
	fail "--like, resumed: $with of $runs runs had NCCL_CUMEM_ENABLE=0"
grep -q '"like":[[:space:]]*"sglang"' "$tmp/l1r/results.json" ||
	fail "--like, resumed: results.json has no server"
# with symmetric memory on (--window symmetric), SGLang leaves cuMem and NVLS on: the
# session sets neither to 0, and says so (the fake probe registers no symmetric window,
# so its runs fail: what they were given is what counts here)
out=$(FAKEPROBE_LOG="$tmp/log2s" "$NT" run --probe "$FAKE" --like sglang --window symmetric \
	--budget 6 --out "$tmp/l1s" 2>&1)
grep -q -- "--window symmetric" "$tmp/log2s" || fail "--like sglang --window symmetric: no run: $out"
case "$out" in *"not set: NCCL_NVLS_ENABLE=0 (sglang leaves it unset when symmetric"*) ;;
	*) fail "--like sglang, symmetric: no note on NCCL_NVLS_ENABLE: $out" ;; esac
grep -q "NCCL_NVLS_ENABLE=" "$tmp/log2s" && fail "--like sglang, symmetric: NCCL_NVLS_ENABLE was set"
grep -q "NCCL_CUMEM_ENABLE=0" "$tmp/log2s" && fail "--like sglang, symmetric: NCCL_CUMEM_ENABLE=0 was set"
case "$out" in *"set by the server (sglang) for every run: CUDA_DEVICE_MAX_CONNECTIONS=8"*) ;;
	*) fail "--like sglang, symmetric: CUDA_DEVICE_MAX_CONNECTIONS=8 is not set: $out" ;; esac
# a profile must mark NCCL_NVLS_ENABLE "unless": "symmetric" (a symmetric run leaves it
# unset), and may mark no variable but it and NCCL_CUMEM_ENABLE
printf '{"schema":"nccltune-profile/1","name":"x","checked_against":"t","env":[{"name":"NCCL_NVLS_ENABLE","value":"0","source":"s"}]}' > "$tmp/nvls.json"
out=$("$NT" run --probe "$FAKE" --like "$tmp/nvls.json" --out "$tmp/l4n" 2>&1)
[ $? -eq 2 ] || fail "--like NVLS without unless: want exit 2: $out"
case "$out" in *"NCCL_NVLS_ENABLE: needs \"unless\": \"symmetric\""*) ;; *) fail "--like NVLS without unless: $out" ;; esac
printf '{"schema":"nccltune-profile/1","name":"x","checked_against":"t","env":[{"name":"NCCL_PROTO","value":"Simple","unless":"symmetric","source":"s"}]}' > "$tmp/unl.json"
out=$("$NT" run --probe "$FAKE" --like "$tmp/unl.json" --out "$tmp/l4u" 2>&1)
[ $? -eq 2 ] || fail "--like unless on NCCL_PROTO: want exit 2: $out"
case "$out" in *"unless: only NCCL_CUMEM_ENABLE and NCCL_NVLS_ENABLE"*"not NCCL_PROTO"*) ;;
	*) fail "--like unless on NCCL_PROTO: $out" ;; esac
# vllm (since its pull request 24141) sets no NCCL variable: every run has NCCL's defaults
out=$(FAKEPROBE_LOG="$tmp/log3v" "$NT" run --probe "$FAKE" --like vllm --budget 6 \
	--out "$tmp/l2v" 2>&1)
[ $? -eq 0 ] || fail "--like vllm: $out"
grep -q "NCCL_CUMEM_ENABLE=\|NCCL_NVLS_ENABLE=" "$tmp/log3v" && fail "--like vllm: a run got an NCCL variable"
# the user's own value wins, and is said to
out=$(NCCL_CUMEM_ENABLE=1 FAKEPROBE_LOG="$tmp/log3" "$NT" run --probe "$FAKE" --like sglang \
	--budget 6 --out "$tmp/l2" 2>&1)
case "$out" in *"your environment's NCCL_CUMEM_ENABLE=1 is used"*) ;; *) fail "--like, user value: $out" ;; esac
grep -q "NCCL_CUMEM_ENABLE=0" "$tmp/log3" && fail "--like: the profile overrode the user's value"
# a --try that sets a server variable otherwise is warned about (the server's value wins)
out=$("$NT" run --probe "$FAKE" --like sglang --try NCCL_CUMEM_ENABLE=1 --budget 6 \
	--out "$tmp/l7" 2>&1)
case "$out" in *"try 1 sets NCCL_CUMEM_ENABLE=1, but sglang sets NCCL_CUMEM_ENABLE=0"*) ;;
	*) fail "--like with a contrary --try: no warning: $out" ;; esac
# unknown names and hostile files are usage errors
out=$("$NT" run --probe "$FAKE" --like tgi --out "$tmp/l3" 2>&1)
[ $? -eq 2 ] || fail "--like tgi: want exit 2"
case "$out" in *"built in: sglang, vllm"*) ;; *) fail "--like tgi: $out" ;; esac
printf '{"schema":"nccltune-profile/1","name":"x","checked_against":"t","env":[{"name":"LD_PRELOAD","value":"/x.so","source":"s"}]}' > "$tmp/bad.json"
out=$("$NT" run --probe "$FAKE" --like "$tmp/bad.json" --out "$tmp/l4" 2>&1)
[ $? -eq 2 ] || fail "--like LD_PRELOAD profile: want exit 2: $out"
case "$out" in *"LD_PRELOAD"*) ;; *) fail "--like bad file: not named: $out" ;; esac
# a profile must name the framework version it was read from (checked_against)
printf '{"schema":"nccltune-profile/1","name":"x","env":[{"name":"NCCL_CUMEM_ENABLE","value":"0","unless":"symmetric","source":"s"}]}' > "$tmp/nover.json"
out=$("$NT" run --probe "$FAKE" --like "$tmp/nover.json" --out "$tmp/l4v" 2>&1)
[ $? -eq 2 ] || fail "--like profile without checked_against: want exit 2: $out"
case "$out" in *"nover.json"*"checked_against"*) ;; *) fail "--like without checked_against: $out" ;; esac
[ -e "$tmp/l4v/journal.jsonl" ] && fail "--like without checked_against: a session started"
# nor an NCCL loader variable (it would load a library in every probe run, and
# NCCL_TUNER_PLUGIN would replace nccltune's own), nor a value NCCL would not take, nor a
# FIFO (read as a regular file only)
for bad in 'NCCL_NET_PLUGIN /x/libnccl-net-evil.so a loader variable' \
	'NCCL_TUNER_PLUGIN /x/evil.so a loader variable' \
	'NCCL_DEBUG_FILE /tmp/x.%p a loader variable' \
	'NCCL_CUMEM_ENABLE yes is not an integer in [0, 1]' \
	'CUDA_DEVICE_MAX_CONNECTIONS 64 not an integer in [1, 32]'; do
	set -- $bad
	name=$1 value=$2; shift 2
	printf '{"schema":"nccltune-profile/1","name":"x","checked_against":"t","env":[{"name":"%s","value":"%s","source":"s"}]}' \
		"$name" "$value" > "$tmp/bad.json"
	out=$("$NT" run --probe "$FAKE" --like "$tmp/bad.json" --out "$tmp/l5" 2>&1)
	[ $? -eq 2 ] || fail "--like profile setting $name=$value: want exit 2: $out"
	case "$out" in *"$name"*"$*"*) ;; *) fail "--like $name=$value: no reason: $out" ;; esac
	[ -e "$tmp/l5/journal.jsonl" ] && fail "--like $name=$value: a session started"
done
mkfifo "$tmp/fifo.json"
out=$(timeout 10 "$NT" run --probe "$FAKE" --like "$tmp/fifo.json" --out "$tmp/l6" 2>&1)
[ $? -eq 2 ] || fail "--like FIFO: want exit 2 at once: $out"
case "$out" in *"fifo.json"*"not a regular file"*) ;; *) fail "--like FIFO: $out" ;; esac
# vLLM's custom all-reduce window on NVLink: a tuned size of 43008 bytes falls there
out=$("$NT" run --model h200-nvlink-2gpu --like vllm --budget 6 --out "$tmp/l5" 2>&1)
[ $? -eq 0 ] || fail "--like vllm model: $out"
case "$out" in *"vllm sends all-reduces of 16384-131072 bytes on NVLink"*"43008"*) ;;
	*) fail "--like vllm: no custom all-reduce warning: $out" ;; esac
out=$("$NT" run --model pcie-gen5-8gpu --like vllm --budget 6 --out "$tmp/l6" 2>&1)
case "$out" in *"custom all-reduce"*) fail "--like vllm on PCIe: window warned" ;; esac

[ $failures -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all server checks passed"
