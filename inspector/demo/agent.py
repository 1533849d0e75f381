"""The demo agent: a scripted device agent driving `MemoryManager` exactly as a runtime does.

`begin_run` with the user's request, `record_prompt_tokens` before each model decision (when
the "model" reports usage), tool calls and results as they happen, `commit_run` with the answer
(which requests maintenance on the manager's background thread).

One difference from a real runtime, on purpose: after each commit the demo waits for the
background pass (`wait_for_maintenance`). A real runtime never waits — it goes on with the next
turn while the pass runs — but waiting makes every play of a scenario compact at the same
points, so the demo is reproducible and its tests can assert what it shows.

The player that runs a scenario over this agent step by step is `inspector.demo.player`;
the scenarios (`inspector.demo.scenarios`) drive the agent and this module imports neither,
so the agent, the scenarios and the player import one way only.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import SessionMemoryError
from core.text import compact_json
from core.tokens import estimate_event_tokens, estimate_tokens
from inspector.demo.content import SYSTEM_PROMPT_TOKENS, TASKS, Task

DEMO_SYSTEM_PROMPT = (
    "You are a device agent on an Android phone. Use the tools to act; answer briefly."
)
"""The system prompt of the demo's model calls (its provider figure counts a longer one,
SYSTEM_PROMPT_TOKENS, with the tool schemas)."""
DEMO_TASK = "Continue with the user's request."

if TYPE_CHECKING:
    from core.maintenance.compaction_pass import PassResult
    from core.manager import MemoryManager

CRASH_FAULT = "after_events_replace"


@dataclass(frozen=True)
class DemoStep:
    """One runtime action the demo just performed."""

    description: str
    kind: str
    """scenario, note, begin_run, prompt_tokens, append, batch, commit, maintenance, rotate,
    recall, crash, done."""
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class DemoStats:
    """What a play did so far (the TUI shows it; tests assert on it)."""

    steps: int = 0
    events_appended: int = 0
    runs: int = 0
    passes: int = 0
    compactions: int = 0
    token_path: int = 0
    count_path: int = 0
    split_turns: int = 0
    rotations: int = 0
    recalls: int = 0
    pending_recalled: int = 0
    crashes: int = 0
    maintenance_errors: int = 0
    chunk_ids: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _short(text: str, limit: int = 70) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _skip_reason(result: PassResult) -> str:
    trigger = result.trigger
    reason = str(result.reason or "")
    if trigger is None or not reason.startswith("not needed"):
        return _short(reason, 90)
    if trigger.prompt_tokens is not None and trigger.percent is not None:
        # Rounded down: 69.8 % must not read as "70% < 70%".
        return (
            f"not needed: prompt {trigger.prompt_tokens:,} tokens, {int(trigger.percent)}% of "
            f"{trigger.context_window:,} < {trigger.compress_at_percent:g}%"
        )
    return f"not needed: {trigger.event_count} events ≤ {trigger.count_threshold}"


class DemoAgent:
    """The runtime side: every method performs one MemoryManager action and describes it."""

    def __init__(self, manager: MemoryManager, rng: random.Random, stats: DemoStats) -> None:
        self.manager = manager
        self.rng = rng
        self.stats = stats
        self.record_tokens = True
        """Whether the simulated model reports prompt sizes (False: the count rule decides)."""
        self.hot_tokens = 0
        self.summary_tokens = 0
        self._passes_before = 0
        self._errors_before = 0
        self.last_pass: PassResult | None = None

    # -- events ----------------------------------------------------------------------------

    def _stored(self, events: Sequence[Mapping[str, Any]]) -> None:
        self.stats.events_appended += len(events)
        self.hot_tokens += sum(estimate_event_tokens(dict(e)) for e in events)

    def new_call_id(self) -> str:
        return f"call_{self.rng.getrandbits(48):012x}"

    def user(self, text: str) -> DemoStep:
        event = self.manager.begin_run(text)
        self._stored([event])
        self.stats.runs += 1
        return DemoStep(f"user: {_short(text)}", "begin_run", {"event_id": event["id"]})

    def model_call(self) -> DemoStep:
        """One LLM call: the prompt is the system prompt, summary.md and the hot window."""
        prompt = SYSTEM_PROMPT_TOKENS + self.summary_tokens + self.hot_tokens
        # What the model is sent; build_prompt leaves the call's line in the prompt ledger, so
        # the demo can be walked call by call (`timeline`, `prompt --at`).
        self.manager.build_prompt(DEMO_SYSTEM_PROMPT, DEMO_TASK)
        if not self.record_tokens:
            return DemoStep(
                f"model call (~{prompt:,} prompt tokens; no usage reported)",
                "prompt_tokens",
                {"prompt_tokens": None},
            )
        self.manager.record_prompt_tokens(prompt)
        return DemoStep(
            f"model call: {prompt:,} prompt tokens recorded",
            "prompt_tokens",
            {"prompt_tokens": prompt},
        )

    def append(self, event: Mapping[str, Any], description: str) -> DemoStep:
        stored = self.manager.append(event)
        self._stored([stored])
        return DemoStep(description, "append", {"event_id": stored["id"], "type": stored["type"]})

    def tool_call(self, name: str, arguments: Any, call_id: str) -> DemoStep:
        event = {
            "type": "tool_call",
            "role": "assistant",
            "name": name,
            "tool_call_id": call_id,
            "arguments": arguments,
        }
        return self.append(event, f"tool call: {name}({_short(compact_json(arguments), 50)})")

    def tool_result(self, name: str, content: Any, call_id: str) -> DemoStep:
        event = {
            "type": "tool_result",
            "role": "tool",
            "name": name,
            "tool_call_id": call_id,
            "content": content,
        }
        if isinstance(content, dict) and "data" in content:
            size = len(str(content["data"]))
            what = f"screenshot ({size:,} chars of base64, scrubbed at append)"
        elif isinstance(content, str) and '"data"' in content:
            what = "screenshot as a JSON string (scrubbed at append)"
        else:
            what = _short(content if isinstance(content, str) else str(content), 60)
        return self.append(event, f"tool result: {name} → {what}")

    def screen(self, text: str) -> DemoStep:
        event = {"type": "screen_context", "role": "system", "content": text}
        return self.append(event, f"screen context: {_short(text, 60)}")

    def system(self, text: str) -> DemoStep:
        event = {"type": "system_event", "role": "system", "content": text}
        return self.append(event, f"system event: {_short(text, 60)}")

    def say(self, text: str) -> DemoStep:
        event = {"type": "role_output", "role": "assistant", "name": "planner", "content": text}
        return self.append(event, f"planner: {_short(text, 60)}")

    def batch(self, events: Sequence[Mapping[str, Any]], description: str) -> DemoStep:
        stored = self.manager.append_many(events, where="demo batch")
        self._stored(stored)
        return DemoStep(description, "batch", {"count": len(stored)})

    def commit(self, text: str) -> DemoStep:
        self._passes_before = self.manager.telemetry.passes
        self._errors_before = self.manager.telemetry.errors
        event = self.manager.commit_run(text)
        self._stored([event])
        return DemoStep(
            f"answer: {_short(text, 60)} (commit_run: maintenance requested)",
            "commit",
            {"event_id": event["id"]},
        )

    # -- maintenance and the rest of the runtime API ---------------------------------------

    def refresh_sizes(self) -> None:
        """Re-read the hot window and summary.md sizes after the files changed under us."""
        self.hot_tokens = sum(self.manager.store.read_events().tokens)
        summary = self.manager.paths.summary
        self.summary_tokens = 0
        if self.manager.has_compressed_history() and summary.exists():
            self.summary_tokens = estimate_tokens(summary.read_text(encoding="utf-8"))

    def settle(self) -> DemoStep:
        """Wait for the pass commit_run requested (see the module docstring: demo only)."""
        telemetry = self.manager.telemetry
        self.manager.wait_for_maintenance()
        passes = telemetry.passes - self._passes_before
        errors = telemetry.errors - self._errors_before
        self.stats.passes += passes
        if errors:
            self.stats.maintenance_errors += errors
            return DemoStep(
                f"maintenance failed: {telemetry.last_error}",
                "maintenance",
                {"compacted": False, "error": telemetry.last_error},
            )
        result = telemetry.last_pass if passes else None
        self.last_pass = result
        if result is None:
            return DemoStep("maintenance: no pass ran", "maintenance", {"compacted": False})
        if not result.compacted:
            return DemoStep(
                f"maintenance: not compacted ({_skip_reason(result)})",
                "maintenance",
                {"compacted": False, "reason": result.reason},
            )
        return self._compacted(result)

    def _compacted(self, result: PassResult) -> DemoStep:
        self.stats.compactions += 1
        path = result.plan.path if result.plan is not None else None
        if path == "token":
            self.stats.token_path += 1
        elif path == "count":
            self.stats.count_path += 1
        if result.is_split_turn:
            self.stats.split_turns += 1
        if result.chunk_id:
            self.stats.chunk_ids.append(result.chunk_id)
        self.refresh_sizes()
        trigger = result.trigger.trigger if result.trigger is not None else None
        parts = [f"{path} path" if path else "", "split turn" if result.is_split_turn else ""]
        pinned = result.plan is not None and result.plan.pinned_root_index is not None
        if pinned:
            parts.append("root pinned")
        how = ", ".join(p for p in parts if p)
        return DemoStep(
            f"compaction ({trigger or 'forced'} trigger): {result.compacted_event_count} events → "
            f"{result.chunk_id} ({how}); hot window now {result.kept_event_count} events",
            "maintenance",
            {
                "compacted": True,
                "chunk_id": result.chunk_id,
                "path": path,
                "trigger": trigger,
                "is_split_turn": result.is_split_turn,
                "pass": result.to_json(),
            },
        )

    def rotate(self, why: str) -> DemoStep:
        result = self.manager.rotate()
        self.stats.rotations += 1
        self.hot_tokens = 0
        self.summary_tokens = 0
        return DemoStep(
            f"rotate ({why}): session {result.closed_session_id} archived",
            "rotate",
            result.to_json(),
        )

    def recall(self, query: str) -> DemoStep:
        result = self.manager.recall(query, limit=3)
        self.stats.recalls += 1
        self.stats.pending_recalled += result.pending_chunks_recalled
        found = ", ".join(
            f"{hit.chunk_id} ({hit.source}, {hit.score:.2f})" for hit in result.results
        )
        return DemoStep(
            f"recall {query!r}: {found or 'nothing found'}",
            "recall",
            result.to_json(),
        )

    def crash(self) -> DemoStep:
        """A pass killed half way: a child process runs `compact --force` with a fault point.

        It dies right after replacing events.jsonl and before indexing the chunk, so the
        evidence stays in chunks/pending/ until the next pass or `repair` finishes it.
        """
        from inspector.demo.config import config_yaml

        self.manager.wait_for_maintenance()
        project = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["SESSION_MEMORY_FAULT"] = CRASH_FAULT
        env.pop("SESSION_INSPECTOR_CONFIG", None)
        env["PYTHONPATH"] = project + (
            os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
        )
        with tempfile.TemporaryDirectory(prefix="session-inspector-crash-") as tmp:
            config_path = Path(tmp) / "extraction.yaml"
            config_path.write_text(config_yaml(self.manager.config), encoding="utf-8")
            command = [
                sys.executable,
                "-m",
                "inspector",
                "--memory-dir",
                str(self.manager.memory_dir),
                "--config",
                str(config_path),
                "compact",
                "--force",
            ]
            proc = subprocess.run(
                command, env=env, capture_output=True, text=True, timeout=120, check=False
            )
        if proc.returncode != 99:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise SessionMemoryError(
                f"demo crash step: the pass was expected to die with status 99 at "
                f"{CRASH_FAULT}, it exited {proc.returncode} ({last})"
            )
        self.stats.crashes += 1
        self.refresh_sizes()
        return DemoStep(
            f"crash: a pass died at {CRASH_FAULT} (exit 99); its evidence is left in "
            "chunks/pending/",
            "crash",
            {"fault": CRASH_FAULT},
        )

    def pending_query(self) -> str | None:
        """A few words of the newest event a crashed pass left in chunks/pending/."""
        from core.events import is_synthetic
        from core.index.pending import list_pending

        for evidence in reversed(list_pending(self.manager.paths)):
            for event in reversed(evidence.events):
                content = event.get("content")
                if isinstance(content, str) and content.strip() and not is_synthetic(event):
                    return " ".join(content.split()[:5])
        return None

    def note(self, text: str) -> DemoStep:
        return DemoStep(text, "note")

    # -- tasks -----------------------------------------------------------------------------

    def play_task(self, task: Task | str) -> Iterator[DemoStep]:
        """Play a task (content.TASKS name or action list): user, calls, answer, maintenance."""
        actions = TASKS[task](self.rng) if isinstance(task, str) else task
        after_say = False
        for action in actions:
            kind = action[0]
            if kind in ("call", "parallel", "commit", "say") and not after_say:
                yield self.model_call()
            after_say = kind == "say"
            if kind == "user":
                yield self.user(action[1])
            elif kind == "call":
                _, name, arguments, result = action
                call_id = self.new_call_id()
                yield self.tool_call(name, arguments, call_id)
                yield self.tool_result(name, result, call_id)
            elif kind == "parallel":
                calls = [
                    (name, args, result, self.new_call_id()) for name, args, result in action[1]
                ]
                for name, args, _result, call_id in calls:
                    yield self.tool_call(name, args, call_id)
                for name, _args, result, call_id in calls:
                    yield self.tool_result(name, result, call_id)
            elif kind == "screen":
                yield self.screen(action[1])
            elif kind == "system":
                yield self.system(action[1])
            elif kind == "say":
                yield self.say(action[1])
            elif kind == "commit":
                yield self.commit(action[1])
                yield self.settle()
            else:
                raise ValueError(f"unknown demo action {kind!r}")
