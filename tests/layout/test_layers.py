#!/usr/bin/env python3
"""test_layers.py - the layout of docs/architecture.md, checked on the source tree.

Every include and every call between the tuner's stage folders points down (to an earlier stage or the
same one); the CLI sees only include/nccltune.h; common/ and plugin/ see nothing of the
tuner; the probes see no tuner header. Inside tuner/session/ the files call each other in
one order too (SESSION_FILES), and the printer and the headers below the handle do not see
it (session_priv.h). Exits 1 naming each include or call that breaks a rule."""
import glob
import os
import re
import subprocess
import sys

STAGES = ["space", "run", "search", "result", "workflows", "session"]
# tuner/session/, bottom up: a file calls only itself and the files before it, so the
# printer (progress) never calls back into the loop or the journal writer.
SESSION_FILES = ["runs", "notes", "progress", "server", "header_read", "sweep_record", "session_record", "execute", "sweep_run", "prepare",
                 "final", "twolevel", "sizes", "ablate", "results", "exports", "loop", "session", "retune"]
# What may not include the handle's insides: the printer and the headers it includes.
SESSION_BLIND = ["progress.c", "progress.h", "runs.h", "notes.h"]
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
                                   "ncclvars.h", "jsonread.h", "table.h", "sweep.h"):
                        bad.append(f"{p}: \"{inc}\": name the stage (\"{stage}/{inc}\")")
                    continue
                if head not in STAGES:
                    bad.append(f"{p}: \"{inc}\": no such stage")
                elif STAGES.index(head) > rank:
                    bad.append(f"{p}: \"{inc}\": {stage} may not include the later stage {head}")
    for name in SESSION_BLIND:
        p = os.path.join(root, "tuner", "session", name)
        if os.path.exists(p) and "session/session_priv.h" in includes(p):
            bad.append(f"{p}: \"session/session_priv.h\": the printer and the headers below the "
                       "handle see only what they are handed")
    for p in sources(root, os.path.join("tuner", "session")):
        stem = os.path.basename(p).rsplit(".", 1)[0]
        if p.endswith(".c") and stem not in SESSION_FILES:
            bad.append(f"{p}: not in SESSION_FILES of test_layers.py: give it its place")
    for p in sources(root, "cli"):
        for inc in includes(p):
            # its own header (cli/cli.h: the tables' rows), else the public API only
            if inc not in ("nccltune.h", "nccltune_config.h", "cli.h"):
                bad.append(f"{p}: \"{inc}\": the CLI sees only include/nccltune.h")
    for folder in ("common", "plugin", "probe", "models"):
        for p in sources(root, folder):
            for inc in includes(p):
                if inc.split("/")[0] in STAGES or inc in tuner_headers:
                    bad.append(f"{p}: \"{inc}\": {folder}/ may not see the tuner")
    return bad


def check_calls(build):
    """No object of a stage calls a function defined by a later stage, and no file of
    tuner/session/ one of a later file of it (nm's view)."""
    objs = sorted(glob.glob(os.path.join(build, "tuner", "libnccltune.a.p", "*.o")))
    if not objs:
        return [f"{build}: no objects of libnccltune to check"]
    defined, wanted = {}, {}
    for o in objs:
        base = os.path.basename(o)
        stage = base.split("_")[0]
        if base.startswith("meson-generated"):
            # generated sources: the embedded server profiles belong to run/profile.c
            if "profiles_builtin" not in base:
                continue
            stage = "run"
        where = (stage, base[len("session_"):].split(".")[0] if stage == "session" else None)
        out = subprocess.run(["nm", "-P", o], capture_output=True, text=True, check=True)
        for line in out.stdout.splitlines():
            name, kind = line.split()[:2]
            if kind in "TDBR":
                defined[name] = where
            elif kind == "U":
                wanted.setdefault(o, (where, []))[1].append(name)
    bad = []
    for o, ((stage, file), names) in wanted.items():
        for n in names:
            if n not in defined:
                continue
            dstage, dfile = defined[n]
            if STAGES.index(dstage) > STAGES.index(stage):
                bad.append(f"{o}: calls {n} of the later stage {dstage}")
            elif stage == "session" == dstage and file in SESSION_FILES and \
                    dfile in SESSION_FILES and \
                    SESSION_FILES.index(dfile) > SESSION_FILES.index(file):
                bad.append(f"{o}: calls {n} of {dfile}.c, after it in SESSION_FILES")
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
