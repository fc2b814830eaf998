"""test_orphans.py - a tuner killed outright (SIGKILL) takes the probe it had in flight
with it: the runner sets a parent-death signal in every probe it starts, so a hung probe
does not keep holding GPUs until someone notices."""
import os
import signal
import time

from rel import (check, check_no_leftovers, clean_env, finish, probe, require_programs,
                 start_tuner, tagged_pids, tmpdir, unique_tag)

require_programs()
work = tmpdir("orphans")
tag = unique_tag("orphans")
# Every search run hangs; the baseline too (mode applies to every run).
cmd = probe(tag, os.path.join(work, "probe.log"), mode="hang")
tuner = start_tuner(["run", "--probe", cmd, "--budget", "4", "--timeout", "60",
                     "--out", os.path.join(work, "session"), "--seed", "1"], env=clean_env())
# Wait for the hanging run itself, not the short --fingerprint run before it: the same
# probe process alive for a whole second.
deadline = time.time() + 20
seen, since = None, time.time()
while time.time() < deadline:
    pids = tagged_pids(tag)
    if pids and pids == seen and time.time() - since >= 1.0:
        break
    if pids != seen:
        seen, since = pids, time.time()
    time.sleep(0.05)
check(seen and tagged_pids(tag) == seen, "the hanging probe never started")
os.kill(tuner.pid, signal.SIGKILL)
tuner.wait(timeout=10)
check(tuner.returncode == -signal.SIGKILL, "tuner was not killed", tuner.returncode)
# The probe must die with the tuner, long before its 60 s deadline.
check_no_leftovers(tag, grace_s=3.0)
finish()
