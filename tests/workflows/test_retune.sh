#!/bin/sh
# test_retune.sh - the unattended re-tune, end to end with the real CLI:
#  * on the machine models: a session of the model probe behind a wrapper that makes its
#    fingerprint differ on demand (the driver); `retune` without --init says how to
#    create STATE/current; unchanged does nothing; changed re-tunes with the recorded
#    probe, space and workload, warm-started, into STATE/sessions/<time>, installs
#    nothing (a model), relinks current and previous; the second firing is "unchanged";
#  * with the fake probe (source "measured"): the installed environment of a venv is
#    replaced by the re-tuned one; a lost GPU (a fingerprint of 0 GPUs) is "cannot
#    measure": exit 1, nothing changed; the lock; a previous that is no link
#    stops the re-tune before anything is installed, a failed install puts the links back; a re-tune that finds nothing faster
#    than NCCL's defaults removes what was installed;
#  * examples/retune.sh runs `nccltune retune` with its settings; examples/retune.service
#    and retune.timer pass systemd-analyze verify.
set -eu
NT=$1
FAKE=$2
MP=$3
SRC=$NCCLTUNE_SOURCE_ROOT
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
PY=$(python3 -c 'import sys; print(sys.executable)')
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
T=$(cd "$T" && pwd -P)
fail() { echo "FAIL: $*" >&2; exit 1; }
nsessions() { ls "$1/sessions" | wc -l | tr -d ' '; }
hdr() {   # KEY of the journal header of session $1, as JSON
	python3 -c 'import json,sys; print(json.dumps(json.loads(open(sys.argv[1] + "/journal.jsonl").readline()).get(sys.argv[2]), sort_keys=True))' "$1" "$2"
}

# ---- the models ----
cat > "$T/mp" <<EOF
#!/bin/sh
# the model probe; its fingerprint names another driver while $T/changed exists
for a; do last=\$a; done
if [ "\$last" = --fingerprint ] && [ -e "$T/changed" ]; then
	"$MP" "\$@" | python3 -c 'import json,sys; f = json.load(sys.stdin); f["driver"] = "999.99"; print(json.dumps(f))'
	exit
fi
exec "$MP" "\$@"
EOF
chmod +x "$T/mp"
S=$T/state
"$NT" run --probe "$T/mp --model pcie-gen5-8gpu" --budget 8 --seed 4 --strategy random \
	--space "$SRC/examples/space-pcie.json" --bytes 43008,65536 --ops 16 \
	--out "$T/first" --quiet 2>/dev/null || fail "first model session"
rc=0
"$NT" retune "$S" > /dev/null 2> "$T/err" || rc=$?
[ "$rc" = 2 ] || fail "no current: exit $rc"
# the command as it can be run: nccltune's path (the build tree's is not in PATH)
grep -qF "$S/current: missing; create it with $NT retune --init $S --from SESSION" "$T/err" ||
	fail "no current: $(cat "$T/err")"
# the header is read by the journal's own reader, strictly, from the descriptor opened
badhdr() {   # copy of the first session into $T/$1 with header key $2 set to JSON $3
	cp -R "$T/first" "$T/$1"
	python3 - "$T/$1/journal.jsonl" "$2" "$3" <<'PYEOF'
import json, sys
lines = open(sys.argv[1]).read().split("\n")
h = json.loads(lines[0]); h[sys.argv[2]] = json.loads(sys.argv[3]); lines[0] = json.dumps(h)
open(sys.argv[1], "w").write("\n".join(lines))
PYEOF
}
badhdr nospace space null
rc=0
"$NT" retune --init "$T/state-bad" --from "$T/nospace" > /dev/null 2> "$T/err" || rc=$?
[ "$rc" = 2 ] || fail "header without space: exit $rc"
grep -q "nospace/journal.jsonl:1: .*records no space" "$T/err" ||
	fail "header without space: $(cat "$T/err")"
badhdr badbudget budget '"many"'
rc=0
"$NT" retune --init "$T/state-bad" --from "$T/badbudget" > /dev/null 2> "$T/err" || rc=$?
[ "$rc" = 2 ] || fail "header with a bad budget: exit $rc"
grep -q "badbudget/journal.jsonl:1: budget" "$T/err" ||
	fail "header with a bad budget: $(cat "$T/err")"
[ ! -e "$T/state-bad/current" ] || fail "a bad header made a current link"
"$NT" retune --init "$S" --from "$T/first" > "$T/out" || fail "init"
grep -q "$S/current -> $T/first (a MODEL session" "$T/out" || fail "init said: $(cat "$T/out")"
[ "$(readlink "$S/current")" = "$T/first" ] || fail "init link"
"$NT" retune --quiet "$S" > "$T/out" || fail "unchanged: exit"
grep -q "^unchanged: " "$T/out" && grep -q "nothing to do" "$T/out" || fail "unchanged: $(cat "$T/out")"
[ "$(nsessions "$S")" = 0 ] || fail "unchanged: a session was made"

touch "$T/changed"
"$NT" retune --quiet "$S" > "$T/out" || fail "changed: exit $?: $(cat "$T/out")"
new=$(readlink "$S/current")
case $new in sessions/2*Z) ;; *) fail "current -> $new" ;; esac
[ "$(readlink "$S/previous")" = "$T/first" ] || fail "previous -> $(readlink "$S/previous")"
grep -q "^changed: 1 difference" "$T/out" || fail "changed: no verdict: $(cat "$T/out")"
grep -q "is a MODEL result (pcie-gen5-8gpu), not a measurement: nothing installed" "$T/out" ||
	fail "changed: $(cat "$T/out")"
for k in probe space workload strategy budget seed; do
	[ "$(hdr "$S/$new" $k)" = "$(hdr "$T/first" $k)" ] || fail "the re-tune's $k differs: $(hdr "$S/$new" $k)"
done
[ "$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["warm_start"]["from"])' "$S/$new/journal.jsonl")" = "$T/first" ] ||
	fail "not warm-started from the session in use"
[ -f "$S/$new/results.json" ] && [ -f "$S/$new/exports/env.sh" ] || fail "the new session is incomplete"
# the second firing (the old cron line failed here): unchanged against the new session
"$NT" retune --quiet "$S" > "$T/out" || fail "second firing: exit $?"
grep -q "nothing to do" "$T/out" || fail "second firing: $(cat "$T/out")"
[ "$(nsessions "$S")" = 1 ] || fail "second firing made a session"

# ---- the fake probe: measured ----
cat > "$T/fk" <<EOF
#!/bin/sh
# the fake probe: \$T/lost: a fingerprint of no GPU; \$T/gpu2: other GPUs; \$T/flat: every
# configuration as fast as NCCL's defaults (no NCCL_* reaches it)
for a; do last=\$a; done
if [ "\$last" = --fingerprint ]; then
	if [ -e "$T/lost" ]; then
		echo '{"schema": "nccltune-fingerprint/1", "source": "measured", "gpu_count": 0, "gpus": [], "topology": []}'
		exit 0
	fi
	[ -e "$T/gpu2" ] && export FAKEPROBE_GPU="Fake GPU v2"
fi
if [ -e "$T/flat" ]; then
	for v in \$(env | sed -n 's/^\(NCCL_[A-Z0-9_]*\)=.*/\1/p'); do unset "\$v"; done
fi
exec "$FAKE" "\$@"
EOF
chmod +x "$T/fk"
"$PY" -m venv --without-pip "$T/venv" || { echo "no venv: the measured part skipped"; exit 0; }
V=$T/venv/bin/python
proto() { env -i PATH="$PATH" "$V" -c 'import os; print(os.environ.get("NCCL_PROTO"))'; }
best_proto() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1] + "/results.json"))["best"]["env"].get("NCCL_PROTO"))' "$1"; }
M=$T/mstate
"$NT" run --probe "$T/fk" --budget 20 --seed 2 --strategy random --out "$T/m1" --quiet \
	2>/dev/null || fail "first measured session"
"$NT" export --install --python "$V" "$T/m1" > /dev/null || fail "first install"
[ "$(best_proto "$T/m1")" != None ] || fail "the first measured session found no protocol to set"
[ "$(proto)" = "$(best_proto "$T/m1")" ] || fail "first install: the venv sees $(proto)"
"$NT" retune --init "$M" --from "$T/m1" > /dev/null || fail "init measured"
cp "$T/venv/lib/"python3*/site-packages/_nccltune_env.py "$T/env1.py"

# a lost GPU: cannot measure, exit 1, nothing changed
touch "$T/lost"
rc=0
"$NT" retune --quiet --python "$V" "$M" > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] || fail "lost GPU: exit $rc"
grep -q "cannot measure: the probe sees no GPU, and the session tuned 2" "$T/err" ||
	fail "lost GPU: $(cat "$T/err")"
[ "$(readlink "$M/current")" = "$T/m1" ] && [ ! -e "$M/previous" ] && [ "$(nsessions "$M")" = 0 ] ||
	fail "lost GPU: something changed"
cmp -s "$T/env1.py" "$T/venv/lib/"python3*/site-packages/_nccltune_env.py || fail "lost GPU: the install changed"
rm "$T/lost"

# the lock: a second retune at the same time does nothing
python3 -c 'import fcntl, sys, time
f = open(sys.argv[1], "a"); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[2], "w").close()
time.sleep(60)' "$M/lock" "$T/locked" &
LPID=$!
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	[ -e "$T/locked" ] && break
	sleep 0.2
done
rc=0
"$NT" retune --quiet --python "$V" "$M" > /dev/null 2> "$T/err" || rc=$?
kill "$LPID" 2>/dev/null || true
wait "$LPID" 2>/dev/null || true
[ "$rc" = 1 ] && grep -q "$M/lock: held by another nccltune retune" "$T/err" || fail "lock: $rc $(cat "$T/err")"

# other GPUs, but STATE/previous is no link (a folder): install and relink are one step
# (issue 31 m4): exit 1 before anything is installed, current still the old session
touch "$T/gpu2"
mkdir -p "$M/previous/keep"
rc=0
"$NT" retune --quiet --python "$V" "$M" > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q "$M/previous: not a symlink" "$T/err" || fail "previous a folder: $rc $(cat "$T/err")"
cmp -s "$T/env1.py" "$T/venv/lib/"python3*/site-packages/_nccltune_env.py || fail "previous a folder: the install changed"
[ "$(readlink "$M/current")" = "$T/m1" ] || fail "previous a folder: current -> $(readlink "$M/current")"
rm -r "$M/previous"
# the install fails after the links moved (a module nccltune did not write): they go back
MOD=$(echo "$T/venv/lib/"python3*/site-packages/_nccltune_env.py)
echo "# the user's own" > "$MOD"
rc=0
"$NT" retune --quiet --python "$V" "$M" > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "exists and was not written by nccltune.*; $M/current still points at $T/m1" "$T/err" ||
	fail "install fails: $rc $(cat "$T/err")"
[ "$(readlink "$M/current")" = "$T/m1" ] && [ ! -e "$M/previous" ] && [ ! -L "$M/previous" ] ||
	fail "install fails: current -> $(readlink "$M/current"), previous $(ls -la "$M")"
cp "$T/env1.py" "$MOD"

# other GPUs: re-tuned, measured, faster: installed into the venv, relinked
"$NT" retune --quiet --python "$V" "$M" > "$T/out" 2> "$T/err" || fail "gpu2: $(cat "$T/out" "$T/err")"
new=$(readlink "$M/current")
grep -q "retune: installed $M/$new's environment into" "$T/out" || fail "gpu2: $(cat "$T/out")"
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"]["gpus"][0]["name"])' "$M/$new/results.json")" = "Fake GPU v2" ] ||
	fail "gpu2: not the new machine's session"
[ "$(proto)" = "$(best_proto "$M/$new")" ] || fail "gpu2: the venv sees $(proto)"
grep -q "tuned by nccltune" "$T/venv/lib/"python3*/site-packages/_nccltune_env.py || fail "gpu2: module"
[ -f "$M/$new/installed.json" ] || fail "gpu2: the install is not recorded"
[ "$(readlink "$M/previous")" = "$T/m1" ] || fail "gpu2: previous"

# nothing beats NCCL's defaults any more (and the GPUs changed back): the install is removed
touch "$T/flat"
rm "$T/gpu2"
"$NT" retune --quiet --python "$V" "$M" > "$T/out" 2> "$T/err" || fail "flat: $(cat "$T/out" "$T/err")"
grep -q "is not shown to be faster than NCCL's defaults: nothing installed; removed the environment installed for the machine before" \
	"$T/out" || fail "flat: $(cat "$T/out")"
[ "$(proto)" = None ] || fail "flat: the venv still sees $(proto)"
[ "$(readlink "$M/previous")" = "$new" ] || fail "flat: previous"
rm "$T/flat"

# ---- examples/retune.sh: nccltune retune with its settings ----
mkdir "$T/bin"
cat > "$T/bin/nccltune" <<'EOF'
#!/bin/sh
echo "$*" > "$FAKE_LOG"
exit "$FAKE_RC"
EOF
chmod +x "$T/bin/nccltune"
rc=0
PATH="$T/bin:$PATH" FAKE_LOG=$T/log FAKE_RC=3 NCCLTUNE_STATE=/srv/nt NCCLTUNE_PYTHON=/opt/py \
	sh "$SRC/examples/retune.sh" || rc=$?
[ "$rc" = 3 ] || fail "retune.sh: exit $rc"
[ "$(cat "$T/log")" = "retune --quiet --python /opt/py /srv/nt" ] || fail "retune.sh ran: $(cat "$T/log")"

# ---- the unit files, as systemd reads them ----
if command -v systemd-analyze >/dev/null; then
	mkdir "$T/units"
	sed 's|/usr/local/bin/nccltune-retune|/bin/true|' "$SRC/examples/retune.service" > "$T/units/retune.service"
	cp "$SRC/examples/retune.timer" "$T/units/"
	printf '[Unit]\nDescription=the server\n[Service]\nExecStart=/bin/true\n' > "$T/units/sglang.service"
	(cd "$T/units" && systemd-analyze verify --man=no ./retune.service ./retune.timer) > "$T/verify" 2>&1 ||
		fail "systemd-analyze verify: $(cat "$T/verify")"
	grep -q "Unknown\|Invalid\|Failed" "$T/verify" && fail "systemd-analyze: $(cat "$T/verify")"
else
	echo "note: no systemd-analyze: the unit files were not verified"
fi
echo "retune: ok"
