#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Circles in the import graph of lib/, user/ and tools/: tools/lint/circles.py [BUILD].

Three graphs, one circle (strongly connected component of two or more nodes) per line:
- imports: source file A -> source file B when A includes, directly or through other
  headers, a header that declares a symbol B defines: what A is made to know of.
- files: A -> B when A's object uses a symbol B's object defines (nm on BUILD/obj,
  default build/): what A really calls. A call through a function pointer (a callback
  table, an ops struct) is no edge in either.
- headers: header A -> header B when A includes B ("..." includes, resolved as the
  Makefile's -I flags do).
Exit status 0 always; --check exits 1 when there is a circle (make test runs that).
"""
import os
import re
import subprocess
import sys

ROOTS = ("lib", "user", "tools")
INCLUDE_DIRS = ("lib/include", "bpf", "tools/util", "lib", "tests/lib")


def objects(build):
    base = os.path.join(build, "obj")
    for root in ROOTS:
        for d, _, files in os.walk(os.path.join(base, root)):
            for f in sorted(files):
                if f.endswith(".o"):
                    o = os.path.join(d, f)
                    yield os.path.relpath(o, base)[:-2] + ".c", o


_NM = {}


def nm(obj, flags):
    key = (obj, tuple(flags))
    if key not in _NM:
        out = subprocess.run(["nm", *flags, obj], capture_output=True, text=True).stdout
        _NM[key] = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return _NM[key]


def tarjan(nodes, edges):
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(out)


def file_graph(build):
    defined, used = {}, {}
    for src, obj in objects(build):
        if not os.path.exists(src):
            continue  # an object left from a file since removed
        defined[src] = nm(obj, ["--defined-only", "-g"])
        used[src] = nm(obj, ["-u"])
    owner = {}
    for src, syms in defined.items():
        for s in syms:
            owner.setdefault(s, src)
    edges = {src: {owner[s] for s in syms if s in owner and owner[s] != src}
             for src, syms in used.items()}
    return set(defined), edges


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
WORD = re.compile(r"[A-Za-z_]\w*")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def includes(path):
    out = set()
    for name in INCLUDE.findall(read(path)):
        for d in (os.path.dirname(path),) + INCLUDE_DIRS:
            p = os.path.normpath(os.path.join(d, name))
            if os.path.exists(p):
                out.add(p)
                break
    return out


def sources(ext):
    for root in ROOTS:
        for d, _, files in os.walk(root):
            yield from (os.path.join(d, f) for f in sorted(files) if f.endswith(ext))


def header_graph():
    heads = set(sources(".h"))
    return heads, {h: includes(h) for h in heads}


def import_graph(build):
    nodes, _ = file_graph(build)
    owner = {}
    for src, obj in objects(build):
        if src in nodes:
            for s in nm(obj, ["--defined-only", "-g"]):
                owner.setdefault(s, src)
    _, inc = header_graph()
    declares = {}  # header -> the files whose symbols it names
    for h in inc:
        words = set(WORD.findall(COMMENT.sub(" ", read(h))))
        declares[h] = {owner[w] for w in words if w in owner}
    edges = {}
    for src in nodes:
        seen, todo = set(), list(includes(src))
        while todo:
            h = todo.pop()
            if h in seen or h not in inc:
                continue
            seen.add(h)
            todo += inc[h]
        edges[src] = {b for h in seen for b in declares[h] if b != src}
    return nodes, edges


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    build = args[0] if args else "build"
    if not os.path.isdir(os.path.join(build, "obj")):
        print(f"circles: no objects under {build}/obj: run make first", file=sys.stderr)
        return 2
    found = 0
    graphs = (("imports", import_graph(build)), ("files", file_graph(build)),
              ("headers", header_graph()))
    for what, (nodes, edges) in graphs:
        circles = tarjan(nodes, edges)
        found += len(circles)
        print(f"{what}: {len(circles)} circle(s) among {len(nodes)}")
        for c in circles:
            print(f"  {len(c)}: {' '.join(c)}")
    return 1 if check and found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
