#!/usr/bin/env python3
"""test_layers.py - the layout of docs/architecture.md, checked on the source tree.

Every include and every call between the tuner's stage folders points down (to an earlier stage or the
same one); the CLI sees only include/nccltune.h; common/ and plugin/ see nothing of the
tuner; the probes see no tuner header. Exits 1 naming each include that breaks a rule."""
import glob
import os
import re
import subprocess
import sys

STAGES = ["space", "run", "search", "result", "workflows", "session"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def includes(path):
    with open(path, encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def sources(root, folder):
    for dp, _, files in os.walk(os.path.join(root, folder)):
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                yield os.path.join(dp, name)


def check(root):
    bad = []
    tuner_headers = set()
    for stage in STAGES:
        for p in sources(root, os.path.join("tuner", stage)):
            if p.endswith(".h"):
                tuner_headers.add(os.path.basename(p))
    for stage in STAGES:
        rank = STAGES.index(stage)
        for p in sources(root, os.path.join("tuner", stage)):
            for inc in includes(p):
                head = inc.split("/")[0]
                if "/" not in inc:
                    if inc not in ("nccltune.h", "nccltune_config.h", "fsutil.h", "proto.h",
                                   "ncclvars.h", "jsonread.h", "table.h"):
                        bad.append(f"{p}: \"{inc}\": name the stage (\"{stage}/{inc}\")")
                    continue
                if head not in STAGES:
                    bad.append(f"{p}: \"{inc}\": no such stage")
                elif STAGES.index(head) > rank:
                    bad.append(f"{p}: \"{inc}\": {stage} may not include the later stage {head}")
    for p in sources(root, "cli"):
        for inc in includes(p):
            if inc not in ("nccltune.h", "nccltune_config.h"):
                bad.append(f"{p}: \"{inc}\": the CLI sees only include/nccltune.h")
    for folder in ("common", "plugin", "probe", "models"):
        for p in sources(root, folder):
            for inc in includes(p):
                if inc.split("/")[0] in STAGES or inc in tuner_headers:
                    bad.append(f"{p}: \"{inc}\": {folder}/ may not see the tuner")
    return bad


def check_calls(build):
    """No object of a stage calls a function defined by a later stage (nm's view)."""
    objs = sorted(glob.glob(os.path.join(build, "tuner", "libnccltune.a.p", "*.o")))
    if not objs:
        return [f"{build}: no objects of libnccltune to check"]
    defined, wanted = {}, {}
    for o in objs:
        stage = os.path.basename(o).split("_")[0]
        out = subprocess.run(["nm", "-P", o], capture_output=True, text=True, check=True)
        for line in out.stdout.splitlines():
            name, kind = line.split()[:2]
            if kind in "TDBR":
                defined[name] = stage
            elif kind == "U":
                wanted.setdefault(o, (stage, []))[1].append(name)
    bad = []
    for o, (stage, names) in wanted.items():
        for n in names:
            if n in defined and STAGES.index(defined[n]) > STAGES.index(stage):
                bad.append(f"{o}: calls {n} of the later stage {defined[n]}")
    return bad


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ["NCCLTUNE_SOURCE_ROOT"]
    bad = check(root)
    if len(sys.argv) > 2:
        bad += check_calls(sys.argv[2])
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"layout: every include and call points down ({len(STAGES)} tuner stages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
