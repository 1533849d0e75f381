"""`python -m bench.quality.generate`: rewrite the corpus under bench/quality/corpus/.

Deterministic (fixed seeds): running it twice gives the same bytes, so the committed files can
be checked against their generator (tests/bench/test_quality_bench.py does).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from bench.quality import gen_openai, gen_pi, gen_swe

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"

GENERATORS: dict[str, Callable[[], str]] = {
    "pi-coding-session.jsonl": gen_pi.generate,
    "swe-marshmallow-timedelta.traj.json": lambda: gen_swe.generate(0),
    "swe-sqlfluff-nested-fix.traj.json": lambda: gen_swe.generate(1),
    "swe-pydicom-json-dict.traj.json": lambda: gen_swe.generate(2),
    "device-control-android.json": gen_openai.device_session,
    "cjk-shop-session.json": gen_openai.cjk_session,
}


def main(argv: list[str] | None = None) -> int:
    CORPUS_DIR.mkdir(parents=True, exist_ok=True)
    for name, make in GENERATORS.items():
        text = make()
        (CORPUS_DIR / name).write_text(text, encoding="utf-8")
        print(f"{name}: {len(text.encode()):,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
