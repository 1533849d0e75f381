"""A long pi coding-agent session (pi session JSONL, version 3) on a TypeScript monorepo.

~70 user turns in topics (bugs, features, a refactor, questions), the user changing direction
twice, ~350 tool calls (read / edit / write / bash) on many distinct nested paths, failing and
passing test runs, type-check errors, file contents with comments, TODOs and meeting notes.
The entry shapes follow pi's session format: a `session` header, then `message` entries with
`id`/`parentId`, assistant `content` blocks (`text`, `toolCall`), `toolResult` messages, and
`usage` (input + cacheRead + cacheWrite = the prompt). One `compaction` entry (pi compacting
its own context on a 200k-window model) appears where the original agent would have written
it; prompt sizes drop after it, as they did for the original agent.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from bench.quality.corpus_common import (
    MEETING_NOTES,
    TODO_TEXTS,
    Clock,
    PromptMeter,
    pascal,
    pick,
)
from core.tokens import estimate_tokens

P = "packages/coding-agent/src/core"
FILES: dict[str, list[str]] = {
    f"{P}/agent-session.ts": [
        "prompt",
        "abortCompaction",
        "checkCompaction",
        "handleRetryableError",
        "subscribeToAgent",
    ],
    f"{P}/session-manager.ts": [
        "appendMessage",
        "buildSessionContext",
        "getBranch",
        "migrateToCurrentVersion",
        "loadEntriesFromFile",
    ],
    f"{P}/compaction/compaction.ts": [
        "findCutPoint",
        "estimateContextTokens",
        "shouldCompact",
        "prepareCompaction",
        "generateSummary",
    ],
    f"{P}/compaction/compaction-utils.ts": [
        "serializeConversation",
        "computeFileLists",
        "formatFileOperations",
    ],
    f"{P}/compaction/branch-summary.ts": ["collectEntriesForBranchSummary", "summarizeBranch"],
    f"{P}/tools/edit.ts": ["createEditTool", "executeEdit", "resolveEditPath"],
    f"{P}/tools/edit-diff.ts": [
        "applyEditDiff",
        "normalizeLineEndings",
        "generateDiffString",
        "fuzzyFindText",
    ],
    f"{P}/tools/read.ts": ["createReadTool", "readImageAsAttachment", "formatLineNumbers"],
    f"{P}/tools/bash.ts": ["createBashTool", "killProcessTree", "truncateTail"],
    f"{P}/tools/truncate.ts": ["truncateHead", "truncateLine", "formatSize"],
    f"{P}/settings-manager.ts": ["getCompactionSettings", "setReserveTokens", "loadSettings"],
    f"{P}/model-registry.ts": ["resolveModel", "getAvailableModels", "refreshOAuthModels"],
    "packages/coding-agent/src/modes/interactive/interactive-mode.ts": [
        "handleCompactCommand",
        "renderStatusLine",
        "showSessionSelector",
    ],
    "packages/coding-agent/src/modes/interactive/components/footer.ts": [
        "FooterComponent",
        "formatTokenCount",
        "contextPercentColor",
    ],
    "packages/coding-agent/src/modes/rpc/rpc-mode.ts": ["runRpcMode", "handleRpcCommand"],
    "packages/coding-agent/src/cli/args.ts": ["parseArgs", "printHelp"],
    "packages/ai/src/providers/anthropic.ts": [
        "streamAnthropic",
        "convertMessages",
        "mapStopReason",
    ],
    "packages/ai/src/providers/openai-completions.ts": [
        "streamOpenAICompletions",
        "convertToolCalls",
        "parseUsage",
    ],
    "packages/ai/src/utils/overflow.ts": ["isContextOverflow", "OVERFLOW_PATTERNS"],
    "packages/ai/src/stream.ts": ["stream", "completeSimple", "getEnvApiKey"],
    "packages/tui/src/components/editor.ts": ["Editor", "handlePaste", "insertTextAtCursor"],
    "packages/tui/src/components/markdown.ts": ["Markdown", "renderCodeBlock", "wrapAnsiLine"],
    "packages/tui/src/tui.ts": ["TUI", "requestRender", "doRender"],
    "packages/agent/src/agent.ts": ["Agent", "runLoop", "continueAgent"],
    "packages/agent/src/types.ts": ["AgentMessage", "AgentTool", "AgentEvent"],
    "packages/coding-agent/src/utils/fix-utils.ts": ["fixTrailingNewline", "fixIndentation"],
    "packages/coding-agent/src/utils/apply-fix.ts": ["applyFix", "applyFixesInOrder"],
}
TESTS: dict[str, str] = {
    "compaction": "packages/coding-agent/test/compaction.test.ts",
    "agent-session": "packages/coding-agent/test/agent-session.test.ts",
    "edit-diff": "packages/coding-agent/test/edit-diff.test.ts",
    "session-manager": "packages/coding-agent/test/session-manager.test.ts",
    "overflow": "packages/ai/test/overflow.test.ts",
    "editor": "packages/tui/test/editor.test.ts",
    "footer": "packages/coding-agent/test/footer.test.ts",
    "fix-utils": "packages/coding-agent/test/fix-utils.test.ts",
}


@dataclass
class Topic:
    files: list[str]
    test: str
    error: str
    turns: list[tuple[str, str]]
    new_files: list[str] = field(default_factory=list)


TOPICS: list[Topic] = [
    Topic(
        [f"{P}/compaction/compaction.ts", f"{P}/agent-session.ts"],
        TESTS["compaction"],
        "TypeError: Cannot read properties of undefined (reading 'firstKeptEntryId')",
        [
            (
                "start",
                "Auto-compaction crashes when the session has a branch summary right before "
                "the cut point. Stack trace from issue #412 says findCutPoint returns undefined. "
                "Can you find out why and fix it?",
            ),
            ("fix", "The compaction tests still fail on my machine, see CI run 8812. Fix that."),
            (
                "ask",
                "Why does estimateContextTokens use the last assistant usage instead of "
                "counting everything? Just explain, don't change code.",
            ),
            (
                "extend",
                "Add a regression test for the branch-summary-before-cut case so #412 can't "
                "come back.",
            ),
        ],
    ),
    Topic(
        [f"{P}/tools/edit-diff.ts", f"{P}/tools/edit.ts"],
        TESTS["edit-diff"],
        "Error: Could not find the exact text in src/index.ts. The old text must match exactly",
        [
            (
                "start",
                "The edit tool fails on files with CRLF line endings (PI-1187). "
                "normalizeLineEndings should run on both sides before matching.",
            ),
            ("fix", "Still failing for mixed line endings in the same file. Try again."),
            (
                "change",
                "Hmm, actually let's not normalise the file on disk at all. Revert that part "
                "and only normalise for matching, then map the offsets back.",
            ),
            ("extend", "Add fuzzy matching as a fallback in fuzzyFindText, behind a flag."),
            ("fix", "npm run check complains about fuzzyFindText's return type now."),
        ],
    ),
    Topic(
        [f"{P}/session-manager.ts", "packages/coding-agent/src/core/compaction/branch-summary.ts"],
        TESTS["session-manager"],
        "Error: Session file has unknown version 4: /home/dev/.pi/agent/sessions/x.jsonl",
        [
            (
                "start",
                "Sessions written by the nightly build have version 4 headers and we refuse "
                "to load them. Make migrateToCurrentVersion tolerate newer versions with a "
                "warning.",
            ),
            ("fix", "session-manager.test.ts has two failures after your change, please look."),
            (
                "ask",
                "How does getBranch decide which entries belong to the current branch when "
                "there are two children with the same parentId?",
            ),
            (
                "extend",
                "Write a small helper to dump a session tree as text for debugging, in "
                "packages/coding-agent/src/utils/session-tree-dump.ts.",
            ),
        ],
        new_files=["packages/coding-agent/src/utils/session-tree-dump.ts"],
    ),
    Topic(
        [
            "packages/ai/src/utils/overflow.ts",
            "packages/ai/src/providers/anthropic.ts",
            "packages/ai/src/providers/openai-completions.ts",
        ],
        TESTS["overflow"],
        "AssertionError: expected false to be true // Object.is equality",
        [
            (
                "start",
                "OpenRouter returns 'This endpoint's maximum context length is 131072 tokens' "
                "and isContextOverflow doesn't catch it. Add the pattern and a test.",
            ),
            (
                "extend",
                "Also handle the llama.cpp message 'the request exceeds the available context "
                "size' in OVERFLOW_PATTERNS.",
            ),
            ("fix", "overflow.test.ts fails for the Groq fixture now."),
            (
                "ask",
                "Does convertMessages in the anthropic provider drop thinking blocks when we "
                "switch models mid-session?",
            ),
        ],
    ),
    Topic(
        [
            "packages/coding-agent/src/modes/interactive/components/footer.ts",
            "packages/coding-agent/src/modes/interactive/interactive-mode.ts",
        ],
        TESTS["footer"],
        "TypeError: formatTokenCount is not a function",
        [
            (
                "start",
                "The footer shows 'NaN%' for the context gauge right after /compact. "
                "Fix contextPercentColor and formatTokenCount to cope with unknown usage.",
            ),
            ("fix", "Now the footer test crashes: formatTokenCount is not a function."),
            (
                "change",
                "Change of plan: instead of hiding the gauge, show '?' while the size is "
                "unknown, like Claude Code does.",
            ),
            ("extend", "Make the '?' gauge dim grey and add it to the theme as contextUnknown."),
        ],
    ),
    Topic(
        [f"{P}/agent-session.ts", "packages/agent/src/agent.ts"],
        TESTS["agent-session"],
        "Error: Agent is already processing. Wait for completion before prompting again.",
        [
            (
                "start",
                "When a compaction is aborted with Escape, the next prompt throws 'Agent is "
                "already processing'. abortCompaction must reset the state.",
            ),
            ("fix", "agent-session.test.ts 'abort then prompt' still hangs, 5s timeout."),
            (
                "ask",
                "Where do we decide between auto-compaction and overflow recovery in "
                "handleRetryableError? Walk me through it.",
            ),
            (
                "extend",
                "Emit an auto_compaction_end event with aborted: true so the RPC clients can "
                "tell the difference.",
            ),
            ("fix", "The rpc-mode typecheck broke: AgentEvent has no member aborted."),
        ],
    ),
    Topic(
        [f"{P}/tools/bash.ts", f"{P}/tools/truncate.ts"],
        TESTS["agent-session"],
        "RangeError: Invalid string length",
        [
            (
                "start",
                "Running 'yes | head -c 50000000' through the bash tool crashes pi with "
                "RangeError: Invalid string length. truncateTail should stream, not concat.",
            ),
            ("fix", "The bash tool now cuts UTF-8 characters in half at the boundary."),
            (
                "extend",
                "Save the full output to a temp file and mention its path in the truncation "
                "notice, like the read tool does.",
            ),
        ],
    ),
    Topic(
        ["packages/tui/src/components/editor.ts", "packages/tui/src/tui.ts"],
        TESTS["editor"],
        "AssertionError: expected 'hello\\r\\nworld' to equal 'hello\\nworld'",
        [
            (
                "start",
                "Pasting multi-line text from Windows Terminal into the editor keeps \\r "
                "characters. handlePaste should strip them.",
            ),
            ("fix", "editor.test.ts: 'paste with CRLF' still fails."),
            (
                "change",
                "Forget the paste fix for now, a bigger rewrite of the editor is coming. "
                "Revert editor.ts and instead add a TODO pointing to TUI-77.",
            ),
            ("ask", "How does requestRender coalesce renders in tui.ts?"),
        ],
    ),
    Topic(
        [f"{P}/settings-manager.ts", f"{P}/compaction/compaction.ts"],
        TESTS["compaction"],
        "ZodError: compaction.reserveTokens: Expected number, received string",
        [
            (
                "start",
                "Let users set compaction.reserveTokens and keepRecentTokens in settings.json; "
                "getCompactionSettings should validate them.",
            ),
            ("fix", "Settings with reserveTokens as a string crash on startup with a ZodError."),
            (
                "extend",
                "Document the new settings in docs/compaction.md with an example settings.json.",
            ),
        ],
        new_files=["docs/compaction.md"],
    ),
    Topic(
        [f"{P}/model-registry.ts", "packages/coding-agent/src/cli/args.ts"],
        TESTS["agent-session"],
        "Error: Model not found: anthropic/claude-sonnet-4-5-20250929",
        [
            (
                "start",
                "pi --model claude-sonnet-4-5 fails with 'Model not found' when the OAuth "
                "models were not refreshed yet. resolveModel should refresh once and retry.",
            ),
            ("fix", "That retry loops forever when the network is down. Cap it."),
            ("ask", "What does refreshOAuthModels cache, and where on disk?"),
        ],
    ),
    Topic(
        [
            "packages/coding-agent/src/utils/fix-utils.ts",
            "packages/coding-agent/src/utils/apply-fix.ts",
        ],
        TESTS["fix-utils"],
        "AssertionError: expected '  foo\\n' to equal 'foo\\n'",
        [
            (
                "start",
                "Create fix-utils.ts with fixTrailingNewline and fixIndentation, and use them "
                "from applyFix so the write tool output is normalised.",
            ),
            ("fix", "fix-utils.test.ts: fixIndentation eats indentation inside code fences."),
            (
                "extend",
                "applyFixesInOrder should skip fixes for binary files (anything with a NUL).",
            ),
        ],
    ),
    Topic(
        [f"{P}/compaction/compaction-utils.ts", f"{P}/compaction/compaction.ts"],
        TESTS["compaction"],
        "AssertionError: expected [ 'a.ts' ] to deeply equal [ 'a.ts', 'b.ts' ]",
        [
            (
                "start",
                "The compaction summary loses the list of modified files: computeFileLists "
                "only looks at write calls, not edit calls. Fix it and keep the full paths.",
            ),
            ("fix", "compaction.test.ts 'file lists' fails: b.ts is missing."),
            (
                "ask",
                "Is serializeConversation safe for tool results with megabytes of output? "
                "What's the cap?",
            ),
            (
                "extend",
                "Add read-only files to formatFileOperations as a separate <read-files> block.",
            ),
        ],
    ),
    Topic(
        ["packages/coding-agent/src/modes/rpc/rpc-mode.ts", f"{P}/agent-session.ts"],
        TESTS["agent-session"],
        "SyntaxError: Unexpected token } in JSON at position 4096",
        [
            (
                "start",
                "RPC clients get 'Unexpected token } in JSON at position 4096' for long "
                "tool outputs. handleRpcCommand writes partial lines; fix the framing.",
            ),
            ("fix", "Still broken on Windows pipes, see the log from ticket RPC-31."),
            (
                "extend",
                "Add a get_session_stats RPC command returning token counts and the "
                "compaction count.",
            ),
            (
                "final",
                "Great. Summarise everything we changed today for the changelog, grouped by "
                "package.",
            ),
        ],
    ),
]


def ts_code(path: str, symbols: list[str], rng: random.Random) -> str:
    """A plausible TypeScript module: imports, an options interface, functions with bodies,
    TODOs and the odd meeting-notes comment."""
    base = path.rsplit("/", 1)[-1].removesuffix(".ts")
    title = pascal(base.replace(".", "-").split("-"))
    lines = [
        "/**",
        f" * {title}: {pick(rng, ['core logic', 'helpers', 'entry points'])} for "
        f"{base.replace('-', ' ')}.",
        " */",
        'import type { AgentMessage } from "@mariozechner/pi-agent-core";',
        'import { existsSync, readFileSync } from "node:fs";',
        f"import {{ {pick(rng, ['estimateTokens', 'getLogger', 'SettingsManager'])} }} "
        f'from "../{pick(rng, ["utils/tokens", "logger", "settings-manager"])}.js";',
        "",
        f"export interface {title}Options {{",
        "\tsignal?: AbortSignal;",
        f"\t{pick(rng, ['reserveTokens', 'maxBytes', 'cwd'])}: number;",
        "}",
        "",
    ]
    for i, sym in enumerate(symbols):
        if rng.random() < 0.45:
            lines.append(f"// TODO(PI-{rng.randint(1000, 1399)}): {pick(rng, TODO_TEXTS)}")
        if i == 1 and rng.random() < 0.35:
            lines.append(f"// {pick(rng, MEETING_NOTES)}")
        lines.append(f"export function {sym}(input: {title}Options, messages: AgentMessage[]) {{")
        for _ in range(rng.randint(6, 16)):
            lines.append(
                pick(
                    rng,
                    [
                        "\tif (!messages.length) return undefined;",
                        "\tconst last = messages[messages.length - 1];",
                        '\tif (last.role === "toolResult") continue;',
                        "\tlet total = 0;",
                        "\tfor (const m of messages) total += m.content.length;",
                        "\tinput.signal?.throwIfAborted();",
                        "\tconst text = readFileSync(path, 'utf-8');",
                        "\t// keep the order stable: callers rely on it",
                        "\treturn { total, last };",
                        "\tconst idx = entries.findIndex((e) => e.id === targetId);",
                        '\tlog.debug("cut", { idx, tokens: total });',
                    ],
                )
            )
        lines.append("}")
        lines.append("")
    return "\n".join(lines)


def test_output(test_path: str, ok: bool, error: str, rng: random.Random) -> str:
    n = rng.randint(12, 48)
    name = test_path.rsplit("/", 1)[-1]
    if ok:
        return (
            f"\n RUN  v3.2.4 /home/dev/pi-mono/packages/coding-agent\n\n"
            f" ✓ {test_path.split('/', 2)[-1]} ({n} tests) {rng.randint(40, 900)}ms\n\n"
            f" Test Files  1 passed (1)\n      Tests  {n} passed ({n})\n"
            f"   Start at  10:{rng.randint(10, 59)}:{rng.randint(10, 59)}\n"
            f"   Duration  {rng.uniform(0.8, 4.0):.2f}s\n"
        )
    failed = rng.randint(1, 3)
    return (
        f"\n RUN  v3.2.4 /home/dev/pi-mono/packages/coding-agent\n\n"
        f" ❯ {name} ({n} tests | {failed} failed) {rng.randint(40, 900)}ms\n"
        f"   × {name.split('.')[0]} > handles the reported case\n\n"
        f"⎯⎯⎯⎯⎯⎯⎯ Failed Tests {failed} ⎯⎯⎯⎯⎯⎯⎯\n\n"
        f" FAIL  {test_path}\n{error}\n ❯ {test_path}:{rng.randint(20, 300)}:{rng.randint(5, 40)}\n"
        f"\n Test Files  1 failed (1)\n      Tests  {failed} failed | {n - failed} passed ({n})\n"
        "\nCommand exited with code 1"
    )


class PiWriter:
    """Builds the entry lines: tree ids, timestamps, usage that adds up."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.clock = Clock(rng)
        self.meter = PromptMeter(rng, overhead=4380, factor=1.06)
        self.lines: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.n_ids = 0
        self.tool_calls = 0
        self.user_turns = 0
        self.since_compaction: list[float] = []

    def new_id(self) -> str:
        self.n_ids += 1
        return f"{self.rng.getrandbits(32):08x}"

    def entry(self, body: dict[str, Any]) -> str:
        eid = self.new_id()
        out = {"type": body.pop("type"), "id": eid, "parentId": self.parent}
        out["timestamp"] = self.clock.iso()
        out.update(body)
        self.lines.append(out)
        self.parent = eid
        return eid

    def _count(self, text: str) -> None:
        before = self.meter.conversation
        self.meter.add_text(text)
        self.since_compaction.append(self.meter.conversation - before)

    def user(self, text: str) -> None:
        self.clock.tick(40, 600)
        self.user_turns += 1
        msg = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}
        msg["timestamp"] = self.clock.ms()
        self.entry({"type": "message", "message": msg})
        self._count(text)

    def assistant(self, text: str, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
        prompt = self.meter.prompt_tokens()
        self.clock.tick(2, 20)
        blocks: list[dict[str, Any]] = []
        if text:
            blocks.append({"type": "text", "text": text})
        ids = []
        for name, args in calls:
            cid = f"toolu_01{self.rng.getrandbits(64):016x}"
            ids.append(cid)
            blocks.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
        self.tool_calls += len(calls)
        cache_read = max(0, prompt - self.rng.randint(200, 2600))
        cache_write = self.rng.randint(0, 400)
        inp = max(1, prompt - cache_read - cache_write)
        out_tokens = estimate_tokens(json.dumps(blocks)) + self.rng.randint(5, 60)
        msg = {
            "role": "assistant",
            "content": blocks,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": {
                "input": inp,
                "output": out_tokens,
                "cacheRead": cache_read,
                "cacheWrite": cache_write,
                "totalTokens": inp + out_tokens + cache_read + cache_write,
                "cost": {
                    "input": round(inp * 3e-6, 6),
                    "output": round(out_tokens * 15e-6, 6),
                    "cacheRead": round(cache_read * 3e-7, 6),
                    "cacheWrite": round(cache_write * 3.75e-6, 6),
                    "total": round(
                        inp * 3e-6 + out_tokens * 15e-6 + cache_read * 3e-7 + cache_write * 3.75e-6,
                        6,
                    ),
                },
            },
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": self.clock.ms(),
        }
        self.entry({"type": "message", "message": msg})
        self._count(json.dumps(blocks, ensure_ascii=False))
        return ids

    def result(self, cid: str, name: str, text: str, error: bool = False) -> None:
        self.clock.tick(0.2, 6)
        msg = {
            "role": "toolResult",
            "toolCallId": cid,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": error,
            "timestamp": self.clock.ms(),
        }
        self.entry({"type": "message", "message": msg})
        self._count(text)

    def compaction(self, summary: str) -> None:
        """pi compacting its own context: the prompt keeps the summary and the recent tail."""
        kept = sum(self.since_compaction[-40:])
        first_kept = self.lines[-40]["id"]
        tokens_before = self.meter.prompt_tokens()
        self.clock.tick(20, 40)
        self.entry(
            {
                "type": "compaction",
                "summary": summary,
                "firstKeptEntryId": first_kept,
                "tokensBefore": tokens_before,
            }
        )
        self.meter.reset(kept + estimate_tokens(summary))
        self.since_compaction = []


class PiSession:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.w = PiWriter(self.rng)
        self.files: dict[str, str] = {}
        self.compacted = False

    def content(self, path: str) -> str:
        if path not in self.files:
            symbols = FILES.get(path) or [f"helper{self.rng.randint(1, 9)}"]
            self.files[path] = ts_code(path, symbols, self.rng)
        return self.files[path]

    def read(self, path: str) -> tuple[str, dict[str, Any], str]:
        text = self.content(path)
        lines = text.split("\n")
        if len(lines) > 120 and self.rng.random() < 0.5:
            off = self.rng.randint(1, len(lines) - 60)
            body = "\n".join(lines[off - 1 : off + 59])
            body += f"\n\n[Showing lines {off}-{off + 59} of {len(lines)}. Use offset to continue]"
            return "read", {"path": path, "offset": off, "limit": 60}, body
        return "read", {"path": path}, text

    def edit(self, path: str, symbol: str) -> tuple[str, dict[str, Any], str]:
        text = self.content(path)
        old = next((ln for ln in text.split("\n") if symbol in ln), text.split("\n")[0])
        new = old.replace("messages: AgentMessage[]", "messages: readonly AgentMessage[]")
        if new == old:
            new = old + f"  // {symbol}: guarded"
        self.files[path] = text.replace(old, new, 1)
        return (
            "edit",
            {"path": path, "oldText": old, "newText": new},
            f"Successfully replaced text in {path}.",
        )

    def write(self, path: str) -> tuple[str, dict[str, Any], str]:
        words = path.rsplit("/", 1)[-1].split(".")[0].split("-")
        if path.endswith(".md"):
            body = (
                "# Compaction settings\n\n"
                "Set these in `~/.pi/agent/settings.json`:\n\n"
                '```json\n{"compaction": {"enabled": true, "reserveTokens": 16384, '
                '"keepRecentTokens": 20000}}\n```\n\n'
                "`reserveTokens` is what stays free for the model's answer.\n"
            )
        else:
            body = ts_code(path, [f"{words[0]}{pascal(words[1:])}", "formatTree"], self.rng)
        self.files[path] = body
        return (
            "write",
            {"path": path, "content": body},
            f"Successfully wrote {len(body.encode())} bytes to {path}",
        )

    def bash(self, command: str, output: str) -> tuple[str, dict[str, Any], str]:
        return "bash", {"command": command}, output

    def grep(self, symbol: str, paths: list[str]) -> tuple[str, dict[str, Any], str]:
        out = []
        for p in paths:
            for i, ln in enumerate(self.content(p).split("\n")):
                if symbol in ln:
                    out.append(f"{p}:{i + 1}:{ln.strip()}")
        return self.bash(f'rg -n "{symbol}" packages/', "\n".join(out) or "(no matches)")

    def step(self, text: str, calls: list[tuple[str, dict[str, Any], str]]) -> None:
        ids = self.w.assistant(text, [(n, a) for n, a, _ in calls])
        for cid, (name, _args, result) in zip(ids, calls, strict=True):
            is_error = name == "bash" and "exited with code 1" in result
            self.w.result(cid, name, result, error=is_error)

    def turn(self, topic: Topic, kind: str, request: str) -> None:
        rng = self.rng
        w = self.w
        w.user(request)
        main = topic.files[0]
        syms = FILES.get(main, ["main"])
        sym = pick(rng, syms)
        test = topic.test
        test_cmd = f"cd {test.split('/test/')[0]} && npx vitest run test/{test.split('/')[-1]}"
        if kind == "start":
            self.step(
                f"Let me look at `{sym}` and how it is called.",
                [self.grep(sym, topic.files), self.read(main)],
            )
            for other in topic.files[1:]:
                self.step("", [self.read(other)])
            self.step(
                "First I'll reproduce it with the existing tests.",
                [self.bash(test_cmd, test_output(test, False, topic.error, rng))],
            )
            self.step(
                f"The problem is in `{sym}`: it assumes the entry exists. Fixing it.",
                [self.edit(main, sym)],
            )
            if len(topic.files) > 1:
                other = topic.files[1]
                self.step(
                    f"{other} has the same assumption.",
                    [self.edit(other, pick(rng, FILES.get(other, ["main"])))],
                )
            self.step("", [self.bash(test_cmd, test_output(test, True, "", rng))])
            self.step(
                "",
                [self.bash("npm run check", "> check\n> biome check . && tsc --noEmit\n\nDone.")],
            )
            w.assistant(
                f"Fixed: `{sym}` in {main} no longer assumes the entry exists"
                f" ({topic.error.split(':')[0]} before). Tests pass.",
                [],
            )
        elif kind == "fix":
            self.step(
                "Let me run the failing tests.",
                [self.bash(test_cmd, test_output(test, False, topic.error, rng))],
            )
            self.step("", [self.read(test), self.read(main)])
            sym2 = pick(rng, syms)
            self.step(f"`{sym2}` misses the second case.", [self.edit(main, sym2)])
            if rng.random() < 0.5:
                self.step("And the test fixture was wrong.", [self.edit(test, "describe")])
            self.step("", [self.bash(test_cmd, test_output(test, True, "", rng))])
            w.assistant(f"Fixed `{sym2}`; {test.split('/')[-1]} passes now.", [])
        elif kind == "change":
            self.step(
                "Understood, reverting the earlier change first.",
                [self.bash(f"git checkout -- {main}", "")],
            )
            self.step("", [self.read(main)])
            for s in rng.sample(syms, min(2, len(syms))):
                self.step(f"Now changing `{s}` the new way.", [self.edit(main, s)])
            self.step("", [self.bash(test_cmd, test_output(test, True, "", rng))])
            self.step(
                "",
                [
                    self.bash(
                        "git diff --stat",
                        f" {main} | {rng.randint(4, 40)} ++++--\n 1 file changed",
                    )
                ],
            )
            w.assistant(f"Reverted and redone as you asked; only {main} changed.", [])
        elif kind == "ask":
            self.step(f"Let me read `{sym}`.", [self.grep(sym, topic.files), self.read(main)])
            if len(topic.files) > 1:
                self.step("", [self.read(topic.files[-1])])
            w.assistant(
                f"`{sym}` in {main} does this in three steps: it walks the entries backwards, "
                f"stops at the first one it can cut at, and returns the index. "
                f"It never touches {topic.files[-1]} directly. No code changed.",
                [],
            )
        elif kind == "extend":
            target = topic.new_files[0] if topic.new_files else None
            self.step("", [self.read(main), self.read(test)])
            if target is not None:
                self.step(f"Creating {target}.", [self.write(target)])
            for s in rng.sample(syms, min(2, len(syms))):
                self.step("", [self.edit(main, s)])
            self.step("Adding a test for it.", [self.edit(test, "describe")])
            fail_first = rng.random() < 0.4
            if fail_first:
                self.step("", [self.bash(test_cmd, test_output(test, False, topic.error, rng))])
                self.step("Off by one in the new test's fixture.", [self.edit(test, "describe")])
            self.step("", [self.bash(test_cmd, test_output(test, True, "", rng))])
            w.assistant(f"Done: extended `{pick(rng, syms)}` and added a test.", [])
        elif kind == "final":
            self.step("", [self.bash("git log --oneline -20", self.git_log())])
            self.step("", [self.bash("git diff --stat HEAD~20", self.diff_stat())])
            w.assistant(
                "Changelog:\n- coding-agent: compaction cut point fix (#412), edit tool CRLF "
                "(PI-1187), session v4 headers, footer '?' gauge, abort resets state, bash "
                "truncation streams, settings for reserveTokens, RPC framing (RPC-31).\n"
                "- ai: new overflow patterns (OpenRouter, llama.cpp).\n- tui: TODO for TUI-77.",
                [],
            )

    def git_log(self) -> str:
        return "\n".join(
            f"{self.rng.getrandbits(28):07x} {msg}"
            for msg in [
                "fix(coding-agent): findCutPoint handles branch summaries (#412)",
                "fix(coding-agent): CRLF-aware edit matching (PI-1187)",
                "feat(ai): more context overflow patterns",
                "fix(coding-agent): abortCompaction resets agent state",
                "feat(coding-agent): compaction settings",
                "fix(coding-agent): RPC framing for long outputs (RPC-31)",
            ]
        )

    def diff_stat(self) -> str:
        paths = sorted(self.files)
        rows = [f" {p} | {self.rng.randint(2, 80)} ++--" for p in paths]
        return "\n".join(rows) + f"\n {len(paths)} files changed"


def generate(seed: int = 20261014) -> str:
    s = PiSession(seed)
    header = {
        "type": "session",
        "version": 3,
        "id": "0b7e3c52-41d8-4f0e-9a4e-7c1b2d9e6f10",
        "timestamp": s.w.clock.iso(),
        "cwd": "/home/dev/pi-mono",
    }
    s.w.lines.append(header)
    s.w.entry({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    s.w.entry({"type": "thinking_level_change", "thinkingLevel": "medium"})
    order: list[tuple[Topic, str, str]] = []
    for topic in TOPICS:
        for kind, text in topic.turns:
            order.append((topic, kind, text))
    # The user comes back to earlier topics in between, as people do.
    extra = [
        (TOPICS[0], "ask", "Quick question: which test covers findCutPoint with tool results?"),
        (TOPICS[1], "fix", "Someone reported PI-1187 again with a UTF-16 file. Check edit.ts."),
        (TOPICS[3], "fix", "The anthropic provider test is flaky since the overflow change."),
        (TOPICS[5], "ask", "Remind me what abortCompaction does after your change."),
        (TOPICS[2], "fix", "migrateToCurrentVersion logs the warning twice per load."),
        (TOPICS[8], "ask", "What default keepRecentTokens did we settle on, and why?"),
        (TOPICS[10], "extend", "Add applyFix to the edit tool path too, not only write."),
        (TOPICS[4], "fix", "The '?' gauge flickers during streaming, see screenshot in TUI-80."),
        (TOPICS[11], "fix", "computeFileLists now lists files twice when edited and written."),
        (TOPICS[6], "extend", "Make the bash truncation limit configurable: bash.maxOutputBytes."),
        (TOPICS[7], "ask", "Is there a test for pasting a 10k-line file into the editor?"),
        (TOPICS[9], "fix", "resolveModel picks the wrong model when two providers share a name."),
        (TOPICS[12], "ask", "How big can get_session_stats responses get?"),
        (TOPICS[1], "extend", "Log a warning in applyEditDiff when fuzzy matching was used."),
    ]
    for i, item in enumerate(extra):
        order.insert(6 + i * 4, item)
    final = [o for o in order if o[1] == "final"]
    order = [o for o in order if o[1] != "final"] + final
    for i, (topic, kind, text) in enumerate(order):
        s.turn(topic, kind, text)
        if not s.compacted and s.w.meter.prompt_tokens() > 200000 - 16384 - 8000:
            s.w.compaction(
                "## Goal\nFix compaction and edit-tool bugs in pi-mono.\n\n## Progress\n"
                f"- Done: {i + 1} requests so far (see git log).\n\n## Next Steps\n- Continue."
            )
            s.compacted = True
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in s.w.lines) + "\n"
