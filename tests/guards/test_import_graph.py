"""The import graph as the layering promises it (issue 15): bench -> inspector -> core, no import
running back up, and no cycle inside inspector/ or bench/ — counting imports inside functions
and under TYPE_CHECKING too, since a cycle hidden that way still ties two modules together.
Every folder is walked at any depth, and a relative import (`from .base import x`) is resolved
like an absolute one, so core's subpackages cannot slip past a guard."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers.paths import REPO

ROOT = REPO
PACKAGES = ("core", "inspector", "bench")


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Module name -> file, for every module of PACKAGES under `root`, subpackages included
    (a package is named by its `__init__.py`)."""
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            out[module_name(path, root)] = path
    return out


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def from_module(node: ast.ImportFrom, importer: str, is_package: bool) -> str | None:
    """The absolute module a `from … import` names, a relative one (`from .base import x`,
    `from .. import y`) resolved against the importing module `importer`; None when it climbs
    above the top package."""
    if node.level == 0:
        return node.module
    package = importer.split(".")
    if not is_package:
        package = package[:-1]
    if node.level - 1 >= len(package):
        return None
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


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
            elif isinstance(node, ast.ImportFrom):
                source = from_module(node, name, path.name == "__init__.py")
                if source is not None:
                    targets = [
                        resolve(f"{source}.{alias.name}") or resolve(source) for alias in node.names
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


def _imports(
    path: Path,
    *,
    runtime_only: bool = False,
    module_level: bool = False,
    root: Path = ROOT,
) -> set[str]:
    """Every module name an import in `path` names (`from a import b`: `a` and `a.b`; a
    relative import resolved against `path`'s place under `root`). `runtime_only`: leaving
    out the imports under `if TYPE_CHECKING:` (a type named for the checker is not a
    dependency when the module runs). `module_level`: only the imports that run when the
    module is imported (none inside a function or a class's methods)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        checker_only = isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        in_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        if (runtime_only and checker_only) or (module_level and in_function):
            body = node.body if isinstance(node, ast.If) else [node]
            skipped.update(id(inner) for stmt in body for inner in ast.walk(stmt))
    importer = module_name(path, root) if path.is_relative_to(root) else path.stem
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = from_module(node, importer, path.name == "__init__.py")
            if source is not None:
                names.add(source)
                names.update(f"{source}.{alias.name}" for alias in node.names)
    return names


UI_PACKAGES = ("textual", "textual_plotext", "textual_serve", "rich")


def ui_imports(root: Path = ROOT) -> list[str]:
    """`module -> imported` for each import of a UI package by a module of core/ under
    `root`, in any subpackage (counting imports inside functions and under TYPE_CHECKING)."""
    return sorted(
        f"{name} -> {imported}"
        for name, path in modules(root).items()
        if name.split(".")[0] == "core"
        for imported in _imports(path, root=root)
        if imported.split(".")[0] in UI_PACKAGES
    )


def test_core_never_imports_textual() -> None:
    """Nor Rich, Textual's renderer, nor Textual's add-ons: core returns data, the inspector
    draws it."""
    assert ui_imports() == []


def test_the_guards_walk_every_folder_of_core() -> None:
    """Every module file under core/, at any depth, is in the graph the guards read."""
    files = {path.resolve() for path in (ROOT / "core").rglob("*.py")}
    assert {path.resolve() for name, path in modules().items() if name.startswith("core")} == files
    assert {"core.compaction.planner", "core.summarizer", "core.recall.ranking"} <= set(modules())


def test_the_ui_guard_sees_a_nested_module_and_a_relative_import(tmp_path: Path) -> None:
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    deep = tmp_path / "core" / "a" / "b"
    deep.mkdir(parents=True)
    for folder in (tmp_path / "core", tmp_path / "core" / "a", deep):
        (folder / "__init__.py").write_text("", encoding="utf-8")
    (deep / "view.py").write_text("def draw() -> None:\n    import textual.app\n", "utf-8")
    (deep / "sibling.py").write_text("from .view import draw\n", "utf-8")
    assert ui_imports(tmp_path) == ["core.a.b.view -> textual.app"]
    assert _imports(deep / "sibling.py", root=tmp_path) == {
        "core.a.b.view",
        "core.a.b.view.draw",
    }
    (tmp_path / "core" / "a" / "__init__.py").write_text("from . import b\n", "utf-8")
    assert _imports(tmp_path / "core" / "a" / "__init__.py", root=tmp_path) == {
        "core.a",
        "core.a.b",
    }


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


def shell_imports(pure: set[str], shell: set[str], root: Path = ROOT) -> list[str]:
    """`module -> target` for each import, run when a module of `pure` runs, of a module the
    tables place in `shell` (a module without a row of its own goes with its package's).
    Importing `core.a.b` runs `core/__init__.py` and `core/a/__init__.py` first: what those
    import at module level runs too (`… (run by core.a)`)."""
    known = modules(root)

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

    found: set[str] = set()
    for name, path in known.items():
        module = table_of_pure(name, pure)
        if module is None:
            continue
        imported = _imports(path, runtime_only=True, root=root)
        found.update(
            f"{module} -> {target}" for target in map(table_of, imported) if target is not None
        )
        for package, name_run in _package_inits_run({name, *imported}, known, pure, root):
            target = table_of(name_run)
            if target is not None:
                found.add(f"{module} -> {target} (run by {package})")
    return sorted(found)


def _package_inits_run(
    names: set[str], known: dict[str, Path], pure: set[str], root: Path
) -> list[tuple[str, str]]:
    """(package, name) for each module-level import of a package `__init__.py` that runs
    when the modules `names` are imported: the packages above each (Python imports a module's
    parents first), and the packages above what those import in turn. A package of the pure
    table is left out: its imports are checked as its own."""

    def packages_of(name: str) -> set[str]:
        while name and name not in known:
            name = name.rpartition(".")[0]
        out: set[str] = set()
        while name:
            if name in known and known[name].name == "__init__.py":
                out.add(name)
            name = name.rpartition(".")[0]
        return out

    todo = set().union(*map(packages_of, names)) if names else set()
    seen: set[str] = set()
    runs: list[tuple[str, str]] = []
    while todo:
        package = todo.pop()
        seen.add(package)
        if table_of_pure(package, pure) is not None:
            continue
        for name in _imports(known[package], runtime_only=True, module_level=True, root=root):
            runs.append((package, name))
            todo |= packages_of(name) - seen
    return runs


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


def test_the_purity_guard_follows_the_package_inits_an_import_runs(tmp_path: Path) -> None:
    """A pure module deep in a folder imports nothing of the shell itself, but importing it
    runs its packages' `__init__.py`: what they import at module level counts; what they
    import inside a function (run only when called) does not."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    files = {
        "core/__init__.py": "",
        "core/store/__init__.py": "",
        "core/store/disk.py": "",
        "core/algo/__init__.py": "def lazy() -> None:\n    from core.store import disk\n",
        "core/algo/deep/__init__.py": "",
        "core/algo/deep/pure.py": "X = 1\n",
        "core/user.py": "from core.algo.deep.pure import X\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    pure, shell = {"core.algo.deep.pure", "core.user"}, {"core.store"}
    assert shell_imports(pure, shell, tmp_path) == []
    (tmp_path / "core/algo/__init__.py").write_text("from ..store.disk import read\n", "utf-8")
    assert shell_imports(pure, shell, tmp_path) == [
        "core.algo.deep.pure -> core.store (run by core.algo)",
        "core.user -> core.store (run by core.algo)",
    ]


def test_the_folders_hold_their_layer() -> None:
    """The folders are the design's layers (issue 21): `compaction/` holds pure logic only, and
    `store/` and `maintenance/` only shell, so a module cannot drift into the wrong folder
    without its row (and the purity check above) saying so."""
    pure, shell = _doc_table(PURE_HEADING), _doc_table(SHELL_HEADING)
    layers = {"core.compaction": pure, "core.store": shell, "core.maintenance": shell}
    misplaced = sorted(
        name
        for name in modules()
        for folder, table in layers.items()
        if name.startswith(folder + ".") and name not in table
    )
    assert misplaced == []
