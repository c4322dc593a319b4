"""The app's modules import one way: down the layers, never in a circle.

Every import counts, those inside functions too: an import hidden in a function to dodge a
circle is still a circle, and a worker that imports the modules in another order breaks on
it. The layers, bottom up:

0. the suite and the ingest adapters (plain Python);
1. models, audit, access to data shared by the workflows (the finding filter, search, …);
2. the workflows: ingestion, checking, review, administration, reporting, webhook delivery;
3. pages, API, commands, the task list for the worker, template tags, the admin site.

A module may import its own layer or lower ones; the import graph has no cycle at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "checks"

LAYERS: list[tuple[int, tuple[str, ...]]] = [
    (0, ("checks.suite", "checks.ingest")),
    (
        1,
        (
            "checks.models",
            "checks.models_daily",
            "checks.audit",
            "checks.blind_review",
            "checks.filters",
            "checks.search",
            "checks.facets",
            "checks.projects",
            "checks.superusers",
            "checks.evidence_calls",
            "checks.rendering",
            "checks.finding_titles",
            "checks.migrations",
        ),
    ),
    (
        2,
        (
            "checks.ingestion",
            "checks.response_chains",
            "checks.joining",
            "checks.refusals",
            "checks.otlp_storing",
            "checks.raw_exports",
            "checks.checking",
            "checks.review",
            "checks.administration",
            "checks.reporting",
            "checks.webhooks",
        ),
    ),
    (
        3,
        (
            "checks.views",
            "checks.api",
            "checks.management",
            "checks.tasks",
            "checks.templatetags",
            "checks.admin",
            "checks.apps",
        ),
    ),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def app_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(APP.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The app modules a module imports, wherever the import statement stands."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            # "from . import x" names the module x, "from .m import f" the module m (the
            # name f is not a module, so the walk below stops at m).
            targets = [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = app_modules()
    known = set(modules)
    return {name: imports_of(name, path, known) for name, path in modules.items()}


def layer_of(name: str) -> int:
    if name == "checks":
        return 0  # the package itself, empty
    for layer, prefixes in LAYERS:
        if any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes):
            return layer
    raise AssertionError(f"{name} belongs to no layer: add it to LAYERS in {Path(__file__).name}")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                child = pending.pop()
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, sorted(graph.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_app_module_has_a_layer() -> None:
    layers = {name: layer_of(name) for name in app_modules()}  # raises, naming a module with none
    assert layers["checks.suite.registry"] == 0 and layers["checks.views.turns"] == 3


def test_no_module_imports_one_from_a_higher_layer() -> None:
    upward = [
        f"{name} (layer {layer_of(name)}) imports {target} (layer {layer_of(target)})"
        for name, targets in import_graph().items()
        for target in sorted(targets)
        if layer_of(target) > layer_of(name)
    ]
    assert not upward, "\n".join(upward)


def test_the_app_has_no_import_circle() -> None:
    assert cycles(import_graph()) == []


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [["a", "b"]]),
    ],
)
def test_the_circle_finder_finds_circles(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert cycles(graph) == expected


def test_an_import_inside_a_function_counts(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text("def later():\n    from .tasks import run\n    return run\n")
    assert imports_of("checks.module", source, {"checks.tasks", "checks.module"}) == {"checks.tasks"}
