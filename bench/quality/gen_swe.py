"""SWE-style trajectories in mini-swe-agent's trajectory format (`.traj.json`).

One task per trajectory (the PR description inside the instance template, as mini-swe-agent
sends it), then THOUGHT + one ```bash block per assistant message and the observation
(`<returncode>`/`<output>`) as the next user message. Each assistant message carries
`extra.response.usage.prompt_tokens`, growing with the conversation as a provider reports it.
The agent explores, reproduces, edits with `sed -i` and heredocs, breaks and fixes tests, and
submits a diff.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from bench.quality.corpus_common import TODO_TEXTS, Clock, PromptMeter, pick

SYSTEM = (
    "You are a helpful assistant that can interact multiple times with a computer shell to "
    "solve programming tasks.\nYour response must contain exactly ONE bash code block with ONE "
    "command (or commands connected with && or ||).\n\nInclude a THOUGHT section before your "
    "command where you explain your reasoning process.\nFormat your response as shown in "
    "<format_example>.\n\n<format_example>\nTHOUGHT: Your reasoning and analysis here\n\n"
    "```bash\nyour_command_here\n```\n</format_example>\n\nFailure to follow these rules will "
    "cause your response to be rejected."
)

INSTRUCTIONS = (
    "<instructions>\n# Task Instructions\n\n## Overview\nYou're a software engineer interacting "
    "continuously with a computer by submitting commands.\nYou'll be helping implement necessary "
    "changes to meet requirements in the PR description.\nYour task is specifically to make "
    "changes to non-test files in the current directory in order to fix the issue described in "
    "the PR description in a way that is general and consistent with the codebase.\n\n"
    "IMPORTANT: This is an interactive process where you will think and issue ONE command, see "
    "its result, then think and issue your next command.\n\n## Important Boundaries\n- MODIFY: "
    "Regular source code files in /testbed (this is the working directory for all your "
    "subsequent commands)\n- DO NOT MODIFY: Tests, configuration files (pyproject.toml, "
    "setup.cfg, etc.)\n\n## Recommended Workflow\n1. Analyze the codebase by finding and reading "
    "relevant files\n2. Create a script to reproduce the issue\n3. Edit the source code to "
    "resolve the issue\n4. Verify your fix works by running your script again\n5. Test edge "
    "cases to ensure your fix is robust\n\n## Command Execution Rules\nYou are operating in an "
    "environment where\n1. You write a single command\n2. The system executes that command in a "
    "subshell\n3. You see the result\n4. You write your next command\n\nEach response should "
    "include:\n1. A **THOUGHT** section where you explain your reasoning and plan\n2. A single "
    "bash code block with your command\n\n## Submission\nWhen you've completed your work "
    "(reading, editing, testing), and cannot make further progress issue exactly the following "
    "command:\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff "
    "--cached\n```\n\nThis command will submit your work.\nYou cannot continue working (reading, "
    "editing, testing) in any way on this task after submitting.\n</instructions>"
)


@dataclass(frozen=True)
class Task:
    instance_id: str
    pr: str
    source: list[str]  # files the fix touches (first: the main one)
    support: list[str]  # files the agent reads on the way
    tests: str
    symbols: list[str]
    error: str
    steps: int
    names: tuple[str, ...] = ()
    """More names of the code base (helpers, classes, tests, settings) the agent meets."""


TASKS = [
    Task(
        "marshmallow-code__marshmallow-1867",
        "TimeDelta serialization precision\n\nfields.TimeDelta(precision='milliseconds') "
        "serializes timedelta(milliseconds=345) as 344. `_serialize` uses int() on a float "
        "division, so rounding errors truncate the value. Expected 345.",
        ["src/marshmallow/fields.py", "src/marshmallow/utils.py"],
        ["src/marshmallow/schema.py", "src/marshmallow/validate.py", "tests/test_fields.py"],
        "tests/test_serialization.py",
        ["TimeDelta", "_serialize", "_deserialize", "timedelta_to_microseconds", "precision"],
        "AssertionError: assert 344 == 345",
        72,
        (
            "_bind_to_schema",
            "Field._validate_missing",
            "NaiveDateTime",
            "AwareDateTime",
            "from_iso_timedelta",
            "MARSHMALLOW_STRICT_TIMEDELTA",
            "test_timedelta_field_serialization",
            "test_timedelta_precision_rounding",
            "ValidationError",
            "missing_",
            "serialization_type",
            "_format_num",
            "BaseSchema.dump",
            "resolve_field_instance",
        ),
    ),
    Task(
        "sqlfluff__sqlfluff-2419",
        "L060 fix produces invalid SQL with nested IFNULL\n\nRunning `sqlfluff fix` on "
        "`SELECT IFNULL(IFNULL(a, b), c) FROM t` with rule L060 yields `SELECT COALESCE(COALESCE"
        "(a, b), c) FROM t` for the outer call only; the inner one keeps IFNULL and the fix loop "
        "reports 'Loop limit on fixes reached [10]'. apply_fix should re-parse after each fix.",
        [
            "src/sqlfluff/rules/L060.py",
            "src/sqlfluff/core/linter/fix.py",
            "src/sqlfluff/core/linter/apply_fix.py",
        ],
        [
            "src/sqlfluff/utils/fix_utils.py",
            "src/sqlfluff/core/linter/linter.py",
            "src/sqlfluff/core/rules/base.py",
            "src/sqlfluff/core/parser/segments/base.py",
        ],
        "test/rules/std_L060_test.py",
        ["LintFix", "apply_fixes", "compute_anchor_edit_info", "_eval", "is_valid_fix"],
        "sqlfluff.core.errors.SQLLintError: Loop limit on fixes reached [10].",
        118,
        (
            "BaseSegment.apply_fixes",
            "FixPatch",
            "generate_source_patches",
            "iter_patches",
            "fix_even_unparsable",
            "LintedFile.fix_string",
            "RuleContext",
            "FunctionNameSegment",
            "Rule_L060",
            "test__rules__std_L060_nested",
            "loop_limit",
            "_check_rules",
            "anchor_info",
            "SQLParseError",
            "fix_utils.fixes_from_results",
            "dialect_selector",
        ),
    ),
    Task(
        "pydicom__pydicom-1694",
        "Dataset.to_json_dict can still fail\n\n`to_json_dict(suppress_invalid_tags=True)` "
        "raises `ValueError: Could not convert value '20' to VR 'IS'` from inside "
        "`DataElement.to_json_dict` because the exception escapes the loop in "
        "`Dataset.to_json_dict` before suppress_invalid_tags is checked.",
        ["src/pydicom/dataset.py", "src/pydicom/dataelem.py"],
        [
            "src/pydicom/jsonrep.py",
            "src/pydicom/valuerep.py",
            "src/pydicom/config.py",
            "src/pydicom/fileutil.py",
        ],
        "tests/test_json.py",
        ["to_json_dict", "suppress_invalid_tags", "json_element", "BulkDataURIHandler", "IS"],
        "ValueError: Could not convert value '20' to VR 'IS' in element (0020,0013)",
        164,
        (
            "DataElement.from_json",
            "bulk_data_element_handler",
            "json_dumps",
            "Dataset.from_json",
            "RawDataElement",
            "convert_to_python_number",
            "settings.reading_validation_mode",
            "InvalidDicomError",
            "BinaryValueType",
            "test_suppress_invalid_tags",
            "test_json_roundtrip_is_vr",
            "JSON_VALUE_KEYS",
            "_BUFFERABLE_VRS",
            "dictionary_VR",
            "PersonName.from_named_components",
            "validate_value",
            "MultiValue",
            "keyword_for_tag",
        ),
    ),
]


def py_code(path: str, symbols: list[str], rng: random.Random, lines_n: int = 120) -> str:
    mod = path.rsplit("/", 1)[-1].removesuffix(".py")
    out = [f'"""{mod}: {pick(rng, ["core", "helpers", "field classes", "fix logic"])}."""', ""]
    out += ["import typing", "import warnings", f"from .{pick(rng, ['utils', 'base'])} import *"]
    out.append("")
    k = 0
    while len(out) < lines_n:
        sym = symbols[k % len(symbols)] + ("" if k < len(symbols) else f"_{k}")
        k += 1
        if rng.random() < 0.3:
            out.append(f"# TODO: {pick(rng, TODO_TEXTS)}")
        out.append(f"def {sym}(self, value, attr=None, obj=None, **kwargs):")
        out.append(f'    """Return the {sym} of value."""')
        for _ in range(rng.randint(4, 12)):
            out.append(
                pick(
                    rng,
                    [
                        "    if value is None:",
                        "        return None",
                        "    base_unit = dt.timedelta(**{self.precision: 1})",
                        "    return int(value.total_seconds() / base_unit.total_seconds())",
                        "    for fix in fixes:",
                        "        anchor = fix.anchor",
                        "    raise ValueError(f'Could not convert value {value!r}')",
                        "    json_dict[key] = data_element.to_json_dict(handler, threshold)",
                        "    warnings.warn(msg, stacklevel=2)",
                        "    return result",
                    ],
                )
            )
        out.append("")
    return "\n".join(out)


class SweRun:
    def __init__(self, task: Task, seed: int) -> None:
        self.task = task
        self.rng = random.Random(seed)
        self.clock = Clock(self.rng)
        self.meter = PromptMeter(self.rng, overhead=60, factor=1.07)
        self.messages: list[dict[str, Any]] = []
        self.files: dict[str, str] = {}
        self.cost = 0.0

    def names_of(self, path: str) -> list[str]:
        """The names defined in one file: a stable share of the task's names."""
        pool = [n.rsplit(".", 1)[-1] for n in self.task.symbols + list(self.task.names)]
        local = random.Random(f"{self.task.instance_id}:{path}")
        return local.sample(pool, min(len(pool), local.randint(4, 8)))

    def content(self, path: str) -> str:
        if path not in self.files:
            n = self.rng.randint(80, 260)
            self.files[path] = py_code(path, self.names_of(path), self.rng, n)
        return self.files[path]

    def name(self) -> str:
        return pick(self.rng, self.task.symbols + list(self.task.names))

    def say(self, role: str, content: str) -> None:
        self.messages.append({"role": role, "content": content})
        self.meter.add_text(content)

    def act(self, thought: str, command: str, output: str, rc: int = 0) -> None:
        prompt = self.meter.prompt_tokens()
        self.clock.tick(2, 25)
        text = f"THOUGHT: {thought}\n\n```bash\n{command}\n```"
        completion = len(text) // 4 + self.rng.randint(10, 120)
        self.cost += prompt * 1.4e-7 + completion * 2.8e-7
        self.messages.append(
            {
                "role": "assistant",
                "content": text,
                "extra": {
                    "response": {
                        "id": f"chatcmpl-{self.rng.getrandbits(64):016x}",
                        "created": int(self.clock.unix()),
                        "model": "deepseek-chat",
                        "object": "chat.completion",
                        "usage": {
                            "prompt_tokens": prompt,
                            "completion_tokens": completion,
                            "total_tokens": prompt + completion,
                        },
                    }
                },
            }
        )
        self.meter.add_text(text)
        self.clock.tick(0.2, 8)
        body = output if len(output) < 10000 else output[:5000] + "\n...\n" + output[-5000:]
        self.say("user", f"<returncode>{rc}</returncode>\n<output>\n{body}\n</output>")

    def view(self, path: str) -> None:
        text = self.content(path)
        lines = text.split("\n")
        a = self.rng.randint(1, max(1, len(lines) - 50))
        b = a + self.rng.randint(30, 70)
        shown = "\n".join(f"{i:6d}\t{ln}" for i, ln in enumerate(lines[a - 1 : b], start=a))
        self.act(
            f"Let me look at {path} around line {a} to see how "
            f"`{pick(self.rng, self.names_of(path))}` is implemented.",
            f"nl -ba {path} | sed -n '{a},{b}p'",
            shown,
        )

    def grep(self, sym: str) -> None:
        hits = []
        for p in self.task.source + self.task.support:
            for i, ln in enumerate(self.content(p).split("\n")):
                if sym in ln:
                    hits.append(f"{p}:{i + 1}:{ln}")
        self.act(
            f"I need to find where `{sym}` is used; `{self.name()}` may depend on it.",
            f'grep -rn "{sym}" src/ | head -40',
            "\n".join(hits[:40]),
        )

    def sed_edit(self, path: str) -> None:
        sym = pick(self.rng, self.names_of(path))
        old = "return int(value.total_seconds() / base_unit.total_seconds())"
        new = "return round(value.total_seconds() / base_unit.total_seconds())"
        self.files[path] = self.content(path).replace(old, new, 1)
        self.act(
            f"The truncation happens in `{sym}`; I'll replace int() with round() in {path}.",
            f"sed -i 's/return int(value.total_seconds()/return round(value.total_seconds()/' "
            f"{path}",
            "",
        )

    def heredoc_edit(self, path: str) -> None:
        sym = pick(self.rng, self.names_of(path))
        body = py_code(path, [sym, f"{sym}_checked"], self.rng, 40)
        self.files[path] = self.content(path) + "\n" + body
        self.act(
            f"Rather than patching line by line, I'll rewrite the helper `{sym}` in {path}.",
            f"cat <<'EOF' >> {path}\n{body}\nEOF",
            "",
        )

    def python_edit(self, path: str) -> None:
        sym = pick(self.rng, self.names_of(path))
        script = (
            f"import re\np = '{path}'\ns = open(p).read()\n"
            f"s = s.replace('def {sym}(self, value', 'def {sym}(self, value, *, strict=False', 1)\n"
            "open(p, 'w').write(s)\nprint('patched')"
        )
        self.act(
            f"Adding a `strict` keyword to `{sym}` in {path} so callers can opt in.",
            f"python - <<'EOF'\n{script}\nEOF",
            "patched",
        )

    def run_tests(self, ok: bool) -> None:
        t = self.task
        n = self.rng.randint(20, 140)
        if ok:
            out = (
                f"{'.' * min(n, 70)}\n{n} passed, {self.rng.randint(0, 4)} skipped in "
                f"{self.rng.uniform(0.5, 9):.2f}s"
            )
        else:
            out = (
                f"{'.' * 10}F\n=================================== FAILURES "
                f"===================================\n___ test_{t.symbols[0].lower()}_regression "
                f"___\n\n    def test_{t.symbols[0].lower()}_regression():\n>       "
                f"assert result == expected\nE       {t.error}\n\n{t.tests}:"
                f"{self.rng.randint(30, 900)}: AssertionError\n=== short test summary info ===\n"
                f"FAILED {t.tests}::test_{t.symbols[0].lower()}_regression - {t.error}\n"
                f"1 failed, {n} passed in {self.rng.uniform(0.5, 9):.2f}s"
            )
        self.act(
            "Running the relevant tests." if ok else "Let me run the existing tests for this.",
            f"cd /testbed && python -m pytest {t.tests} -x -q 2>&1 | tail -30",
            out,
            0 if ok else 1,
        )

    def reproduce(self, fixed: bool) -> None:
        t = self.task
        if not fixed:
            script = (
                f"from {t.source[0].split('/')[1]} import *\n\n"
                f"# reproduce {t.instance_id}\nprint({t.symbols[0]}(None, 1))\n"
            )
            self.act(
                "Let me create a script to reproduce the issue first.",
                f"cat <<'EOF' > /testbed/reproduce_issue.py\n{script}EOF",
                "",
            )
            trace = (
                'Traceback (most recent call last):\n  File "/testbed/reproduce_issue.py", '
                f'line 4, in <module>\n  File "/testbed/{t.source[0]}", line '
                f"{self.rng.randint(100, 900)}, in {t.symbols[0]}\n{t.error}"
            )
            self.act("Run it.", "cd /testbed && python reproduce_issue.py", trace, 1)
        else:
            self.act(
                "Re-running the reproduction script after the fix.",
                "cd /testbed && python reproduce_issue.py",
                "OK: 345",
            )

    def generate(self) -> dict[str, Any]:
        t = self.task
        rng = self.rng
        self.say("system", SYSTEM)
        self.say(
            "user",
            f"<pr_description>\nConsider the following PR description:\n{t.pr}\n"
            f"</pr_description>\n\n{INSTRUCTIONS}",
        )
        self.act(
            "Let me start by understanding the repository layout.",
            "cd /testbed && ls -la && git log --oneline -3",
            "total 96\ndrwxr-xr-x 1 root root 4096 .\n-rw-r--r-- 1 root root 1102 README.rst\n"
            "drwxr-xr-x 3 root root 4096 src\ndrwxr-xr-x 5 root root 4096 tests\n"
            f"e66c5e3 SWE-bench\n{rng.getrandbits(28):07x} Merge pull request",
        )
        self.act(
            "Find the source files related to the issue.",
            f"find /testbed/src -name '*.py' | grep -E '{t.source[0].rsplit('/', 1)[-1][:-3]}|"
            f"{t.support[0].rsplit('/', 1)[-1][:-3]}'",
            "\n".join(f"/testbed/{p}" for p in t.source + t.support),
        )
        self.reproduce(False)
        steps = len([m for m in self.messages if m["role"] == "assistant"])
        phase = 0
        while steps < t.steps - 4:
            r = rng.random()
            if phase < 2 and r < 0.5:
                self.view(pick(rng, t.source + t.support))
            elif r < 0.62:
                self.grep(self.name().rsplit(".", 1)[-1])
            elif r < 0.74:
                path = pick(rng, t.source)
                pick_edit = rng.randrange(3)
                (self.sed_edit, self.heredoc_edit, self.python_edit)[pick_edit](path)
                phase = max(phase, 1)
            elif r < 0.88:
                self.run_tests(ok=phase >= 2 and rng.random() < 0.7)
                phase += 1 if rng.random() < 0.3 else 0
            else:
                self.view(pick(rng, t.source))
            steps = len([m for m in self.messages if m["role"] == "assistant"])
        self.reproduce(True)
        self.run_tests(True)
        diff = "".join(
            f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1,3 +1,3 @@\n-    return int(x)\n"
            f"+    return round(x)\n"
            for p in t.source
        )
        self.act(
            "The fix works and the tests pass. Let me review the diff.",
            "cd /testbed && git diff",
            diff,
        )
        self.act(
            "Everything looks right; submitting.",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
            diff,
        )
        api_calls = len([m for m in self.messages if m["role"] == "assistant"])
        return {
            "info": {
                "exit_status": "Submitted",
                "submission": diff,
                "model_stats": {"instance_cost": round(self.cost, 6), "api_calls": api_calls},
                "mini_version": "1.17.3",
                "config": {
                    "agent": {"step_limit": 250, "cost_limit": 3.0},
                    "model": {"model_name": "deepseek/deepseek-chat"},
                    "environment": {"image": f"swebench/sweb.eval.x86_64.{t.instance_id}"},
                },
            },
            "messages": self.messages,
            "trajectory_format": "mini-swe-agent-1",
            "instance_id": t.instance_id,
        }


def generate(index: int, seed: int = 4242) -> str:
    run = SweRun(TASKS[index], seed + index)
    return json.dumps(run.generate(), indent=1, ensure_ascii=False) + "\n"
