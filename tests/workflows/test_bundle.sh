#!/bin/sh
# test_bundle.sh - nccltune export --bundle DIR: the env-style exports in one folder with a
# copy of the plugin and the table, named by DIR, so that
#   * the build tree can go: the bundle names no path outside DIR, and the bundle's own
#     plugin fed the bundle's table (plugin_apply, as NCCL calls it) applies the rules;
#   * a container gets it: docker's --env-file rules (docker_envfile.py, checked against
#     the docker CLI itself through fake_dockerd.py when a docker CLI is here) read the
#     variables of nccl.env unchanged, and every path in it is a regular file under the
#     mount the launch docs show (-v DIR:DIR:ro); mounted elsewhere, it is not;
#   * a shell sourcing env.sh and NCCL reading nccl.conf see the same plugin and table;
#   * the env files' headers say the NCCL floor of per-size rules (2.24, tuner ABI v4);
#   * a result without rules removes an earlier bundle's plugin and table;
#   * refused: a relative or non-plain DIR, a folder others can write, --format with it.
set -eu
NCCLTUNE=$1
APPLY=$2
SRC=$NCCLTUNE_SOURCE_ROOT/tests/workflows
DATA=$SRC/data
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
T=$(mktemp -d)
DPID=
trap '[ -n "$DPID" ] && kill "$DPID" 2>/dev/null; rm -rf "$T"' EXIT
T=$(cd "$T" && pwd -P)
fail() { echo "FAIL: $*" >&2; exit 1; }
ENVF="python3 $SRC/docker_envfile.py"

# docker_envfile.py reproduces docker's rules: comments, no quote processing, no
# expansion, pass-through, a blank in a name refused
printf '# c\n  # indented comment\n\nA="q"\nB=$HOME x # y\n  C=\x27s\x27\r\nPASS\nUNSET_X\n' > "$T/rules.env"
PASS=p env -u UNSET_X $ENVF "$T/rules.env" > "$T/rules.got" || fail "docker_envfile on rules.env"
printf 'A="q"\nB=$HOME x # y\nC=\x27s\x27\nPASS=p\n' > "$T/rules.want"
diff "$T/rules.want" "$T/rules.got" || fail "docker_envfile: not docker's rules"
printf 'BAD NAME=1\n' > "$T/bad.env"
$ENVF "$T/bad.env" 2>"$T/err" && fail "a blank in a name accepted"
grep -q "contains whitespaces" "$T/err" || fail "bad name: $(cat "$T/err")"

S=$T/sess
mkdir -p "$S/exports"
cp "$DATA/rules/results.json" "$S/"
# as a session leaves it: its own table in exports/, which the plain exports name
"$NCCLTUNE" export --format nccl-tuner "$S" > "$S/exports/nccl-tuner.table" || fail "the table"
B=$T/opt/nccltune
mkdir -p "$T/opt"
"$NCCLTUNE" export --bundle "$B" "$S" > "$T/out" || fail "export --bundle: $(cat "$T/out")"
for f in libnccl-tuner-nccltune.so nccl-tuner.table nccl.env env.sh nccl.conf sitecustomize.py; do
	[ -f "$B/$f" ] || fail "the bundle has no $f"
done
grep -q "^bundle: $B/nccl.env (dotenv)" "$T/out" || fail "no note: $(cat "$T/out")"
# no path outside the bundle: nothing of the build tree or the session folder
grep -h '=/' "$B/nccl.env" "$B/nccl.conf" | grep -v "=$B/" && fail "a path outside the bundle"
grep -q "^NCCL_TUNER_PLUGIN=$B/libnccl-tuner-nccltune.so\$" "$B/nccl.env" || fail "plugin path"
grep -q "^NCCLTUNE_TUNER_TABLE=$B/nccl-tuner.table\$" "$B/nccl.env" || fail "table path"
grep -q "$S" "$B/env.sh" "$B/sitecustomize.py" && fail "the session folder is named"
# the NCCL floor, in every env file's header (and only for a result with rules, below)
for f in nccl.env env.sh nccl.conf sitecustomize.py; do
	grep -q "^# per-size rules: the server's NCCL must be 2.24 or newer (tuner plugin ABI v4)" \
		"$B/$f" || fail "$f does not say the NCCL floor"
done
cmp -s "$B/libnccl-tuner-nccltune.so" "$(readlink -f "$3")" || fail "not a copy of the plugin"

# the bundle's plugin with the bundle's table, as the env file names them
cat > "$T/want" <<EOF2
43008 tree simple 2
1048576 ring simple 0
8192 ring ll 0
EOF2
PL=$(sed -n 's/^NCCL_TUNER_PLUGIN=//p' "$B/nccl.env")
TB=$(sed -n 's/^NCCLTUNE_TUNER_TABLE=//p' "$B/nccl.env")
"$APPLY" "$PL" "$TB" 8 43008 1048576 8192 > "$T/got" || fail "plugin_apply on the bundle"
diff "$T/want" "$T/got" || fail "the bundle's rules do not apply"

# a shell sourcing env.sh sees the same plugin and table
env -i PATH="$PATH" sh -c '. "$1"; echo "$NCCL_TUNER_PLUGIN $NCCLTUNE_TUNER_TABLE"' sh "$B/env.sh" \
	> "$T/sh.got" || fail "sh . env.sh"
[ "$(cat "$T/sh.got")" = "$PL $TB" ] || fail "env.sh names $(cat "$T/sh.got")"

# the container: docker's reading of nccl.env, every path present under -v B:B:ro
$ENVF "$B/nccl.env" --mount "$B:$B:ro" --paths > "$T/docker.want" ||
	fail "the bundle's env file under docker's rules and the mount"
grep -v '^#' "$B/nccl.env" | grep . > "$T/lines"
diff "$T/lines" "$T/docker.want" || fail "docker would read other values"
# mounted elsewhere, the paths are not in the container
$ENVF "$B/nccl.env" --mount "$B:/elsewhere:ro" --paths > /dev/null 2>"$T/err" &&
	fail "a bundle mounted at another path accepted"
grep -q "no mount holds it" "$T/err" || fail "elsewhere: $(cat "$T/err")"
# the docker CLI itself (client-side parser, and the bind it sends), when it is here
if command -v docker >/dev/null; then
	python3 "$SRC/fake_dockerd.py" "$T/docker.sock" "$T/docker.body" &
	DPID=$!
	for i in 1 2 3 4 5 6 7 8 9 10; do [ -S "$T/docker.sock" ] && break; sleep 0.2; done
	[ -S "$T/docker.sock" ] || fail "fake docker daemon did not start"
	for f in "$T/rules.env" "$B/nccl.env"; do
		rm -f "$T/docker.body"
		PASS=p DOCKER_HOST="unix://$T/docker.sock" DOCKER_CONFIG="$T/dockercfg" timeout 30 \
			env -u UNSET_X docker create -v "$B:$B:ro" --env-file "$f" nccltune/none \
			>/dev/null 2>"$T/docker.err" || true
		[ -s "$T/docker.body" ] || fail "docker sent nothing: $(cat "$T/docker.err")"
		python3 -c 'import json, sys
b = json.load(open(sys.argv[1]))
assert b["HostConfig"]["Binds"] == [sys.argv[2] + ":" + sys.argv[2] + ":ro"], b["HostConfig"]
for kv in b["Env"] or []: print(kv)' "$T/docker.body" "$B" > "$T/docker.got" || fail "docker's request"
		PASS=p env -u UNSET_X $ENVF "$f" > "$T/script.got"
		diff "$T/script.got" "$T/docker.got" || fail "docker_envfile.py differs from docker on $f"
	done
else
	echo "note: no docker CLI: docker_envfile.py not compared with docker itself"
fi

# a result without rules: the earlier plugin and table go, the env files name neither
S2=$T/sess2
mkdir -p "$S2"
cp "$DATA/measured/results.json" "$S2/"
"$NCCLTUNE" export --bundle "$B" "$S2" > "$T/out2" || fail "bundle without rules: $(cat "$T/out2")"
[ -e "$B/libnccl-tuner-nccltune.so" ] && fail "an earlier bundle's plugin left behind"
[ -e "$B/nccl-tuner.table" ] && fail "an earlier bundle's table left behind"
grep -q "NCCL_TUNER_PLUGIN" "$B/nccl.env" && fail "a result without rules names a plugin"
grep -q "2.24 or newer" "$B/nccl.env" && fail "a result without rules says the plugin's NCCL floor"

# refusals, each naming the folder
for d in rel/dir "$T/opt/../opt/x" "$T/opt//x" "$T/opt/x/"; do
	"$NCCLTUNE" export --bundle "$d" "$S" > /dev/null 2>"$T/err" && fail "--bundle $d accepted"
	grep -q "absolute path" "$T/err" || fail "$d: $(cat "$T/err")"
done
mkdir "$T/open"
chmod 777 "$T/open"
"$NCCLTUNE" export --bundle "$T/open" "$S" > /dev/null 2>"$T/err" && fail "a world-writable folder accepted"
grep -q "writable by others" "$T/err" || fail "open: $(cat "$T/err")"
[ -e "$T/open/libnccl-tuner-nccltune.so" ] && fail "a plugin written into a refused folder"
"$NCCLTUNE" export --bundle "$T/b2" --format dotenv "$S" > /dev/null 2>"$T/err" &&
	fail "--format with --bundle accepted"
grep -q "no --format" "$T/err" || fail "--format: $(cat "$T/err")"
echo "ok"
