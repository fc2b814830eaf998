#!/bin/sh
# retune.sh - re-tune NCCL on this machine when it changed since the session in use.
# Run by retune.service (systemd) or cron; install as /usr/local/bin/nccltune-retune.
#
#   nccltune check CURRENT   0: unchanged -> nothing to do
#                            3: driver/CUDA/NCCL/GPUs/topology changed -> re-tune:
#                               a new session warm-started from CURRENT, its environment
#                               installed into PYTHON's sitecustomize, CURRENT relinked
#                            1: the probe could not run; 2: CURRENT is not a session
# The server must be restarted afterwards: NCCL reads its variables once per process.
#
# Settings (environment): NCCLTUNE_SESSIONS (default /var/lib/nccltune), where sessions
# live, with CURRENT = $NCCLTUNE_SESSIONS/current a symlink to the one in use;
# NCCLTUNE_WORKLOAD, the workload file (default $NCCLTUNE_SESSIONS/workload.json);
# NCCLTUNE_PYTHON, the interpreter that runs the server (default python3).
set -u
SESSIONS=${NCCLTUNE_SESSIONS:-/var/lib/nccltune}
CURRENT=$SESSIONS/current
WORKLOAD=${NCCLTUNE_WORKLOAD:-$SESSIONS/workload.json}
PYTHON=${NCCLTUNE_PYTHON:-python3}

nccltune check "$CURRENT"
rc=$?
case $rc in
0) exit 0 ;;
3) ;;
*) echo "retune: nccltune check $CURRENT failed with status $rc" >&2; exit "$rc" ;;
esac
new=$SESSIONS/$(date -u +%Y%m%dT%H%M%SZ)
nccltune run --warm-start "$CURRENT" --workload "$WORKLOAD" --out "$new" || exit $?
nccltune export --format sitecustomize --install --python "$PYTHON" "$new" || exit $?
ln -sfn "$new" "$CURRENT.new" && mv -T "$CURRENT.new" "$CURRENT" || exit $?
echo "retune: re-tuned into $new; restart the server to use it"
