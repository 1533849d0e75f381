"""The README tour and the marked samples of docs/CLI.md are what the program prints (issue
22 item 13): `python -m inspector.cli.docs_samples --write` writes them from the deterministic
demo, and this test runs them again and compares (ids, times and timings masked)."""

from __future__ import annotations

import pytest

from inspector.cli.docs_samples import DOCS, REPO, generate, marked, normalized, rewrite


def test_rewrite_replaces_only_marked_blocks() -> None:
    text = "a\n<!-- sample: x -->\n```console\nold\n```\n```console\nhand\n```\n"
    new = rewrite(text, {"x": "$ session-inspector status\nnew\n"})
    assert "new" in new and "old" not in new and "hand" in new
    assert marked(new) == {"x": "$ session-inspector status\nnew\n"}
    assert normalized("ev_" + "a" * 32 + " 12 ms") == "ev_… N ms"


@pytest.mark.extended
@pytest.mark.parametrize("doc", sorted(DOCS))
def test_docs_samples_match_a_fresh_run(doc: str) -> None:
    text = (REPO / doc).read_text(encoding="utf-8")
    blocks = generate(doc)
    assert set(blocks) <= set(marked(text)), "every sample has its marker"
    for name, body in blocks.items():
        assert normalized(marked(text)[name]) == normalized(body), (
            f"{doc}: sample {name} differs from what the program prints now; "
            "run `python -m inspector.cli.docs_samples --write`"
        )
