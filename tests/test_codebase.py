"""The shape of the code base: short functions and no import circles (ruff and mypy check the rest)."""

from __future__ import annotations

import ast
import functools
import graphlib
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kblint"
CODEBASE = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["kblint-codebase"]


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The kblint modules NAME imports, at any depth of its code (lazy imports too), except the ones
    imported for type checking only."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
    return {m for m in found if m in modules and m != name}


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    nodes, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        nodes.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return nodes


def test_no_import_circles() -> None:
    modules = _modules()
    graph = {name: _imported(name, path, modules) for name, path in modules.items()}
    assert "kblint.engine.pass_entries" in graph["kblint.engine.run"]  # the graph sees relative imports
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        raise AssertionError(f"import circle: {' -> '.join(exc.args[1])}") from None
    assert len(order) == len(modules)


def _functions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function under NODE with its qualified name (`Class.method`, `outer.inner`), so that
    two methods of the same name in one file are told apart."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            qualname = f"{prefix}{child.name}"
            if not isinstance(child, ast.ClassDef):
                yield qualname, child
            yield from _functions(child, f"{qualname}.")
        elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):  # no def is in an expression
            yield from _functions(child, prefix)


@functools.cache
def _all_functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """(`path:qualname`, its node, the text of its def line) of every function of the code base."""
    found = []
    for folder in ("kblint", "tests", "bench", "plugins"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            for qualname, node in _functions(ast.parse(text)):
                found.append((f"{path.relative_to(ROOT).as_posix()}:{qualname}", node, lines[node.lineno - 1]))
    return found


def test_functions_are_short() -> None:
    """No function longer than max-function-lines, but the exceptions pyproject.toml lists, each with
    its reason; an exception that is no longer needed is said too."""
    limit, excused = CODEBASE["max-function-lines"], CODEBASE["long-functions"]
    long, needed = [], set()
    for name, node, _ in _all_functions():
        lines = (node.end_lineno or node.lineno) - node.lineno + 1
        if lines > limit and name in excused:
            needed.add(name)
        elif lines > limit:
            long.append(f"{name} (line {node.lineno}): {lines} lines")
    assert not long, "\n".join(long)
    assert set(excused) == needed, f"listed but short now: {sorted(set(excused) - needed)}"
    assert all(isinstance(why, str) and why.strip() for why in excused.values())


_SIZE_RULES = ("C901", "PLR0911", "PLR0912", "PLR0915")  # complexity, returns, branches, statements


def test_size_rules_are_silenced_only_for_the_listed_functions() -> None:
    """ruff's bounds on a function's size are silenced (`# noqa`) only on the def of a function that
    pyproject.toml lists with its reason, and never for a whole file."""
    excused = CODEBASE["long-functions"]
    silenced = [
        name for name, _, line in _all_functions() if any(rule in line.partition("# noqa")[2] for rule in _SIZE_RULES)
    ]
    assert silenced and set(silenced) <= set(excused), sorted(set(silenced) - set(excused))
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    per_file = [rules for rules in ruff.get("per-file-ignores", {}).values()]
    assert not any(rule in rules for rules in per_file for rule in _SIZE_RULES)
