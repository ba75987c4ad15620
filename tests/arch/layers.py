#!/usr/bin/env python3
"""layers.py - the include rules of model/ (docs/architecture.md), checked on
every #include of every .c and .h file:

  1. a module is a folder model/NAME listed in model/layers.txt, lowest layer
     first; each has its public header NAME/NAME.h;
  2. a file includes the files of its own module by name ("pipeline.h"), and
     another module only through its public header ("comm/comm.h");
  3. that other module lies below it in layers.txt (cli, the last, may
     include every module);
  4. no chain of includes comes back to the file it started from.

Usage: layers.py MODEL_DIR.  Prints one line per broken rule and exits 1 if
any; tests/arch/planted.sh shows that each rule fails on a planted edge.
"""
import os
import re
import sys

# headers from outside model/ that a module may include by name: the
# calibration harness (calibrate/harness), linked into the preflight command
# only, never into the simulator library
OUTSIDE = {"pfcal.h"}
# headers the build writes (build/gen, cmake/gitstamp.cmake), which include nothing: any module may name them
GENERATED = {"pf_git.h"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)


def main(model):
    layers = [l.strip() for l in open(os.path.join(model, "layers.txt")) if re.match(r"^[a-z]", l)]
    rank = {m: i for i, m in enumerate(layers)}
    fails = []
    graph = {}
    for mod in layers:
        d = os.path.join(model, mod)
        if not os.path.isdir(d):
            fails.append(f"{mod}: listed in layers.txt but model/{mod}/ does not exist")
            continue
        if mod != "cli" and not os.path.isfile(os.path.join(d, mod + ".h")):
            fails.append(f"{mod}: no public header {mod}/{mod}.h")
    for name in sorted(os.listdir(model)):
        if os.path.isdir(os.path.join(model, name)) and name not in rank:
            fails.append(f"model/{name}/: a folder that is not a module of layers.txt")
    for mod in layers:
        d = os.path.join(model, mod)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if not f.endswith((".c", ".h")):
                continue
            rel = f"{mod}/{f}"
            text = strip_comments(open(os.path.join(d, f), encoding="utf-8", errors="replace").read())
            edges = graph.setdefault(rel, [])
            for m in INCLUDE.finditer(text):
                inc = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                where = f"model/{rel}:{line}: #include \"{inc}\""
                if "/" not in inc:
                    if (mod == "cli" and inc in OUTSIDE) or inc in GENERATED:
                        continue
                    if not os.path.isfile(os.path.join(d, inc)):
                        fails.append(f"{where}: no such file in model/{mod}/")
                    edges.append(f"{mod}/{inc}")
                    continue
                other, hdr = inc.split("/", 1)
                if other not in rank:
                    fails.append(f"{where}: {other} is not a module of layers.txt")
                    continue
                if other == mod:
                    fails.append(f"{where}: a file of the same module is included by name (\"{hdr}\")")
                    continue
                if hdr != other + ".h":
                    fails.append(f"{where}: reaches into module {other}'s private header (include \"{other}/{other}.h\")")
                    continue
                if rank[other] > rank[mod]:
                    fails.append(f"{where}: runs up the layers ({mod} is below {other} in model/layers.txt)")
                edges.append(inc)
    # cycles over the file graph (Tarjan-free: DFS with colours)
    colour, stack = {}, []

    def visit(n):
        colour[n] = 1
        stack.append(n)
        for m in graph.get(n, []):
            if colour.get(m) == 1:
                cyc = stack[stack.index(m):] + [m]
                fails.append("include cycle: " + " -> ".join(cyc))
            elif colour.get(m) is None:
                visit(m)
        stack.pop()
        colour[n] = 2

    sys.setrecursionlimit(10000)
    for n in sorted(graph):
        if colour.get(n) is None:
            visit(n)
    for f in fails:
        print("FAIL:", f)
    nfiles = len(graph)
    nedges = sum(len(v) for v in graph.values())
    print(f"{len(layers)} modules, {nfiles} files, {nedges} includes checked; {len(fails)} broken")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "model"))
