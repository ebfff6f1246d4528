#!/usr/bin/python3
"""Fails when a C file includes a header of a folder above its own.

Reads every `#include "..."` of the C files (.c, .h) under src/, daemon/, client/, wire/,
mcap/ and bridge/ (those present), finds the header the way the compiler does for a quoted
include (the including file's folder first, then by name in the tree), and checks the header's
folder against the layers of tools/layers.txt. Prints each offending include as FILE:LINE and
exits 1; exits 0 when every include keeps to the layers.

usage: check_layers.py [ROOT] [--rules FILE]   (ROOT: the source tree, default: this tree)
"""
import os
import re
import sys

SCANNED = ["src", "daemon", "client", "wire", "mcap", "bridge"]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def read_rules(path):
    """(deps, public, generated): folder -> the folders below it that it may include from;
    folders usable by all; generated header name -> folder."""
    deps, public, generated = {}, set(), {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                sys.exit("%s:%d: expected `FOLDER: FOLDERS`" % (path, n))
            left, right = (s.strip() for s in line.split(":", 1))
            below = right.split()
            if left == "*":
                public.update(below)
            elif left.startswith("generated "):
                generated[left.split(None, 1)[1]] = below[0]
            else:
                # a folder named on several lines may include what all of them list
                deps.setdefault(left.rstrip("/"), set()).update(d.rstrip("/") for d in below)
    for folder, below in deps.items():
        for d in below | public:
            if d not in deps:
                sys.exit("%s: %s names %s, which has no line of its own" % (path, folder, d))
    return deps, public, generated


def allowed_of(deps, public):
    """folder -> the folders its files may include from: itself, those its line lists, the
    public ones."""
    return {folder: {folder} | below | set(public) for folder, below in deps.items()}


def folder_of(path, deps):
    """The longest listed folder holding path (relative, '/'-separated), or None."""
    best = None
    for folder in deps:
        if path.startswith(folder + "/") and (best is None or len(folder) > len(best)):
            best = folder
    return best


def main():
    args = sys.argv[1:]
    rules = None
    if "--rules" in args:
        i = args.index("--rules")
        rules = args[i + 1]
        del args[i:i + 2]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    rules = rules or os.path.join(root, "tools", "layers.txt")
    shown = os.path.relpath(rules, root) if rules.startswith(root + os.sep) else rules
    deps, public, generated = read_rules(rules)
    allowed = allowed_of(deps, public)

    files = []
    for top in SCANNED:
        for dirpath, dirnames, names in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    files.append(os.path.relpath(os.path.join(dirpath, name), root))
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.basename(f), []).append(f)

    problems, nincludes = [], 0
    for f in files:
        own = folder_of(f, deps)
        if own is None:
            problems.append("%s: its folder has no line in %s" % (f, shown))
            continue
        with open(os.path.join(root, f), errors="replace") as src:
            for n, line in enumerate(src, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                nincludes += 1
                name = m.group(1)
                local = os.path.normpath(os.path.join(os.path.dirname(f), name))
                if local in files:
                    header = local
                elif os.path.basename(name) in generated:
                    header = None
                    target = generated[os.path.basename(name)]
                else:
                    found = [h for h in by_name.get(os.path.basename(name), [])
                             if h.endswith("/" + name) or h == name]
                    if len(found) != 1:
                        problems.append('%s:%d: #include "%s": %s' % (
                            f, n, name, "no such header in the tree" if not found else
                            "ambiguous (%s)" % ", ".join(found)))
                        continue
                    header = found[0]
                if header is not None:
                    target = folder_of(header, deps)
                    if target is None:
                        problems.append('%s:%d: #include "%s": %s is in no listed folder' % (
                            f, n, name, header))
                        continue
                if target not in allowed[own]:
                    may = sorted(allowed[own] - {own})
                    problems.append('%s:%d: #include "%s" (%s): not listed below %s, which may '
                                    'include only its own headers and those of: %s' % (
                                        f, n, name, target, own, ", ".join(may) or "none"))
    for p in problems:
        print(p)
    print("check_layers: %d files, %d includes, %d problems (rules: %s)" % (
        len(files), nincludes, len(problems), shown))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
