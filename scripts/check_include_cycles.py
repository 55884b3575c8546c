#!/usr/bin/env python3
# check_include_cycles.py: checks include/tg's folder-level include graph (cycles, layers, public includes only).
#
#   python3 scripts/check_include_cycles.py [include/tg]
#
# Each folder directly under include/tg (core, ast, dsl, ...) is one node; a header directly
# under include/tg (tg.hpp, device.hpp, log.hpp) is a node of its own. `#include <tg/X/...>` in
# a header of folder Y is the edge Y -> X. A cycle between folders means none of them can be
# understood, tested or moved without the others, which is why it fails rather than warns.
#
# Layers, lowest first: core and meta, then ast, dsl, lower. A folder may include its own
# layer or lower ones only (the DSL emits ast nodes; ast knows nothing of the DSL).
#
# Public headers are installed alone (include/meson.build), so they may include only <tg/...>
# and system or Boost headers: a quoted include, or one of runtime/, drivers/, llm/, tests/,
# examples/, would not resolve for an installed tg.
import pathlib
import re
import sys

LAYER = {'core': 0, 'meta': 0, 'ast': 1, 'dsl': 2, 'lower': 3}
PRIVATE_ROOTS = ('runtime/', 'drivers/', 'llm/', 'tests/', 'examples/')
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
HEADER_SUFFIXES = {'.hpp', '.h', '.hh', '.ipp', '.inc'}


def node_of(relative: pathlib.PurePosixPath) -> str:
    """The graph node of a path below include/tg: its first folder, or the file itself."""
    return relative.parts[0]


def strip_block_comments(text: str) -> str:
    # A `#include` inside /* ... */ is documentation; keep the line count for messages.
    return re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)


def scan(root: pathlib.Path):
    edges = {}      # (from, to) -> first "file:line" that makes it
    problems = []
    headers = sorted(p for p in root.rglob('*') if p.is_file() and p.suffix in HEADER_SUFFIXES)
    for path in headers:
        rel = pathlib.PurePosixPath(path.relative_to(root).as_posix())
        source = node_of(rel)
        text = strip_block_comments(path.read_text(encoding='utf-8', errors='replace'))
        for number, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            where = f'include/tg/{rel}:{number}'
            quote, target = m.group(1), m.group(2).strip()
            if quote == '"':
                problems.append(f'{where}: quoted include "{target}" in a public header; use <tg/...>')
                continue
            if target.startswith(PRIVATE_ROOTS):
                problems.append(f'{where}: public header includes non-public <{target}>')
                continue
            if not target.startswith('tg/'):
                continue  # the standard library, Boost
            dest_rel = pathlib.PurePosixPath(target[len('tg/'):])
            if not (root / dest_rel).is_file():
                problems.append(f'{where}: <{target}> is not a header under include/tg')
                continue
            dest = node_of(dest_rel)
            if dest != source:
                edges.setdefault((source, dest), where)
    return edges, problems


def find_cycles(edges):
    """Strongly connected components with more than one node (Tarjan), each as one cycle path."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
                components.append(set(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)

    cycles = []
    for component in components:
        # One concrete cycle through the component's smallest node, by breadth-first search.
        start = min(component)
        previous, frontier, found = {start: None}, [start], None
        while frontier and found is None:
            next_frontier = []
            for v in frontier:
                for w in sorted(graph[v] & component):
                    if w == start:
                        found = v
                        break
                    if w not in previous:
                        previous[w] = v
                        next_frontier.append(w)
                if found is not None:
                    break
            frontier = next_frontier
        path, v = [], found
        while v is not None:
            path.append(v)
            v = previous[v]
        path.reverse()
        cycles.append(path + [start])
    return cycles


def main(argv):
    root = pathlib.Path(argv[1]) if len(argv) > 1 else pathlib.Path(__file__).resolve().parent.parent / 'include' / 'tg'
    if not root.is_dir():
        print(f'check_include_cycles: {root} is not a directory', file=sys.stderr)
        return 2
    edges, problems = scan(root)

    for cycle in find_cycles(edges):
        steps = [f'  {a} -> {b}  ({edges[(a, b)]})' for a, b in zip(cycle, cycle[1:])]
        problems.append('include cycle between folders: ' + ' -> '.join(cycle) + '\n' + '\n'.join(steps))

    for (a, b), where in sorted(edges.items()):
        if a in LAYER and b in LAYER and LAYER[b] > LAYER[a]:
            problems.append(f'{where}: {a}/ includes {b}/, a layer above it (core, meta < ast < dsl < lower)')

    if problems:
        print('\n'.join(problems), file=sys.stderr)
        return 1
    folders = sorted({n for edge in edges for n in edge})
    print(f'check_include_cycles: {len(edges)} folder edges among {len(folders)} nodes, no cycle')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
