#!/bin/bash
# test_cli.sh - the nccltune command line: option errors exit 2 with a clear message,
# --help lists every option, a session through the CLI with show/export/report, and
# SIGINT/SIGTERM -> exit 130 with a resumable folder.
# Usage: test_cli.sh NCCLTUNE FAKEPROBE
set -u
NT=$1
FAKE=$2
failures=0
tmp=$(mktemp -d /tmp/nccltune-cli-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# a session started without --out (a mistake, or a mutation under test) stays in $tmp
export XDG_STATE_HOME="$tmp/xdg-state"

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# expect CODE NEEDLE ARGS...: exit status CODE and NEEDLE in stderr+stdout.
expect() {
	local code=$1 needle=$2
	shift 2
	local out rc
	out=$("$NT" "$@" 2>&1)
	rc=$?
	[ "$rc" -eq "$code" ] || fail "nccltune $*: exit $rc, want $code; output: $out"
	case "$out" in
	*"$needle"*) ;;
	*) fail "nccltune $*: output lacks '$needle': $out" ;;
	esac
}

# Option errors: exit 2 and a message naming the option.
expect 2 "missing command"
expect 2 "unknown command 'frobnicate'" frobnicate
expect 2 "unknown option '--bogus'" run --bogus
expect 2 "option --budget needs a value" run --budget
expect 2 "--budget: 'abc' is not an integer" run --budget abc
expect 2 "--budget: 1 is not in 2..100000" run --budget 1 --probe "$FAKE"
expect 2 "--probe and --model are exclusive" run --probe x --model y
expect 2 "--workload and --bytes/--ops/--dtype are exclusive" run --workload w.json --bytes 1024
expect 2 "--time-limit: '5x' is not a duration" run --time-limit 5x
expect 2 "--timeout: 'soon'" run --timeout soon
expect 2 "--ops: '0'" run --ops 0
expect 2 "--bytes: 'lots' is not a byte count" run --bytes lots
expect 2 "--dtype: 'int8'" run --dtype int8
expect 2 "unknown strategy 'magic'" run --strategy magic
expect 2 "--seed: '-1'" run --seed -1
expect 2 "--budget: 'lots' is not an integer" run --resume "$tmp/x" --budget lots
expect 2 "--resume takes no --seed" run --resume "$tmp/x" --seed 5
expect 2 "/nonexistent/space.json" run --space /nonexistent/space.json
expect 2 "unexpected argument 'extra'" run extra
expect 2 "--probe: unterminated single quote" run --probe "probe 'x"
expect 2 "no journal.jsonl" run --resume "$tmp/nothing-here"
expect 2 "missing --format" export "$tmp/s"
expect 2 "unknown format 'pdf'" export --format pdf "$tmp/s"
expect 2 "missing SESSION_DIR" show
expect 2 "unexpected argument 'b'" report a b
expect 2 "--install writes the pth files, or the sitecustomize or the nccl-conf block" export --format shell --install "$tmp/s"

# No silent prefix matching (getopt_long would take --bud for --budget), "did you mean"
# for a near option or command; a value that looks like an option is a value.
expect 2 "unknown option '--bud'; did you mean --budget?" run --bud 4
expect 2 "unknown option '--budgte'; did you mean --budget?" run --budgte 4
expect 2 "unknown option '--out-dir'; did you mean --out?" run --out-dir x
expect 2 "unknown option '--instal'; did you mean --install?" export --instal x
expect 2 "unknown option '--zzzzzz'" run --zzzzzz
expect 2 "unknown command 'rn'; did you mean 'run'?" rn
expect 2 "unknown command 'sho'; did you mean 'show'?" sho x
expect 2 "--try '--bud'" run --try --bud --budget 4 --out "$tmp/never"
[ -e "$tmp/never" ] && fail "a refused command line created its --out"

# --json: one object on stdout whatever happens, a usage error included (status 2)
for args in "--bud 4" "--budget 1 --model pcie-gen5-8gpu" "--probe x --model y" "extra"; do
	# shellcheck disable=SC2086
	js=$("$NT" run --json $args 2>/dev/null)
	rc=$?
	printf '%s' "$js" | python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
assert o["schema"] == "nccltune-run/1" and o["status"] == 2 and o["error"], o
assert o["session"] is None and o["verdict"] is None, o' ||
		fail "run --json $args: not one object with status 2 and the error: $js"
	[ $rc -eq 2 ] || fail "run --json $args: exit $rc"
done

# --help: the commands and every exit code, once; COMMAND --help: that command's options
# and only the exit codes it returns; every line fits 79 columns; --model lists the
# built-in models; the man page comes from the same tables.
help=$("$NT" --help)
[ $? -eq 0 ] || fail "--help: non-zero exit"
for c in run export uninstall check retune show report 130; do
	case "$help" in *"$c"*) ;; *) fail "--help does not mention $c" ;; esac
done
[ "$(printf '%s\n' "$help" | grep -c '^Exit codes:')" = 1 ] || fail "--help: exit codes not once"
printf '%s\n' "$help" | grep -q '^  --budget' && fail "--help lists run's options"
run_help=$("$NT" run --help)
for o in probe model space workload bytes ops dtype budget time-limit seed strategy timeout \
         out warm-start resume quiet json guard try; do
	case "$run_help" in *"--$o "*) ;; *) fail "run --help does not list --$o" ;; esac
done
for m in pcie-gen5-8gpu nvlink-h200-8gpu pcie-4gpu-switch pcie-2x4-islands h200-nvlink-2gpu; do
	case "$run_help" in *"$m"*) ;; *) fail "run --help: --model does not list $m" ;; esac
done
printf '%s\n' "$run_help" | grep -q '^  130  ' || fail "run --help: no exit code 130"
printf '%s\n' "$run_help" | grep -q '^    3  ' && fail "run --help: check's exit code 3"
show_help=$("$NT" show --help)
printf '%s\n' "$show_help" | grep -Eq '^ +(3|4|130)  ' && fail "show --help: exit codes show never returns"
printf '%s\n' "$("$NT" check --help)" | grep -q '^    3  ' || fail "check --help: no exit code 3"
printf '%s\n' "$("$NT" uninstall --help)" | grep -q 'shell' && fail "uninstall --help: a format it cannot take"
for c in "" run export uninstall check retune show report; do
	# shellcheck disable=SC2086
	long=$("$NT" $c --help | awk 'length > 79')
	[ -z "$long" ] || fail "nccltune $c --help: lines over 79 columns: $long"
done
expect 0 "when a GPU is visible" run --help
expect 0 "Exit codes" export --help
man=$("$NT" help --man)
case "$man" in .TH\ NCCLTUNE\ 1*) ;; *) fail "help --man: not a man page: ${man:0:200}" ;; esac
for o in budget time-limit warm-start install allow-model init; do
	case "$man" in *"\-\-$(printf '%s' "$o" | sed 's/-/\\-/g')"*) ;; *) fail "man page: no --$o" ;; esac
done
expect 0 "nccltune 0." --version

# A whole session through the CLI, then what users do with it.
out=$("$NT" run --probe "$FAKE" --budget 20 --strategy random --seed 2 --out "$tmp/s" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "run: exit $rc: $out"
case "$out" in *"nccltune export --format shell $tmp/s"*) ;; *) fail "run: no export hint: $out" ;; esac
[ -f "$tmp/s/results.json" ] || fail "run: no results.json"
expect 0 "export NCCL_" export --format shell "$tmp/s"
expect 0 "NCCL_" export --format json "$tmp/s/results.json"
expect 0 "" show "$tmp/s"
expect 0 "report.html" report "$tmp/s"
expect 2 "already holds a session" run --probe "$FAKE" --budget 4 --out "$tmp/s"
# export --install takes PATH before or after the session (the one with a results.json)
mkdir -p "$tmp/inst"
expect 0 "installed the tuned environment into $tmp/inst/a.conf" export --install \
	--format nccl-conf "$tmp/s" "$tmp/inst/a.conf"
expect 0 "installed the tuned environment into $tmp/inst/b.conf" export --install \
	--format nccl-conf "$tmp/inst/b.conf" "$tmp/s"
grep -q "^NCCL_" "$tmp/inst/a.conf" || fail "export --install SESSION PATH: $(cat "$tmp/inst/a.conf")"
expect 2 "neither '$tmp/inst/c' nor '$tmp/inst/d' holds a results.json" export --install \
	--format nccl-conf "$tmp/inst/c" "$tmp/inst/d"

# Without --out the session goes to $XDG_STATE_HOME/nccltune/HOST-UTCSTAMP (else
# ~/.local/state/nccltune/...), never under the current folder (a clone's results/).
mkdir -p "$tmp/cwd" "$tmp/home"
(cd "$tmp/cwd" && XDG_STATE_HOME="$tmp/state" "$NT" run --probe "$FAKE" --budget 4 --quiet) ||
	fail "run without --out failed"
ls "$tmp"/state/nccltune/*-[0-9]*-[0-9]*/results.json >/dev/null 2>&1 ||
	fail "no \$XDG_STATE_HOME/nccltune/HOST-STAMP/results.json: $(ls -R "$tmp/state" 2>&1)"
[ -z "$(ls -A "$tmp/cwd")" ] || fail "run without --out wrote into the current folder: $(ls -A "$tmp/cwd")"
(cd "$tmp/cwd" && env -u XDG_STATE_HOME HOME="$tmp/home" "$NT" run --probe "$FAKE" --budget 4 \
	--quiet) || fail "run without --out (HOME) failed"
ls "$tmp"/home/.local/state/nccltune/*-[0-9]*-[0-9]*/results.json >/dev/null 2>&1 ||
	fail "no ~/.local/state/nccltune/HOST-STAMP/results.json: $(ls -R "$tmp/home" 2>&1)"
# A relative XDG_STATE_HOME is ignored, as the XDG spec says
(cd "$tmp/cwd" && XDG_STATE_HOME=rel HOME="$tmp/home" "$NT" run --probe "$FAKE" --budget 4 \
	--quiet) || fail "run with a relative XDG_STATE_HOME failed"
[ ! -e "$tmp/cwd/rel" ] || fail "a relative XDG_STATE_HOME was used"
# An --out folder that holds files but no session is refused, and left as it was
mkdir -p "$tmp/notes" && echo mine >"$tmp/notes/todo.txt"
expect 2 "holds no session" run --probe "$FAKE" --budget 4 --quiet --out "$tmp/notes"
[ "$(ls -A "$tmp/notes")" = todo.txt ] || fail "a refused --out was changed: $(ls -A "$tmp/notes")"
# ... an empty one is used
mkdir -p "$tmp/empty"
expect 0 "" run --probe "$FAKE" --budget 4 --quiet --out "$tmp/empty"

# --guard: its errors name --guard (not the --bytes parser's option) and say what it
# takes; 'none' turns the per-size default ladder off (the header records no guard)
for g in 0 "" 12x; do
	out=$("$NT" run --model pcie-gen5-8gpu --guard "$g" --budget 4 --out "$tmp/g" 2>&1)
	[ $? -eq 2 ] || fail "--guard '$g': not refused: $out"
	case "$out" in *"--bytes"*) fail "--guard '$g': names --bytes: $out" ;; esac
	case "$out" in *"--guard: "*"'none' for no guard sizes"*) ;; *) fail "--guard '$g': $out" ;; esac
done
expect 0 "" run --model pcie-gen5-8gpu --guard none --budget 4 --quiet --out "$tmp/g-none"
head -n 1 "$tmp/g-none/journal.jsonl" | grep -q '"guard"' &&
	fail "--guard none: the header has guards: $(head -n 1 "$tmp/g-none/journal.jsonl")"
expect 0 "" run --model pcie-gen5-8gpu --budget 4 --quiet --out "$tmp/g-default"
head -n 1 "$tmp/g-default/journal.jsonl" | grep -q '"guard":\[1048576,16777216,134217728\]' ||
	fail "no --guard: not the default ladder: $(head -n 1 "$tmp/g-default/journal.jsonl")"

# A probe that fails every run: exit 4. One that refuses its command line (the
# baseline fails at stage args) stops at once: exit 2, and the probe command is split
# like a shell.
FAKEPROBE_MODE=init expect 4 "no configuration worked" run --probe "'$FAKE'" --budget 4 \
	--quiet --out "$tmp/none"
# (its baseline failed, but so did 3 more runs: a session, kept)
expect 2 "already holds a session" run --probe "$FAKE" --budget 4 --quiet --out "$tmp/none"
expect 2 "the probe refused its command line" run --probe "'$FAKE' --bogus yes" --budget 4 \
	--quiet --out "$tmp/bogus"
# A folder whose only run is a failed baseline (an unknown --model, a broken driver) is
# not a session: resuming it says so (exit 2) instead of replaying the failure, and a new
# run with the same --out starts anew once the cause is fixed.
expect 2 "the probe refused its command line" run --model nosuch --budget 4 --out "$tmp/dead"
expect 2 "nothing to resume: its only run, NCCL's defaults, failed" run --resume "$tmp/dead"
expect 0 "starting the session anew" run --model pcie-gen5-8gpu --budget 4 --out "$tmp/dead"
[ "$(grep -c '"type":"run"' "$tmp/dead/journal.jsonl")" -ge 2 ] || fail "dead folder: not run anew"
grep -q nosuch "$tmp/dead/journal.jsonl" && fail "dead folder: the old journal is still there"
# ... but a session that measured something is still refused and resumable
expect 2 "already holds a session" run --model pcie-gen5-8gpu --budget 4 --out "$tmp/dead"
# A budget too small to recommend anything says so after the baseline (also with
# --quiet), not only at the end; one large enough does not
expect 0 "warning: --budget 12 is too small to measure the best against NCCL's defaults twice" \
	run --model pcie-gen5-8gpu --budget 12 --quiet --out "$tmp/b12"
out=$("$NT" run --model pcie-gen5-8gpu --budget 20 --quiet --out "$tmp/b20" 2>&1)
case "$out" in *"too small"*) fail "--budget 20: warned: $out" ;; esac
# A probe that cannot start: exit 1 before anything runs.
expect 1 "cannot start the probe" run --probe /nonexistent/probe --out "$tmp/nostart" --quiet

# SIGINT and SIGTERM: exit 130, journal intact, resumable to the end of the budget.
for sig in INT TERM; do
	dir="$tmp/sig-$sig"
	FAKEPROBE_SLEEP_MS=80 "$NT" run --probe "$FAKE" --budget 30 --strategy random \
		--out "$dir" --quiet 2>"$tmp/sig.err" &
	pid=$!
	# Interrupt once a run is recorded, whatever the machine's speed.
	for _ in $(seq 1 600); do
		grep -q '"type":"run"' "$dir/journal.jsonl" 2>/dev/null && break
		sleep 0.05
	done
	kill -s "$sig" "$pid"
	wait "$pid"
	rc=$?
	[ $rc -eq 130 ] || fail "SIG$sig: exit $rc, want 130"
	# (nccltune is not in PATH here: the hint names the program by its path)
	grep -q "interrupted; resume with: $(readlink -f "$NT") run --resume $dir" "$tmp/sig.err" ||
		fail "SIG$sig: no resume hint: $(cat "$tmp/sig.err")"
	[ -f "$dir/results.json" ] && fail "SIG$sig: results.json written by an interrupted session"
	# Intact: ends with a newline, starts with the header, 1..29 run records.
	[ "$(tail -c 1 "$dir/journal.jsonl" | od -An -c | tr -d ' ')" = '\n' ] ||
		fail "SIG$sig: journal's last line is not terminated"
	head -n 1 "$dir/journal.jsonl" | grep -q '"type":"session"' ||
		fail "SIG$sig: journal has no header"
	n=$(grep -c '"type":"run"' "$dir/journal.jsonl")
	[ "$n" -ge 1 ] && [ "$n" -lt 30 ] || fail "SIG$sig: $n runs recorded"
	# Resuming reads the journal strictly, runs the rest, writes the results.
	"$NT" run --resume "$dir" --quiet || fail "SIG$sig: resume failed"
	n=$(grep -c '"type":"run"' "$dir/journal.jsonl")
	[ "$n" -le 30 ] || fail "SIG$sig: $n runs, over the budget of 30"
	grep -q "\"evaluations\":[[:space:]]*$n," "$dir/results.json" ||
		fail "SIG$sig: results.json does not count the $n runs"
	[ "$(grep -o '"run":[0-9]*' "$dir/journal.jsonl" | cut -d: -f2 | tr '\n' ' ')" = \
	  "$(seq -s ' ' 1 "$n") " ] || fail "SIG$sig: run numbers are not 1..$n"
done

[ $failures -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "all CLI checks passed"
