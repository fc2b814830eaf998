#!/usr/bin/env python3
"""test_sizes.py - the size rules of docs/architecture.md, checked on the source tree.

A production C file under tuner/ has at most MAX_FILE_LINES lines (one job per file), and
no production function (tuner/, common/, probe/, models/, cli/, plugin/) is longer than
MAX_FUNCTION_LINES lines unless the comment block right above it says why, with the
words "Long because". A function's length runs from its opening brace in column 0 to
its closing brace in column 0, both counted. Exits 1 naming each file and function that
breaks a rule; notes each entry of the allow-lists that no longer needs to be there.
`test_sizes.py ROOT --list` prints every function's length."""
import os
import re
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120
FOLDERS = ("tuner", "common", "probe", "models", "cli", "plugin")
REASON = "Long because"

# Known exceptions. THESE LISTS ARE TO SHRINK: remove an entry when its file or function
# is under the rule (the test notes each entry that no longer needs to be here), and never
# add one for new code: split its bottom from its top, or write the reason above it.
ALLOWED_LONG_FILES = set()       # none left: every file is under the rule
ALLOWED_LONG_FUNCTIONS = set()   # none left: every function is under the rule

NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")
NOT_NAMES = {"__attribute__", "if", "while", "for", "switch", "return", "sizeof"}


def code_and_comments(text):
    """Per line: the code with comments and string literals blanked, and whether the
    line holds any comment text."""
    code, has_comment = [], []
    line, commented = [], False
    i, n = 0, len(text)
    in_block = False
    while i < n:
        c = text[i]
        if c == "\n":
            code.append("".join(line))
            has_comment.append(commented or in_block)
            line, commented = [], False
            i += 1
            continue
        if in_block:
            if text.startswith("*/", i):
                in_block = False
                i += 2
            else:
                i += 1
            commented = True
            continue
        if text.startswith("/*", i):
            in_block, commented = True, True
            i += 2
            continue
        if text.startswith("//", i):
            commented = True
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c in "\"'":
            q = c
            line.append(q)
            i += 1
            while i < n and text[i] != q and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
            line.append(q)
            i += 1
            continue
        line.append(c)
        i += 1
    if line or commented:
        code.append("".join(line))
        has_comment.append(commented or in_block)
    return code, has_comment


def functions(text):
    """(name, first line, length, comment above) of each function definition: a '{'
    alone in column 0 after a signature, up to the next '}' in column 0."""
    raw = text.split("\n")
    code, has_comment = code_and_comments(text)
    out = []
    i = 0
    while i < len(code):
        if not code[i].startswith("{"):
            i += 1
            continue
        end = i + 1
        while end < len(code) and not code[end].startswith("}"):
            end += 1
        # the signature: the code lines right above the brace
        top = i
        while top > 0 and code[top - 1].strip() and not code[top - 1].startswith("#") \
                and not code[top - 1].rstrip().endswith((";", "}")):
            top -= 1
        signature = " ".join(code[top:i])
        names = [m for m in NAME.findall(signature) if m not in NOT_NAMES]
        if not names or "=" in signature.split("(")[0]:
            i = end + 1
            continue   # an initializer, not a function
        # the comment block right above the signature
        c = top
        while c > 0 and has_comment[c - 1] and not code[c - 1].strip():
            c -= 1
        comment = "\n".join(raw[c:top])
        out.append((names[0], i + 1, end - i + 1, comment))
        i = end + 1
    return out


def comment_words(comment):
    """The words of a comment block, without its /*, * and */ marks."""
    lines = [re.sub(r"^\s*(/\*+|\*+/?|//)?", "", l) for l in comment.split("\n")]
    return " ".join(" ".join(lines).replace("*/", " ").split())


def sources(root):
    for folder in FOLDERS:
        for dp, dirs, files in os.walk(os.path.join(root, folder)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".c"):
                    path = os.path.join(dp, name)
                    yield os.path.relpath(path, root).replace(os.sep, "/"), path


def check(root):
    bad, files_needed, functions_needed = [], set(), set()
    for rel, path in sources(root):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        nlines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if rel.startswith("tuner/") and nlines > MAX_FILE_LINES:
            if rel in ALLOWED_LONG_FILES:
                files_needed.add(rel)
            else:
                bad.append(f"{rel}: {nlines} lines: more than {MAX_FILE_LINES}; split its bottom (what its parts share) from its top (the flow), not by job")
        for name, line, length, comment in functions(text):
            if length <= MAX_FUNCTION_LINES:
                continue
            if (rel, name) in ALLOWED_LONG_FUNCTIONS:
                functions_needed.add((rel, name))
            elif REASON not in comment_words(comment):
                bad.append(f"{rel}:{line}: {name}: {length} lines: more than "
                           f"{MAX_FUNCTION_LINES} without '{REASON} ...' in the comment above it")
    notes = [f"note: ALLOWED_LONG_FILES: {rel} is within the rule now (or gone): its entry "
             "can go" for rel in sorted(ALLOWED_LONG_FILES - files_needed)]
    notes += [f"note: ALLOWED_LONG_FUNCTIONS: {rel}: {name} is within the rule now (or gone): "
              "its entry can go" for rel, name in sorted(ALLOWED_LONG_FUNCTIONS - functions_needed)]
    return bad, notes


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ["NCCLTUNE_SOURCE_ROOT"]
    if "--list" in sys.argv:
        for rel, path in sources(root):
            with open(path, encoding="utf-8") as f:
                for name, line, length, _ in functions(f.read()):
                    print(f"{length:5d} {rel}:{line}: {name}")
        return 0
    bad, notes = check(root)
    for b in bad + notes:
        print(b)
    if bad:
        return 1
    print(f"sizes: files under tuner/ <= {MAX_FILE_LINES} lines, functions <= "
          f"{MAX_FUNCTION_LINES} lines or with a reason ({len(ALLOWED_LONG_FILES)} files and "
          f"{len(ALLOWED_LONG_FUNCTIONS)} functions on the allow-lists)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
