"""The import graph as the layering promises it (issue 15): bench -> inspector -> core, no import
running back up, and no cycle inside inspector/ or bench/ — counting imports inside functions
and under TYPE_CHECKING too, since a cycle hidden that way still ties two modules together."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "inspector", "bench")


def modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its source."""
    known = modules()

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [resolve(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [
                    resolve(f"{node.module}.{alias.name}") or resolve(node.module)
                    for alias in node.names
                ]
            graph[name].update(t for t in targets if t is not None and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
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


def test_the_cycle_finder_finds_a_hidden_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_runs_back_up_the_layers() -> None:
    upward = sorted(
        f"{name} -> {target}"
        for name, targets in import_graph().items()
        for target in targets
        if (name.startswith("core") and not target.startswith("core"))
        or (name.startswith("inspector") and target.startswith("bench"))
    )
    assert upward == []


def test_no_import_cycle_in_inspector_or_bench() -> None:
    graph = import_graph()
    ours = [c for c in cycles(graph) if any(not m.startswith("core") for m in c)]
    assert ours == []


def test_no_import_cycle_in_core() -> None:
    """No exemption: state <-> trigger is gone (the prompt size lives in
    core/compaction/prompt_size.py), and so is catalog <-> chunks (index.yaml's text format has
    a pure home of its own, core/index/format.py, below the reader and the catalog)."""
    assert [c for c in cycles(import_graph()) if any(m.startswith("core") for m in c)] == []


def _imports(path: Path, *, runtime_only: bool = False) -> set[str]:
    """Every module name an import in `path` names (`from a import b`: `a` and `a.b`).
    `runtime_only`: leaving out the imports under `if TYPE_CHECKING:` (a type named for the
    checker is not a dependency when the module runs)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    if runtime_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_core_never_imports_textual() -> None:
    """Nor Rich, Textual's renderer, nor Textual's add-ons: core returns data, the inspector
    draws it (counting imports inside functions and under TYPE_CHECKING)."""
    found = sorted(
        f"{name} -> {imported}"
        for name, path in modules().items()
        if name.split(".")[0] == "core"
        for imported in _imports(path)
        if imported.split(".")[0] in ("textual", "textual_plotext", "textual_serve", "rich")
    )
    assert found == []


PURE_HEADING = "## core/ — pure functions (no I/O)"
SHELL_HEADING = "## core/ — the shell (files, locks, threads)"


def _doc_table(heading: str) -> set[str]:
    """The core modules (`x.py`, `pkg/x.py`) and packages (`pkg/`) named in the first cell of
    the rows under `heading` in docs/ARCHITECTURE.md."""
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert heading in doc, heading
    section = doc.split(heading, 1)[1].split("\n## ", 1)[0]
    out: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            for cell in re.findall(r"`([^`]+)`", line.split("|")[1]):
                out.add("core." + cell.removesuffix("/").removesuffix(".py").replace("/", "."))
    return out


def shell_imports(pure: set[str], shell: set[str]) -> list[str]:
    """`module -> target` for each import, run when a module of `pure` runs, of a module the
    tables place in `shell` (a module without a row of its own goes with its package's)."""
    known = modules()

    def table_of(name: str) -> str | None:
        target = name
        while target and target not in known:
            target = target.rpartition(".")[0]  # `from a import name`: the module a
        while target:
            if target in pure:
                return None
            if target in shell:
                return target
            target = target.rpartition(".")[0]
        return None

    return sorted(
        {
            f"{module} -> {target}"
            for name, path in known.items()
            if (module := table_of_pure(name, pure)) is not None
            for imported in _imports(path, runtime_only=True)
            if (target := table_of(imported)) is not None
        }
    )


def table_of_pure(name: str, pure: set[str]) -> str | None:
    """The pure row a module belongs to (its own, or its package's), else None."""
    while name:
        if name in pure:
            return name
        name = name.rpartition(".")[0]
    return None


def test_the_doc_tables_of_core_are_disjoint_and_name_real_modules() -> None:
    pure, shell = _doc_table(PURE_HEADING), _doc_table(SHELL_HEADING)
    assert pure and shell
    assert pure & shell == set()
    known = modules()
    assert sorted(m for m in pure | shell if m not in known) == []


def test_pure_modules_import_nothing_from_the_shell() -> None:
    """The pure table of docs/ARCHITECTURE.md is what it says: none of its modules imports,
    when it runs, a module of the shell table (store, paths, config, maintenance, manager …)."""
    assert shell_imports(_doc_table(PURE_HEADING), _doc_table(SHELL_HEADING)) == []


def test_the_purity_guard_sees_a_runtime_import_only(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from core.store.session_store import SessionStore\n"
        "def f() -> None:\n    from core.config import load_config\n",
        encoding="utf-8",
    )
    assert _imports(probe, runtime_only=True) == {
        "typing",
        "typing.TYPE_CHECKING",
        "core.config",
        "core.config.load_config",
    }
    assert "core.store.session_store" in _imports(probe)
    assert shell_imports({"core.compaction.trigger"}, {"core.config"}) == []
    assert shell_imports({"core.status"}, {"core.store.session_store"}) == [
        "core.status -> core.store.session_store"
    ]
