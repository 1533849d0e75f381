"""The README tour and the marked samples of docs/CLI.md are what the program prints (issue
22 item 13): `python -m inspector.cli.docs_samples --write` writes them from the deterministic
demo, and this test runs them again and compares (ids, times and timings masked)."""

from __future__ import annotations

import pytest

from inspector.cli.docs_samples import (
    DOCS,
    REPO,
    generate,
    marked,
    normalized,
    rewrite,
    unmarked,
)


def test_rewrite_replaces_only_marked_blocks() -> None:
    text = "a\n<!-- sample: x -->\n```console\nold\n```\n```console\nhand\n```\n"
    new = rewrite(text, {"x": "$ session-inspector status\nnew\n"})
    assert "new" in new and "old" not in new and "hand" in new
    assert marked(new) == {"x": "$ session-inspector status\nnew\n"}
    assert normalized("ev_" + "a" * 32 + " 12 ms") == "ev_… N ms"
    assert unmarked(text) == [6] and unmarked(new) == [7]  # the sample grew a line


def test_every_console_block_of_cli_md_is_a_generated_sample() -> None:
    text = (REPO / "docs" / "CLI.md").read_text(encoding="utf-8")
    assert unmarked(text) == [], (
        "docs/CLI.md: ```console blocks without a `<!-- sample: NAME -->` marker at lines "
        f"{unmarked(text)}; add the sample to DOCS in inspector/cli/docs_samples.py"
    )
    names = {sample.name for sample in DOCS["docs/CLI.md"]}
    assert set(marked(text)) == names, "every marker in docs/CLI.md names a sample the script runs"


@pytest.mark.extended
@pytest.mark.parametrize("doc", sorted(DOCS))
def test_docs_samples_match_a_fresh_run(doc: str) -> None:
    text = (REPO / doc).read_text(encoding="utf-8")
    blocks = generate(doc)
    assert set(blocks) <= set(marked(text)), "every sample has its marker"
    if doc == "docs/CLI.md":
        assert unmarked(text) == [], "every console sample of docs/CLI.md is generated"
    for name, body in blocks.items():
        assert normalized(marked(text)[name]) == normalized(body), (
            f"{doc}: sample {name} differs from what the program prints now; "
            "run `python -m inspector.cli.docs_samples --write`"
        )
