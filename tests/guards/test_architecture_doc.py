"""docs/ARCHITECTURE.md is the module map a newcomer reads first: it must name every module
that exists and no module that does not."""

from __future__ import annotations

import re

from tests.helpers.paths import REPO

ROOT = REPO
DOC = ROOT / "docs" / "ARCHITECTURE.md"
SKIP = {"__init__.py", "__main__.py"}


def _rows() -> dict[str, list[tuple[str, str]]]:
    """Per top-level package (core, inspector): (first cell, whole row) of its tables."""
    rows: dict[str, list[tuple[str, str]]] = {"core": [], "inspector": []}
    package = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^## (core|inspector)/", line)
        if heading:
            package = heading.group(1)
        elif line.startswith("## "):
            package = None
        elif package and line.startswith("| `"):
            first = line.split("|")[1]
            for name in re.findall(r"`([^`]+)`", first):
                rows[package].append((name, line))
    return rows


def _modules(package: str) -> set[str]:
    """Each module file (`x.py`) and each subpackage (`x/`) of `package`, relative to it."""
    base = ROOT / package
    found = {p.name for p in base.glob("*.py") if p.name not in SKIP}
    found |= {f"{p.name}/" for p in base.iterdir() if (p / "__init__.py").is_file()}
    return found


def test_every_module_named_in_the_doc_exists() -> None:
    for package, rows in _rows().items():
        for name, _ in rows:
            path = ROOT / package / name
            assert path.exists(), f"docs/ARCHITECTURE.md names {package}/{name}, which is gone"


def test_every_module_is_in_the_doc() -> None:
    rows = _rows()
    for package in ("core", "inspector"):
        named = {name for name, _ in rows[package]}
        missing = sorted(_modules(package) - named)
        assert not missing, f"docs/ARCHITECTURE.md lacks {package}/ modules: {missing}"


def test_every_submodule_of_a_package_is_described_in_its_row() -> None:
    """A package's row (`summarizer/`, `widgets/`, …) names each of its modules, or the
    module has a row of its own (`widgets/footer.py`)."""
    for package, rows in _rows().items():
        own_rows = {name for name, _ in rows}
        for name, row in rows:
            if not name.endswith("/") or not (ROOT / package / name / "__init__.py").exists():
                continue
            subs = {p.name for p in (ROOT / package / name).glob("*.py") if p.name not in SKIP}
            described = {
                s
                for s in subs
                if s in row or s.removesuffix(".py") in row or f"{name}{s}" in own_rows
            }
            missing = sorted(subs - described)
            assert not missing, f"the row of {package}/{name} does not name {missing}"
