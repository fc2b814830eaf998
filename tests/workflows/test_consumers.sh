#!/bin/sh
# test_consumers.sh - every export format read by its real consumer, on this machine:
#   sitecustomize   python3 imports it as sitecustomize (PYTHONPATH)
#   shell           bash and dash source it (". ./env.sh")
#   dotenv          the docker CLI (--env-file, parsed client side; a fake daemon catches
#                   what it sends), systemd's own env-file parser (the environment.d
#                   generator reads files with the code EnvironmentFile= uses), and
#                   `env $(grep -v '^#' nccl.env) CMD` (`env $(cat nccl.env)` fails, as the
#                   docs say)
#   nccl-conf       NCCL itself: libnccl.so.2 reads $NCCL_CONF_FILE (nccl_conf_env.c)
#   json            python3's json module
# Each must see exactly the variables of the result and nothing else: no comment line
# read as a variable, no value changed. A consumer missing here is skipped with a note
# (exit 77 only when none at all ran). Also: data from a results file never reaches the
# first two lines of a Python export (PEP 263), and a header that would declare a source
# encoding is refused, even from a summary that bypassed the loader.
set -eu
TOOL=$1
CONF_ENV=$2
PLUGIN=$(readlink -f "$3")
SRC=$NCCLTUNE_SOURCE_ROOT/tests/workflows
DATA=$SRC/data
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
T=$(mktemp -d)
DPID=
trap '[ -n "$DPID" ] && kill "$DPID" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "note: $*"; }

# What a consumer must end up with: best.env and the pinned variables of the result, and
# for a result with per-size rules nccltune's plugin (the built one) and the session's
# table, as NAME=VALUE lines, sorted.
want_env() {
	python3 - "$1" "$PLUGIN" <<'EOF'
import json, os, sys
p = sys.argv[1]
doc = json.load(open(os.path.join(p, "results.json") if os.path.isdir(p) else p))
env = dict(doc["best"]["env"], **(doc.get("pinned") or {}))
if doc["best"].get("rules"):
    env["NCCL_TUNER_PLUGIN"] = sys.argv[2]
    env["NCCLTUNE_TUNER_TABLE"] = os.path.realpath(p) + "/exports/nccl-tuner.table"
for k, v in sorted(env.items()):
    print(f"{k}={v}")
EOF
}
# NCCL_* variables of a python3 started with a clean environment plus "$@" (env-style).
py_env='import os
for k in sorted(os.environ):
    if k.startswith("NCCL_") or k == "NCCLTUNE_TUNER_TABLE": print(k + "=" + os.environ[k])'

# systemd's parser of environment files (src/basic/env-file.c, parse_env_file_internal):
# EnvironmentFile= loads a file with it, and so does the environment.d generator, which
# prints the result; the generator also expands ${VAR} (merge_env_file), which our values,
# holding no '$', never meet. It prints values a shell would split in double quotes.
GEN=
for g in /usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator \
         /lib/systemd/user-environment-generators/30-systemd-environment-d-generator; do
	[ -x "$g" ] && { GEN=$g; break; }
done
[ -n "$GEN" ] || note "no systemd environment-d generator: systemd's parser skipped"
unquote='import shlex, sys
for line in sys.stdin:
    for word in shlex.split(line):
        if word.startswith(("NCCL_", "NCCLTUNE_TUNER_TABLE=")): print(word)'
# The docker CLI parses --env-file itself and sends the variables to the daemon: a fake
# daemon on a private socket catches them (no container is ever made).
DOCKER=
if command -v docker >/dev/null; then
	python3 "$SRC/fake_dockerd.py" "$T/docker.sock" "$T/docker.body" &
	DPID=$!
	for i in 1 2 3 4 5 6 7 8 9 10; do [ -S "$T/docker.sock" ] && break; sleep 0.2; done
	[ -S "$T/docker.sock" ] && DOCKER=docker || note "fake docker daemon did not start"
else
	note "no docker CLI: docker --env-file skipped"
fi

# a result with per-size rules, as a session folder with its table in exports/
mkdir -p "$T/fx/rules/exports"
cp "$DATA/rules/results.json" "$T/fx/rules/"
"$TOOL" export nccl-tuner "$T/fx/rules" > "$T/fx/rules/exports/nccl-tuner.table" || fail "rules table"

for fx in measured model defaults-best hostile/accepted.json "$T/fx/rules"; do
	name=$(basename "$fx" .json)
	case $fx in /*) ;; *) fx=$DATA/$fx ;; esac
	d=$T/$name
	mkdir -p "$d/site"
	want_env "$fx" > "$d/want"
	for f in sitecustomize shell dotenv nccl-conf json; do
		"$TOOL" export "$f" "$fx" > "$d/$f" || fail "$name: export $f"
	done
	# the first two lines of a Python export are the same for every result: no data
	head -n 2 "$d/sitecustomize" > "$d/head2"
	if [ -f "$T/head2" ]; then
		cmp -s "$T/head2" "$d/head2" || fail "$name: data on the first two lines of the Python export"
	else
		cp "$d/head2" "$T/head2"
	fi

	# python3, importing it as sitecustomize
	cp "$d/sitecustomize" "$d/site/sitecustomize.py"
	env -i PATH="$PATH" PYTHONPATH="$d/site" python3 -c "$py_env" > "$d/got.py" ||
		fail "$name: python3 with the sitecustomize export"
	diff "$d/want" "$d/got.py" || fail "$name: python3 saw other variables"

	# bash and dash source the shell export
	for sh in bash dash; do
		command -v $sh >/dev/null || { note "$sh not found"; continue; }
		env -i PATH="$PATH" $sh -c '. "$1" && exec python3 -c "$2"' sh "$d/shell" "$py_env" \
			> "$d/got.$sh" || fail "$name: $sh . env.sh"
		diff "$d/want" "$d/got.$sh" || fail "$name: $sh saw other variables"
	done

	# json: the variables as one object
	python3 -c 'import json,sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "nccltune-env/1" and doc["source"] in ("measured", "model")
env = dict(doc.get("env", doc), **doc["pinned"])
for k in sorted(env): print(k + "=" + env[k])' "$d/json" > "$d/got.json" || fail "$name: json"
	diff "$d/want" "$d/got.json" || fail "$name: json holds other variables"

	# dotenv: systemd's parser, the docker CLI, and env(1) with the comments left out
	if [ -n "$GEN" ]; then
		mkdir -p "$d/xdg/environment.d"
		cp "$d/dotenv" "$d/xdg/environment.d/50-nccl.conf"
		env -i XDG_CONFIG_HOME="$d/xdg" "$GEN" | python3 -c "$unquote" | sort > "$d/got.systemd" ||
			fail "$name: systemd's env-file parser"
		diff "$d/want" "$d/got.systemd" || fail "$name: systemd read other variables"
	fi
	if [ -n "$DOCKER" ]; then
		rm -f "$T/docker.body"
		DOCKER_HOST="unix://$T/docker.sock" DOCKER_CONFIG="$T/dockercfg" timeout 30 \
			docker create --env-file "$d/dotenv" nccltune/none >/dev/null 2>"$d/docker.err" || true
		[ -s "$T/docker.body" ] || fail "$name: docker sent nothing: $(cat "$d/docker.err")"
		python3 -c 'import json,sys
for kv in sorted(json.load(open(sys.argv[1]))["Env"] or []): print(kv)' "$T/docker.body" \
			> "$d/got.docker" || fail "$name: docker's request"
		diff "$d/want" "$d/got.docker" || fail "$name: docker --env-file read other variables"
	fi
	env -i PATH="$PATH" sh -c 'exec env $(grep -v "^#" "$1") python3 -c "$2"' sh "$d/dotenv" \
		"$py_env" > "$d/got.envcmd" || fail "$name: env \$(grep -v '^#' nccl.env)"
	diff "$d/want" "$d/got.envcmd" || fail "$name: env \$(grep -v '^#' nccl.env) saw other variables"
	# what the documentation says does not work, does not: env $(cat nccl.env) runs the
	# header's first word as the command
	if env -i PATH="$PATH" sh -c 'exec env $(cat "$1") true' sh "$d/dotenv" 2>/dev/null; then
		fail "$name: env \$(cat nccl.env) worked, yet the docs say it fails"
	fi

	# NCCL reads the nccl-conf export as its configuration file
	rc=0
	env -i PATH="$PATH" HOME="$d" NCCL_CONF_FILE="$d/nccl-conf" "$CONF_ENV" > "$d/got.nccl" 2>"$d/nccl.err" || rc=$?
	if [ "$rc" = 77 ]; then
		note "no libnccl.so.2 to load: NCCL's reader skipped"
	else
		[ "$rc" = 0 ] || fail "$name: NCCL's reader: exit $rc: $(cat "$d/nccl.err")"
		# /etc/nccl.conf of this machine may add its own lines: keep the result's names
		cut -d= -f1 "$d/want" > "$d/names"
		grep -F -f "$d/names" "$d/got.nccl" > "$d/got.nccl.ours" || true
		[ -s "$d/names" ] || : > "$d/got.nccl.ours"
		diff "$d/want" "$d/got.nccl.ours" || fail "$name: NCCL read other values"
		# and nothing it read came from a comment line
		grep -v -F -f "$d/names" "$d/got.nccl" > "$d/extra" || true
		if [ -f /etc/nccl.conf ]; then :; else
			[ ! -s "$d/extra" ] || fail "$name: NCCL read variables not in the result: $(cat "$d/extra")"
		fi
	fi
done

# A summary built by hand, bypassing the loader: a header that declares a source
# encoding is refused; without one, the hostile text stays an inert comment that Python
# never runs (the exploit: line 2 "# ... coding:utf-7 ... +AAo-import os;..." in UTF-7).
crafted='+AAo-import os;open(os.environ["PWNED"],"w")#'
for who in "coding:utf-7|GPU" "nccltune|coding:utf-7" "nccltune|-*- coding=utf-7 -*-" \
           "x|vim: set fileencoding=utf-7"; do
	tn=${who%%|*} gpu=${who#*|}
	rc=0
	"$TOOL" craft sitecustomize "$tn" "$crafted" "$gpu" > "$T/crafted.py" 2> "$T/crafted.err" || rc=$?
	[ "$rc" = 2 ] || fail "crafted '$who': exit $rc, want 2"
	grep -q "declares a source encoding" "$T/crafted.err" || fail "crafted: $(cat "$T/crafted.err")"
	[ ! -s "$T/crafted.py" ] || fail "crafted '$who': output written"
done
mkdir "$T/pwn"
"$TOOL" craft sitecustomize nccltune "$crafted" GPU > "$T/pwn/sitecustomize.py" || fail "crafted, no coding"
env -i PATH="$PATH" PWNED="$T/pwned" PYTHONPATH="$T/pwn" python3 -c 'import os; print(os.environ["NCCL_PROTO"])' \
	> "$T/pwn.out" || fail "crafted: python3"
[ "$(cat "$T/pwn.out")" = LL ] || fail "crafted: python saw $(cat "$T/pwn.out")"
[ ! -e "$T/pwned" ] || fail "crafted: the header ran as code"
# the same text on line 2, as the export once wrote it, does run: the test can tell
printf '# >>> nccltune >>>\n# tuned by coding:utf-7 on %s\n' "$crafted" > "$T/pwn/sitecustomize.py"
env -i PATH="$PATH" PWNED="$T/pwned" PYTHONPATH="$T/pwn" python3 -c 'pass' 2>/dev/null || true
[ -e "$T/pwned" ] || note "python3 did not obey a PEP 263 line 2 here; the check above proves less"
rm -f "$T/pwned"

echo "consumers: ok"
