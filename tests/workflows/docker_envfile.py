#!/usr/bin/env python3
"""docker_envfile.py - what `docker run -v SRC:DST[:ro] --env-file FILE` gives a container,
reproduced without a container runtime, and checked:

    docker_envfile.py FILE [--mount SRC:DST[:ro]]... [--paths]

Prints the container's variables from FILE, one NAME=VALUE a line, in file order, read
with the rules of the docker CLI's parser (docker/cli opts/file.go, parseKeyValueFile;
the CLI reads the file itself and sends the list to the daemon):
  * lines split at '\\n' (a '\\r' before it dropped); a UTF-8 BOM at the start dropped;
    bytes that are not valid UTF-8 are an error;
  * leading whitespace of a line removed; an empty line or one starting with '#' is a
    comment (an '#' after a value is part of the value);
  * NAME=VALUE splits at the first '='; the value is taken as is: no quote processing, no
    escapes, no variable expansion, no trimming;
  * NAME alone passes the caller's NAME through when it is set, else nothing;
  * a name holding a blank or a tab, or an empty name, is an error.
With --paths, every value that is an absolute path must, in the container, be a regular
file under one of the mounts (bind mounts: the container path DST/REST is the host path
SRC/REST; a symbolic link is refused, since it resolves inside the container). Exit 0;
1 with a message on stderr naming the line or the variable at fault."""
import os
import stat
import sys

WHITESPACE = " \t"


def parse(path):
    """The variables docker's CLI reads from path, as a list of "NAME=VALUE"."""
    data = open(path, "rb").read()
    out = []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for n, raw in enumerate(lines, 1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{path}:{n}: invalid utf8 bytes")
        line = line.lstrip()
        if not line or line.startswith("#"):
            continue
        name, eq, value = line.partition("=")
        name = name.lstrip(WHITESPACE)
        if any(c in name for c in WHITESPACE):
            raise ValueError(f"{path}:{n}: variable '{name}' contains whitespaces")
        if not name:
            raise ValueError(f"{path}:{n}: no variable name on line '{line}'")
        if eq:
            out.append(name + "=" + value)
        elif name.strip() in os.environ:
            out.append(name.strip() + "=" + os.environ[name.strip()])
    return out


def mounts(specs):
    """(container path, host path) of each -v SRC:DST[:ro], the longest DST first."""
    out = []
    for spec in specs:
        parts = spec.split(":")
        if len(parts) not in (2, 3) or not parts[0].startswith("/") or not parts[1].startswith("/"):
            raise ValueError(f"--mount {spec}: want SRC:DST[:ro], both absolute")
        out.append((parts[1].rstrip("/") or "/", parts[0].rstrip("/") or "/"))
    return sorted(out, key=lambda m: -len(m[0]))


def host_path(value, mnts):
    """The host file the container path value is, or None when no mount holds it."""
    for dst, src in mnts:
        if value == dst or value.startswith(dst + "/"):
            return src + value[len(dst):]
    return None


def check_paths(env, mnts):
    for kv in env:
        name, _, value = kv.partition("=")
        if not value.startswith("/"):
            continue
        host = host_path(value, mnts)
        if host is None:
            raise ValueError(f"{name}={value}: no mount holds it in the container")
        try:
            st = os.lstat(host)
        except OSError as e:
            raise ValueError(f"{name}={value}: not in the container ({host}: {e.strerror})")
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{name}={value}: {host} is not a regular file (a symbolic "
                             "link resolves inside the container)")
        # every folder on the way inside the mount must be a real folder too
        for dst, src in mnts:
            if host.startswith(src + "/"):
                d = os.path.dirname(host)
                while len(d) > len(src):
                    if os.path.islink(d):
                        raise ValueError(f"{name}={value}: {d} is a symbolic link")
                    d = os.path.dirname(d)
                break


def main(argv):
    specs, want_paths, files = [], False, []
    i = 1
    while i < len(argv):
        if argv[i] == "--mount" and i + 1 < len(argv):
            specs.append(argv[i + 1])
            i += 2
        elif argv[i] == "--paths":
            want_paths = True
            i += 1
        else:
            files.append(argv[i])
            i += 1
    if len(files) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        env = parse(files[0])
        if want_paths:
            check_paths(env, mounts(specs))
    except (ValueError, OSError) as e:
        print(f"docker_envfile: {e}", file=sys.stderr)
        return 1
    for kv in env:
        print(kv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
