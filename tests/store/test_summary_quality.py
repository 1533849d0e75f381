"""What compaction keeps for the model, through MemoryManager (issue 10, summaries).

A long synthetic coding session is compacted many times; after every pass summary.md must
still name the compacted requests (their first 40 characters) and edited paths (whole), no
chunk summary may exceed max_summary_tokens, no summary may nest another, and summary.md
stays within `summary_md_bound`. Run as a script for the figures:
`.venv/bin/python -m tests.store.test_summary_quality`.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from core.compaction.summaries import summary_md_bound
from core.config import CompactionConfig, SummarizerConfig
from core.maintenance.compaction_pass import PassResult
from core.manager import MemoryManager
from core.summarizer.base import CONTINUED_REQUEST_NOTE
from core.tokens import estimate_tokens
from tests.helpers.invariants import assert_each_once, read_jsonl

NESTED_RE = re.compile(
    r"\((?:system_event|system|screen)\)\s*(?:Original request|Goal|Early progress|Turn Context)"
    r"|- (?:Original request|Early progress|Goal|Progress):\s*-"
)


def nested(text: str) -> list[str]:
    """Lines of a summary that carry another summary inside them (labels and all)."""
    bad: list[str] = []
    labels = ("Original request:", "Turn Context (split turn):")
    for line in text.split("\n"):
        body = line.strip()
        inner = body.count("Original request:") + body.count("Turn Context (split turn)")
        if NESTED_RE.search(body) or inner > (1 if body in labels else 0):
            bad.append(line)
    if text.count("Turn Context (split turn):") > 1:
        bad.append("(two split-turn markers in one summary)")
    return bad


def test_the_nesting_detector_sees_the_old_failure() -> None:
    old = "- (system_event) Original request: - (the pinned root input…) Early progress: - (sy…"
    assert nested(old) == [old]
    assert nested("Goal:\n- Run 1\nProgress:\n- Request: Run 1\n  edited: a.py") == []
    split = "Goal:\n- x\n\n---\n\nTurn Context (split turn):\nOriginal request:\n- y"
    assert nested(split) == []


def config(**changes: Any) -> CompactionConfig:
    base: dict[str, Any] = {
        "context_window": 12000,
        "reserve_tokens": 1500,
        "count_compress_after_events": 40,
        "keep_recent_tokens": 1000,
        "hot_window_events": 16,
        "summary_max_chunks": 4,
        "max_rolling_summary_lines": 40,
    }
    base.update(changes)
    return CompactionConfig(**base)


def norm(text: str) -> str:
    return " ".join(text.split())


@dataclass
class Figures:
    passes: int = 0
    requests_checked: int = 0
    requests_named: int = 0
    paths_checked: int = 0
    paths_named: int = 0
    over_budget: int = 0
    nested: int = 0
    over_bound: int = 0
    chunks: int = 0
    max_summary_md_tokens: int = 0
    missing: list[str] = field(default_factory=list)

    @property
    def request_rate(self) -> float:
        return self.requests_named / max(1, self.requests_checked)

    @property
    def path_rate(self) -> float:
        return self.paths_named / max(1, self.paths_checked)


class Session:
    """Plays a coding agent: runs with edits to distinct paths, commands, reads, answers."""

    def __init__(self, root: Path, cfg: CompactionConfig) -> None:
        self.root = root
        self.cfg = cfg
        self.mm = MemoryManager(root, cfg)
        self.ids: list[str] = []
        self.requests: dict[str, str] = {}  # event id -> request text
        self.edits: dict[str, list[str]] = {}  # tool_call id -> paths
        self.figures = Figures()
        self.n = 0
        self.checking = True
        self.mm.on_pass = self.after_pass

    def run(self, r: int, *, tools: int = 6, check: bool = True) -> None:
        text = (
            f"Run {r}: in the billing service, make invoice_{r} totals round half-even "
            f"and add a regression test for ticket BILL-{1000 + r}; keep the CSV format."
        )
        event = self.mm.begin_run(text)
        self.ids.append(event["id"])
        self.requests[event["id"]] = text
        for t in range(tools):
            self.n += 1
            call_id = f"c{self.n}"
            if t % 3 == 0:
                path = f"services/billing/src/invoice_{r}/rounding_{t}.py"
                call = {"type": "tool_call", "name": "edit", "tool_call_id": call_id,
                        "arguments": {"path": path, "oldText": "round(x)" + " " * 200,
                                      "newText": "quantize(x)" + " " * 200}}  # fmt: skip
                result = "Successfully replaced text in " + path
            elif t % 3 == 1:
                command = f"pytest -q tests/test_invoice_{r}.py -k t{t}"
                call = {"type": "tool_call", "name": "bash", "tool_call_id": call_id,
                        "arguments": {"command": command}}  # fmt: skip
                result = "....\n4 passed in 0.31s\n" + "log line\n" * 40
            else:
                call = {"type": "tool_call", "name": "read", "tool_call_id": call_id,
                        "arguments": {"path": f"services/billing/README_{r}.md"}}  # fmt: skip
                result = "# Billing\nfrom decimal import ROUND_HALF_EVEN\n" + "text " * 150
            stored = self.mm.append(call)
            self.ids.append(stored["id"])
            if call["name"] == "edit":
                self.edits[stored["id"]] = [call["arguments"]["path"]]  # type: ignore[index]
            done = self.mm.append({"type": "tool_result", "name": call["name"],
                                   "tool_call_id": call_id, "content": result})  # fmt: skip
            self.ids.append(done["id"])
            self.pass_(check)
        answer = self.mm.commit_run(f"Invoice {r} totals now round half-even; test added.")
        self.mm.wait_for_maintenance(30)
        self.ids.append(answer["id"])
        self.pass_(check)

    def pass_(self, check: bool) -> None:
        self.checking = check
        self.mm.save()

    def after_pass(self, result: PassResult) -> None:
        """Every pass, the background ones `commit_run` asks for included."""
        if result.compacted:
            self.figures.passes += 1
            if self.checking:
                self.check()

    def check(self) -> None:
        session = self.root / "session"
        summary_md = (session / "summary.md").read_text(encoding="utf-8")
        hot = {e.get("id") for e in read_jsonl(session / "events.jsonl")}
        flat = norm(summary_md)
        f = self.figures
        for eid, text in self.requests.items():
            if eid in hot:
                continue
            f.requests_checked += 1
            if norm(text)[:40] in flat:
                f.requests_named += 1
            else:
                f.missing.append(f"request {norm(text)[:40]!r}")
        for eid, paths in self.edits.items():
            if eid in hot:
                continue
            for path in paths:
                f.paths_checked += 1
                if re.search(rf"(?<![\w/.-]){re.escape(path)}(?![\w/-])", summary_md):
                    f.paths_named += 1
                else:
                    f.missing.append(f"path {path}")
        index = yaml.safe_load((session / "chunks" / "index.yaml").read_text(encoding="utf-8"))
        chunks = index["chunks"]
        f.chunks = len(chunks)
        limit = self.cfg.summarizer.max_summary_tokens
        f.over_budget = sum(1 for c in chunks if estimate_tokens(c["summary"]) > limit)
        f.nested = sum(len(nested(c["summary"])) for c in chunks)
        rolling = summary_md.split("## Rolling Summary")[1].split("## Recent Chunks")[0]
        f.nested += len(nested(rolling))
        size = estimate_tokens(summary_md)
        f.max_summary_md_tokens = max(f.max_summary_md_tokens, size)
        if size > summary_md_bound(self.cfg):
            f.over_bound += 1


def test_long_coding_session_keeps_requests_and_edited_paths(tmp_path: Path) -> None:
    session = Session(tmp_path / "memory", config())
    for r in range(30):
        session.run(r)
    f = session.figures
    assert f.passes >= 10, f.passes
    assert f.request_rate >= 0.95, f.missing[:10]
    assert f.path_rate >= 0.95, f.missing[:10]
    assert f.over_budget == 0 and f.nested == 0 and f.over_bound == 0
    assert_each_once(tmp_path / "memory", session.ids)


def split_turn_config() -> CompactionConfig:
    return config(keep_recent_tokens=300, count_compress_after_events=10_000)


def pairs(mm: MemoryManager, tag: str, count: int, start: int) -> list[str]:
    ids: list[str] = []
    for k in range(start, start + count):
        path = f"src/{tag}/step_{k}.py"
        call = mm.append({"type": "tool_call", "name": "edit", "tool_call_id": f"{tag}{k}",
                          "arguments": {"path": path, "newText": "v = 1\n" * 30}})  # fmt: skip
        done = mm.append({"type": "tool_result", "name": "edit", "tool_call_id": f"{tag}{k}",
                          "content": "ok " + "." * 200})  # fmt: skip
        ids += [call["id"], done["id"]]
    return ids


def chunk_summaries(root: Path) -> list[str]:
    index = yaml.safe_load((root / "session" / "chunks" / "index.yaml").read_text())
    return [c["summary"] for c in index["chunks"]]


def prefix_request(summary: str) -> str:
    prefix = summary.split("Turn Context (split turn):\n", 1)[1]
    lines = prefix.split("\n")
    return lines[lines.index("Original request:") + 1]


def test_split_turn_names_its_own_request_after_it_was_compacted(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    mm = MemoryManager(root, split_turn_config())
    mm.begin_run("A: set up the project skeleton with a README and a licence")
    pairs(mm, "a", 6, 0)
    mm.begin_run("B: add the parser module and its tests, nothing else")
    pairs(mm, "b", 6, 0)
    first = mm.save(force=True)
    assert first.compacted and first.is_split_turn, first.reason
    pairs(mm, "b", 6, 6)
    second = mm.save(force=True)
    assert second.compacted and second.is_split_turn, second.reason
    one, two = chunk_summaries(root)
    assert prefix_request(one) == "- B: add the parser module and its tests, nothing else"
    # B's user_input is in chunk one by now; the turn is still B's, not the pinned root A's,
    # and chunk two points back instead of naming B's request again (contract §5, Turn
    # start: the synthetic event below carries it).
    assert prefix_request(two) == CONTINUED_REQUEST_NOTE
    assert "A: set up" not in two
    assert "src/b/step_0.py" in two, "what B did before carries over, flattened"
    hot = read_jsonl(root / "session" / "events.jsonl")
    assert hot[1]["meta"]["chunk_id"] == second.chunk_id
    assert hot[1]["content"].split("\n")[1] == (
        "- B: add the parser module and its tests, nothing else"
    )


def test_forty_split_turn_passes_never_nest(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    cfg = split_turn_config()
    mm = MemoryManager(root, cfg)
    mm.begin_run("Root: migrate the device fleet to firmware 7.2")
    mm.begin_run("Long task: walk every device and flash it, one by one")
    done = 0
    for _ in range(40):
        pairs(mm, "d", 3, done)
        done += 3
        result = mm.save(force=True)
        assert result.compacted and result.is_split_turn, result.reason
    summaries = chunk_summaries(root)
    assert len(summaries) == 40
    summary_md = (root / "session" / "summary.md").read_text()
    rolling = summary_md.split("## Rolling Summary")[1].split("## Recent Chunks")[0]
    assert nested(rolling) == []
    assert [s for s in summaries if nested(s)] == []
    assert prefix_request(summaries[0]) == "- Long task: walk every device and flash it, one by one"
    for summary in summaries[1:]:
        # the request is named once, by the chunk that compacted it (contract §5, Turn start)
        assert prefix_request(summary) == CONTINUED_REQUEST_NOTE
        assert estimate_tokens(summary) <= cfg.summarizer.max_summary_tokens
    hot = read_jsonl(root / "session" / "events.jsonl")
    assert "Long task: walk every device" in hot[1]["content"], "the synthetic event carries it"
    # The run's 40 chunks fold into one Rolling Summary line, not 40 copies of a label.
    run_lines = [ln for ln in rolling.split("\n") if "Long task" in ln]
    assert len(run_lines) == 1, run_lines
    assert estimate_tokens(summary_md) <= summary_md_bound(cfg)


def test_split_turn_chunk_summary_fits_max_summary_tokens(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    cfg = config(keep_recent_tokens=300, summarizer=SummarizerConfig(max_summary_tokens=160))
    mm = MemoryManager(root, cfg)
    mm.begin_run("Root request")
    for r in range(4):
        mm.begin_run(f"Run {r}: touch many files in module {r} " + "with care " * 20)
        pairs(mm, f"m{r}", 8, 0)
    result = mm.save(force=True)
    assert result.compacted and result.is_split_turn
    (summary,) = chunk_summaries(root)
    assert "\n\n---\n\nTurn Context (split turn):\n" in summary
    assert estimate_tokens(summary) <= 160
    for r in range(3):
        assert f"Run {r}: touch many files in module {r}"[:30] in summary


def test_focus_steers_and_is_never_stored(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    mm = MemoryManager(root, config(summarizer=SummarizerConfig(max_summary_tokens=90)))
    mm.begin_run("Root request")
    mm.begin_run("Tidy the workspace")
    for k in range(30):
        command = "rm cache/database.sqlite" if k == 7 else f"ls dir{k}"
        mm.append({"type": "tool_call", "name": "bash", "tool_call_id": f"s{k}",
                   "arguments": {"command": command}})  # fmt: skip
        mm.append({"type": "tool_result", "name": "bash", "tool_call_id": f"s{k}",
                   "content": "ok"})  # fmt: skip
    mm.begin_run("Now write the report")
    result = mm.save(force=True, focus="keep what happened to the database")
    assert result.compacted
    (summary,) = chunk_summaries(root)
    assert "rm cache/database.sqlite" in summary
    stored = (root / "session" / "summary.md").read_text() + "\n".join(
        e.get("content") or ""
        for e in read_jsonl(root / "session" / "events.jsonl")
        if isinstance(e.get("content"), str)
    )
    assert "Focus" not in summary and "keep what happened" not in stored


def main() -> int:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        session = Session(Path(tmp) / "memory", config())
        for r in range(30):
            session.run(r)
        f = session.figures
        print(f"passes: {f.passes}, chunks: {f.chunks}")
        print(
            f"requests named after every pass: {f.requests_named}/{f.requests_checked} "
            f"({100 * f.request_rate:.1f} %)"
        )
        print(
            f"edited paths named after every pass: {f.paths_named}/{f.paths_checked} "
            f"({100 * f.path_rate:.1f} %)"
        )
        print(f"chunk summaries over max_summary_tokens: {f.over_budget}")
        print(f"nested summary lines: {f.nested}")
        print(
            f"largest summary.md: {f.max_summary_md_tokens} tokens "
            f"(bound {summary_md_bound(session.cfg)}, over: {f.over_bound})"
        )
        for item in f.missing[:10]:
            print("  missing:", item)
    return 0


if __name__ == "__main__":
    sys.exit(main())
