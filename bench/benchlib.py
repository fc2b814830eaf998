"""benchlib.py - what bench scripts share (sweep_regret.py, unattended.py): their one
error type and the environment their sessions and probes run in (the caller's, less
every NCCL_* and NCCLTUNE_* variable, so a tuned environment of the machine cannot leak
into a measurement)."""
import os


class BenchError(Exception):
    """A step of a benchmark that could not run; the script says it and exits 1."""


def clean_env(extra=None):
    """os.environ without NCCL_* and NCCLTUNE_* variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NCCL_") and not k.startswith("NCCLTUNE_")}
    env.update(extra or {})
    return env
