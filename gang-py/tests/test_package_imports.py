"""The package's modules import one another in one direction: no import circle among
``gang``'s Python modules (docs/ARCHITECTURE.md, "gang-py's rooms").

Every import counts, wherever it is written (module level, inside a function, under
``TYPE_CHECKING``): a circle hidden in a function is still two modules that each need
the other.
"""

from __future__ import annotations

import ast
import pathlib

import gang


def _module_of(path: pathlib.Path, root: pathlib.Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: pathlib.Path) -> dict[str, set[str]]:
    """Module name -> the package's modules it imports (``root`` is the package folder)."""
    modules = {_module_of(p, root): p for p in root.rglob("*.py")}
    # The native extension is a module of the package too (it imports nothing of it).
    known = set(modules) | {f"{root.name}._gang"}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                # `from . import sim` imports the module gang.sim; `from .sim import x`
                # imports gang.sim (x is a name in it, or a submodule of it).
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
            for t in targets:
                while t and t not in known:
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph[name].add(t)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, each once, as the modules along it."""
    found: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()

    def walk(path: list[str]) -> None:
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt == path[0]:
                i = path.index(min(path))
                key = tuple(path[i:] + path[:i])
                if key not in seen:
                    seen.add(key)
                    found.append(list(key) + [key[0]])
            elif nxt not in path and nxt > path[0]:
                walk(path + [nxt])

    for start in sorted(graph):
        walk([start])
    return found


def test_the_circle_finder_finds_circles():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(g) == [["a", "b", "c", "a"]]
    assert circles({"x": {"y"}, "y": {"x"}}) == [["x", "y", "x"]]
    assert circles({"x": {"y"}, "y": set()}) == []


def test_the_graph_reads_relative_and_absolute_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import f\n")
    (pkg / "c.py").write_text("import pkg.a\nfrom pkg.sub.b import x\n")
    g = import_graph(pkg)
    assert g["pkg"] == {"pkg.a"}
    assert g["pkg.a"] == {"pkg.sub.b"}
    assert g["pkg.sub.b"] == {"pkg.a"}
    assert g["pkg.c"] == {"pkg.a", "pkg.sub.b"}
    assert circles(g) == [["pkg.a", "pkg.sub.b", "pkg.a"]]


def test_no_import_circle_in_the_package():
    root = pathlib.Path(gang.__file__).parent
    graph = import_graph(root)
    assert {"gang", "gang.sim", "gang.kube", "gang._report.html"} <= set(graph)
    assert "gang._report.plots" in graph["gang._report.html"]
    assert circles(graph) == []
