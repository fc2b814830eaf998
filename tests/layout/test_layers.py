#!/usr/bin/env python3
"""test_layers.py - the layout of docs/architecture.md, checked on the source tree.

Every include and every call between the tuner's stage folders points down (to an earlier stage or the
same one); the CLI sees only include/nccltune.h; common/ and plugin/ see nothing of the
tuner; the probes see no tuner header. Inside tuner/session/ the files call each other in
one order too (SESSION_FILES), and the printer and the headers below the handle do not see
it (session_priv.h). No two files of one folder call each other, directly or round a
longer loop. Exits 1 naming each include or call that
breaks a rule."""
import glob
import os
import re
import subprocess
import sys

STAGES = ["space", "run", "search", "result", "decide", "workflows", "session"]
# tuner/session/, bottom up: a file calls only itself and the files before it, so the
# printer (progress) never calls back into the loop or the journal writer.
SESSION_FILES = ["runs", "notes", "decide_view", "progress", "server", "header_read", "sweep_record", "session_record", "probe_lost", "execute", "sweep_run", "prepare",
                 "twolevel", "sizes", "results", "exports", "loop", "session", "retune"]
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


# Circles between the files of one folder (file A calls B and B calls A, or a longer
# loop): a file that holds a module's shared bottom and its top, whose split-off siblings
# call back into the bottom. None is left (issue 29 broke the last three by taking each
# module's bottom out of the file that holds its top): keep this list empty.
ALLOWED_CIRCLES = []
# the objects of each folder (the tuner's are named STAGE_FILE.c.o, one library)
OBJECT_DIRS = ["tuner/libnccltune.a.p", "probe/*.p", "models/*.p", "common/*.p", "plugin/*.p",
               "cli/*.p"]


def object_file(build, o):
    """The source file ("folder/file.c") an object was compiled from, or None."""
    rel = os.path.relpath(o, build).split(os.sep)
    base = os.path.basename(o)[:-len(".o")]
    if base.startswith("meson-generated") or not base.endswith(".c"):
        return None
    if rel[0] == "tuner":
        stage, _, rest = base.partition("_")
        return f"{stage}/{rest}"
    return f"{rel[0]}/{base}"


def strongly_connected(graph):
    """Tarjan's components of graph (node -> set of nodes) with more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check_circles(build):
    """No circle of calls between the files of one folder (nm's view), but those of
    ALLOWED_CIRCLES; an allowed circle that is gone is noted, to be removed."""
    defined, wanted = {}, {}
    for pattern in OBJECT_DIRS:
        for o in sorted(glob.glob(os.path.join(build, pattern, "*.o"))):
            f = object_file(build, o)
            if not f:
                continue
            out = subprocess.run(["nm", "-P", o], capture_output=True, text=True, check=True)
            for line in out.stdout.splitlines():
                name, kind = line.split()[:2]
                if kind in "TDBR":
                    defined.setdefault(name, f)
                elif kind == "U":
                    wanted.setdefault(f, set()).add(name)
    graph = {}
    for f, names in wanted.items():
        for n in names:
            d = defined.get(n)
            if d and d != f and os.path.dirname(d) == os.path.dirname(f):
                graph.setdefault(f, set()).add(d)
    bad = []
    circles = strongly_connected(graph)
    for c in circles:
        if c not in ALLOWED_CIRCLES:
            bad.append("a circle of calls between " + ", ".join(sorted(c)) + ": split each "
                       "module's bottom (what its siblings share) from its top (the flow that "
                       "calls them), so that calls go one way")
    for c in ALLOWED_CIRCLES:
        if c not in circles:
            print("note: ALLOWED_CIRCLES of test_layers.py holds " + ", ".join(sorted(c)) +
                  ", no longer a circle: remove it")
    return bad


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ["NCCLTUNE_SOURCE_ROOT"]
    bad = check(root)
    if len(sys.argv) > 2:
        bad += check_calls(sys.argv[2])
        bad += check_circles(sys.argv[2])
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"layout: every include and call points down ({len(STAGES)} tuner stages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
