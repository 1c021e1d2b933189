#!/usr/bin/env python3
"""Fails on an include cycle between the folders of src/.

Each folder of src/ is a module, and the modules depend one way
(docs/design.md, "The folders depend one way"): a file that includes
"other/x.hpp" makes its folder depend on other/. A cycle (server/ uses
worker/, which uses zmq/, which uses server/) means no folder of it can be
understood, tested or moved without the others. Every cycle is printed with
the includes that make it, one per edge.

  scripts/check_includes.py [SRC_DIR]
"""

import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^/"]+)/[^"]+"', re.MULTILINE)


def edges_of(src):
    """{(from_folder, to_folder): "file:line" of the first such include}."""
    folders = {p.name for p in src.iterdir() if p.is_dir()}
    edges = {}
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".hpp", ".cpp", ".h", ".cc") or not path.is_file():
            continue
        here = path.relative_to(src).parts[0]
        text = path.read_text(encoding="utf-8")
        for m in INCLUDE.finditer(text):
            there = m.group(1)
            if there in folders and there != here:
                line = text.count("\n", 0, m.start()) + 1
                edges.setdefault((here, there), f"{path.relative_to(src.parent)}:{line}")
    return edges


def cycles_of(edges):
    """The strongly connected components of more than one folder (Tarjan)."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main():
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1
                       else pathlib.Path(__file__).resolve().parent.parent / "src")
    edges = edges_of(src)
    cycles = cycles_of(edges)
    for component in cycles:
        members = set(component)
        print(f"check_includes: an include cycle between {', '.join(f'{c}/' for c in component)}:",
              file=sys.stderr)
        for (a, b), where in sorted(edges.items()):
            if a in members and b in members:
                print(f"  {a}/ -> {b}/  ({where})", file=sys.stderr)
    if cycles:
        return 1
    print(f"check_includes: {len(edges)} dependencies between the folders of {src.name}/, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
