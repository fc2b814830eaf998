#!/bin/sh
# retune.sh - re-tune NCCL on this machine when it changed since the session in use, for
# cron or a server's start script; retune.service runs it before the server starts.
# `meson install` installs it as BINDIR/nccltune-retune (/usr/local/bin/nccltune-retune
# with the default prefix, which retune.service runs). It is `nccltune retune`, which
#
#   takes STATE/lock (a second run at the same time does nothing, exit 1);
#   runs `nccltune check STATE/current` with that session's own probe:
#     unchanged          -> nothing to do (exit 0);
#     cannot measure     -> no GPU, a driver error, a failing probe: nothing changes (1);
#     changed            -> a new session STATE/sessions/<UTC time> with the probe, space
#                           and workload recorded in STATE/current, warm-started from it;
#                           installed into PYTHON (a .pth in its own site-packages) only
#                           when measured and shown faster than NCCL's defaults; then
#                           STATE/current is relinked to it and STATE/previous to the old.
# Once, by hand, after the first tuning session (whose result you installed):
#   sudo cp -r SESSION_DIR /var/lib/nccltune-first   (retune trusts only root's)
#   nccltune retune --init /var/lib/nccltune --from /var/lib/nccltune-first
# The server must start after it (NCCL reads its variables once per process), and the
# probe needs the GPUs: run this only while the server is stopped.
#
# Settings (environment): NCCLTUNE_STATE (default /var/lib/nccltune); NCCLTUNE_PYTHON,
# the interpreter that runs the server (required: a venv's, e.g. /opt/sglang/.venv/bin/
# python; the system's python3 would put the tuned environment into every program it
# runs, which nccltune does only with --system, never by default). Variables the first
# session had pinned from its environment must be set here too (retune refuses
# otherwise).
set -u
STATE=${NCCLTUNE_STATE:-/var/lib/nccltune}
if [ -z "${NCCLTUNE_PYTHON:-}" ]; then
	echo "nccltune-retune: set NCCLTUNE_PYTHON to the interpreter that runs the server (its venv's python)" >&2
	exit 2
fi
exec nccltune retune --quiet --python "$NCCLTUNE_PYTHON" "$STATE"
