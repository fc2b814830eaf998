#!/bin/sh
# test_retune.sh - examples/retune.sh with a fake `nccltune` on PATH: nothing happens when
# check says unchanged (0); on changed (3) a warm-started run, an install and a relink
# follow, in that order; a failing check stops it with the check's status.
set -eu
SCRIPT=$NCCLTUNE_SOURCE_ROOT/examples/retune.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir "$T/bin" "$T/sessions" "$T/sessions/old"
ln -s "$T/sessions/old" "$T/sessions/current"
cat > "$T/bin/nccltune" <<'EOF2'
#!/bin/sh
echo "$*" >> "$FAKE_LOG"
case $1 in
check) exit "$FAKE_CHECK" ;;
run) for a; do last=$a; done; mkdir -p "$last" ;;
esac
exit 0
EOF2
chmod +x "$T/bin/nccltune"
export FAKE_LOG="$T/log" NCCLTUNE_SESSIONS="$T/sessions" NCCLTUNE_PYTHON=/opt/py
PATH="$T/bin:$PATH"

FAKE_CHECK=0 sh "$SCRIPT" || fail "unchanged: status $?"
[ "$(cat "$T/log")" = "check $T/sessions/current" ] || fail "unchanged ran: $(cat "$T/log")"

: > "$T/log"
rc=0
FAKE_CHECK=1 sh "$SCRIPT" 2>/dev/null || rc=$?
[ "$rc" = 1 ] || fail "probe failure: status $rc"
[ "$(wc -l < "$T/log")" = 1 ] || fail "probe failure ran more: $(cat "$T/log")"

: > "$T/log"
FAKE_CHECK=3 sh "$SCRIPT" > "$T/out" || fail "changed: status $?"
new=$(readlink "$T/sessions/current")
case $new in "$T/sessions/"2*Z) ;; *) fail "current -> $new" ;; esac
cat > "$T/want" <<EOF2
check $T/sessions/current
run --warm-start $T/sessions/current --workload $T/sessions/workload.json --out $new
export --format sitecustomize --install --python /opt/py $new
EOF2
diff "$T/want" "$T/log" || fail "changed: calls"
grep -q "restart the server" "$T/out" || fail "changed: no restart note"
echo "retune: ok"
