"""pi session logs read line by line, for `follow` (issue 23).

`import --format pi` reads the whole file and follows the branch that ends at the last entry,
as pi builds its context. A live log cannot be read that way (the last entry keeps changing),
so `follow` reads pi's entries in file order with the same mapping per entry: a branch the
user left (`/tree`, `/fork`) stays in the followed session. docs/REPLAY.md says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.transcripts.stream import Stream, pi_compaction
from core.transcripts.transcript import _blocks_text, _Builder, _iso_ts, _pi_message


@dataclass
class _StreamBuilder(_Builder):
    """A `_Builder` whose inputs and calls go to a `Stream` as actions."""

    stream: Stream | None = None

    def add_input(self, event: dict[str, Any]) -> None:
        assert self.stream is not None
        self.stream.input(event)

    def add_call(self, outputs: list[dict[str, Any]], prompt_tokens: int | None) -> None:
        assert self.stream is not None
        source = outputs[0]["meta"]["source"] if outputs else {}
        self.stream.call(prompt_tokens, source.get("line"))
        for event in outputs:
            self.stream.output(event)


@dataclass
class PiLineParser:
    stream: Stream
    header: bool = False

    @classmethod
    def create(cls, source: str) -> PiLineParser:
        builder = _StreamBuilder("pi", source)
        stream = Stream(builder)
        builder.stream = stream
        return cls(stream)

    def feed(self, line: int, value: Any) -> None:
        b = self.stream.builder
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            raise b.error(line, 'a pi entry must be a JSON object with a string "type"')
        etype = value["type"]
        if not self.header:
            if etype != "session":
                raise b.error(line, 'expected the pi session header ({"type": "session", ...})')
            self.header = True
            sid = value.get("id")
            self.stream.session_id = sid if isinstance(sid, str) else None
            return
        ts = _iso_ts(value.get("timestamp"))
        if etype == "session":
            raise b.error(line, "a second session header (two session files joined?)")
        if etype == "message":
            _pi_message(value.get("message"), line, ts, b)
        elif etype == "custom_message":
            content = _blocks_text(value.get("content"), line=line, builder=b)
            meta = {"custom_type": value.get("customType")}
            self.stream.input(
                b.event("system_event", "system", content, line=line, ts=ts, meta=meta)
            )
        elif etype == "compaction":
            self.stream.input(pi_compaction(b, value, line=line, ts=ts))
        else:
            self.stream.skip(etype)

    def close(self) -> None:
        pass
