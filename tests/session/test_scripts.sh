#!/usr/bin/env bash
# test_scripts.sh - the set-up scripts a new user runs first:
#  * scripts/test.sh (through scripts/werror-build.sh) never reuses a build without
#    -Werror, such as the one scripts/tune.sh makes: it reconfigures it -Dwerror=true;
#  * scripts/deps.sh keeps apt quiet when it works and shows apt's whole output when it
#    fails (apt-get, dpkg-query and sudo replaced by stand-ins in PATH).
# Usage: test_scripts.sh SOURCE_ROOT
set -u
src=$1
tmp=$(mktemp -d /tmp/nccltune-scripts-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

werror_of() {
	meson introspect "$1" --buildoptions |
		python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "werror"))'
}

# a build as scripts/tune.sh makes it (no -Werror), then what scripts/test.sh does with it
(cd "$src" && meson setup "$tmp/b" >/dev/null 2>&1) || fail "meson setup failed"
[ "$(werror_of "$tmp/b")" = False ] || fail "the tune.sh-style build has werror on already"
out=$(cd "$src" && scripts/werror-build.sh "$tmp/b" 2>&1) || fail "werror-build.sh: exit $?: $out"
[ "$(werror_of "$tmp/b")" = True ] || fail "werror-build.sh left werror off: $out"
case "$out" in *"without -Dwerror=true"*) ;; *) fail "werror-build.sh did not say it reconfigured: $out" ;; esac
out=$(cd "$src" && scripts/werror-build.sh "$tmp/b" 2>&1) || fail "werror-build.sh again: exit $?"
case "$out" in *"reconfiguring"*) fail "werror-build.sh reconfigured a -Werror build: $out" ;; esac
grep -q 'scripts/werror-build.sh' "$src/scripts/test.sh" || fail "scripts/test.sh does not use werror-build.sh"

# deps.sh: every package "missing", apt noisy; quiet when it works, loud when it fails
mkdir "$tmp/shim"
cat >"$tmp/shim/dpkg-query" <<'SH'
#!/bin/sh
exit 1
SH
cat >"$tmp/shim/apt-get" <<'SH'
#!/bin/sh
echo "apt noise: Reading package lists... $*"
echo "apt noise on stderr" >&2
[ -z "$FAKE_APT_FAIL" ] || case "$*" in *install*) echo "E: Unable to locate package x"; exit 100 ;; esac
exit 0
SH
cat >"$tmp/shim/sudo" <<'SH'
#!/bin/sh
exec "$@"
SH
chmod +x "$tmp/shim/"*
out=$(PATH="$tmp/shim:$PATH" FAKE_APT_FAIL= "$src/scripts/deps.sh" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "deps.sh, apt works: exit $rc: $out"
case "$out" in *"apt noise"*) fail "deps.sh, apt works: apt's output shown: $out" ;; esac
case "$out" in *"deps.sh: installing"*) ;; *) fail "deps.sh did not say what it installs: $out" ;; esac
out=$(PATH="$tmp/shim:$PATH" FAKE_APT_FAIL=1 "$src/scripts/deps.sh" 2>&1)
rc=$?
[ $rc -ne 0 ] || fail "deps.sh, apt fails: exit 0"
case "$out" in *"Unable to locate package"*"apt noise"*|*"apt noise"*"Unable to locate package"*) ;;
	*) fail "deps.sh, apt fails: apt's output not shown: $out" ;; esac
ls "${TMPDIR:-/tmp}"/nccltune-deps-*.log >/dev/null 2>&1 && fail "deps.sh left its log behind"

[ $fails -eq 0 ] || { echo "$fails check(s) failed" >&2; exit 1; }
echo "all checks passed"
