"""Time plan_compaction on a realistic 100k-event stream.

Run: python bench/plan_100k.py [--events N] [--repeat R]

The stream is turns of: user_input, an optional screen_context, a few tool rounds (sometimes
parallel calls, screenshots scrubbed to metadata, a system_event now and then), an assistant
reply; mixed English and CJK text. Prints the best time with precomputed token estimates (what a
pass does: the store keeps them) and with the planner estimating them itself.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.compaction.planner import plan_compaction
from core.config import CompactionConfig
from core.events import Event
from core.tokens import estimate_event_tokens

WORDS = ("open", "the", "settings", "page", "and", "check", "the", "battery", "status", "then")
CJK = "打开设置页面检查电池状态然后汇报结果"


def text(rng: random.Random, lo: int, hi: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    if rng.random() < 0.2:
        words.append(CJK[: rng.randint(2, len(CJK))])
    return " ".join(words)


def build_stream(n: int, seed: int = 7) -> list[Event]:
    rng = random.Random(seed)
    events: list[Event] = []
    call_no = 0

    def add(event: Event) -> None:
        event["id"] = f"ev_{len(events):06d}"
        events.append(event)

    while len(events) < n:
        add({"type": "user_input", "role": "user", "content": text(rng, 5, 40)})
        if rng.random() < 0.3:
            add({"type": "screen_context", "role": "system", "content": text(rng, 10, 60)})
        for _ in range(rng.randint(0, 6)):
            ids = []
            for _ in range(2 if rng.random() < 0.25 else 1):
                call_no += 1
                ids.append(f"call_{call_no}")
                add(
                    {
                        "type": "tool_call",
                        "role": "assistant",
                        "name": rng.choice(["tap", "screenshot", "read_file"]),
                        "tool_call_id": ids[-1],
                        "arguments": {"x": rng.randint(0, 1080), "y": rng.randint(0, 2400)},
                    }
                )
            for tcid in ids:
                content = (
                    {"width": 1080, "height": 2400, "format": "png"}
                    if rng.random() < 0.3
                    else text(rng, 20, 200)
                )
                add(
                    {
                        "type": "tool_result",
                        "role": "tool",
                        "tool_call_id": tcid,
                        "content": content,
                    }
                )
            if rng.random() < 0.1:
                add({"type": "system_event", "role": "system", "content": "app switched"})
        add({"type": "assistant_output", "role": "assistant", "content": text(rng, 10, 120)})
    return events[:n]


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    events = build_stream(args.events)
    tokens = [estimate_event_tokens(e) for e in events]
    config = CompactionConfig()
    plan = plan_compaction(events, config, tokens=tokens)
    with_tokens = best_of(args.repeat, lambda: plan_compaction(events, config, tokens=tokens))
    estimating = best_of(args.repeat, lambda: plan_compaction(events, config))

    print(f"{len(events):,} events, {sum(tokens):,} tokens")
    print(
        f"plan: path={plan.path} cut_index={plan.cut_index} split={plan.is_split_turn} "
        f"kept={len(plan.kept_indices()):,} events ({plan.kept_tokens_estimate:,} tokens)"
    )
    runs = f"best of {args.repeat}"
    print(f"plan_compaction with precomputed tokens: {with_tokens * 1000:.1f} ms ({runs})")
    print(f"plan_compaction estimating tokens:       {estimating * 1000:.1f} ms ({runs})")


if __name__ == "__main__":
    main()
