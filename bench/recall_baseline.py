"""The in-memory recall index as it was before issue 11 (chunk-level BM25, compounds kept
whole but not their pieces), frozen here as the baseline `bench/recall.py` measures the new
ranking against. Not used by the project itself."""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from core.errors import BadInputError
from core.events import Event
from core.recall.ranking import (  # the same words and term test; the ranking is what is frozen
    STOPWORDS,
    contains_term,
    normalize,
)
from core.text import content_text

Source = Literal["active", "pending"]
SOURCES: frozenset[str] = frozenset({"active", "pending"})

BM25_K1 = 1.2
BM25_B = 0.75
MAX_MATCHED_EVENTS = 20

_CJK = (
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
    "\u3040-\u30ff\u31f0-\u31ff\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
_PART = re.compile(r"[^\W_]+")
_JOINED = re.compile(r"(?<![^\W_])[^\W_]++(?:[_.\-/:@]++[^\W_]++)+")
"""Words joined by `_ . - / : @` (`app_main.log`, `user@host`): kept whole besides their parts.
Run on text with its CJK blanked out; it starts only at a word's start and never backtracks
into a word (possessive), so a scan is linear in the text."""
"""English function words: they match nearly every chunk, so they only add noise to a score."""


def tokenize(text: str) -> list[str]:
    """Search terms of a text, in order, duplicates kept (term frequency counts them)."""
    return _tokens(normalize(text))


def _tokens(text: str) -> list[str]:
    """CJK bigrams (a lone character as itself), then every word that is not a stop word, then
    every joined compound (`app_main.log`, `a/b`) whole: the same terms a walk over each
    compound and its parts gives, found by whole-text regex scans instead (5x faster)."""
    tokens: list[str] = []
    if not text.isascii():
        for run in _CJK_RUN.findall(text):
            if len(run) == 1:
                tokens.append(run)
            else:
                tokens.extend([run[i : i + 2] for i in range(len(run) - 1)])
        text = _CJK_RUN.sub(" ", text)
    stop = STOPWORDS
    tokens.extend([part for part in _PART.findall(text) if part not in stop])
    tokens.extend(_JOINED.findall(text))
    return tokens


def event_search_text(event: Event) -> str:
    """What recall reads of an event: its content, name and arguments."""
    parts: list[str] = []
    content = event.get("content")
    if content is not None:
        parts.append(content_text(content))
    name = event.get("name")
    if isinstance(name, str):
        parts.append(name)
    args = event.get("arguments")
    if args is not None:
        parts.append(content_text(args))
    return "\n".join(parts)


@dataclass(frozen=True)
class RecallDoc:
    """One searchable unit: an indexed chunk ("active") or a pending evidence file.

    With `load`, the index keeps no events for the document once it is analysed: a search
    calls `load()` for the documents it returns (the manager reads the chunk file), so a large
    compacted history costs its term postings in memory, not every event twice.
    """

    chunk_id: str
    source: Source
    summary: str
    events: Sequence[Event]
    load: Callable[[], Sequence[Event]] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"recall source must be 'active' or 'pending', got {self.source!r}")

    def current_events(self) -> Sequence[Event]:
        return self.events if self.load is None else self.load()


@dataclass(frozen=True)
class RecallHit:
    chunk_id: str
    source: Source
    score: float
    summary: str
    events: list[Event]
    """The chunk's events whose own text has a query term, in order, at most 20."""

    def to_json(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "source": self.source,
            "score": round(self.score, 4),
            "summary": self.summary,
            "events": list(self.events),
        }


@dataclass(frozen=True)
class RecallResult:
    results: list[RecallHit]
    pending_chunks_recalled: int
    """Results whose source is "pending", and nothing else (never inferred from an id)."""

    @classmethod
    def of(cls, hits: list[RecallHit]) -> RecallResult:
        return cls(hits, sum(1 for hit in hits if hit.source == "pending"))

    def to_json(self) -> dict[str, Any]:
        return {
            "results": [hit.to_json() for hit in self.results],
            "pending_chunks_recalled": self.pending_chunks_recalled,
        }


@dataclass(frozen=True)
class AnalyzedDoc:
    """A document with its term counts: the expensive part of indexing, done once per
    document and reused when the index around it changes."""

    doc: RecallDoc
    counts: dict[str, int]
    length: int


def analyze(doc: RecallDoc) -> AnalyzedDoc:
    """Term counts of the summary and every event; a document with `load` drops its events."""
    counts = Counter(tokenize(doc.summary))
    for event in doc.events:
        counts.update(_tokens(normalize(event_search_text(event))))
    kept = replace(doc, events=()) if doc.load is not None else doc
    return AnalyzedDoc(kept, dict(counts), sum(counts.values()))


class RecallIndex:
    """Inverted postings built once; each search touches only the postings of its terms.

    An index is never changed after it is built (a search may run in another thread):
    `extended` returns a new one that shares every postings list it does not touch.
    """

    def __init__(self, docs: Iterable[RecallDoc | AnalyzedDoc] = ()) -> None:
        self._analyzed: list[AnalyzedDoc] = []
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._add([d if isinstance(d, AnalyzedDoc) else analyze(d) for d in docs])

    def _add(self, analyzed: Sequence[AnalyzedDoc]) -> None:
        postings = self._postings
        own: set[str] = set()  # lists made by this call; the others may be shared: copied once
        for a in analyzed:
            index = len(self._analyzed)
            self._analyzed.append(a)
            for term, tf in a.counts.items():
                if term in own:
                    postings[term].append((index, tf))
                else:
                    postings[term] = [*postings.get(term, ()), (index, tf)]
                    own.add(term)
        self.docs: list[RecallDoc] = [a.doc for a in self._analyzed]
        lengths = [a.length for a in self._analyzed]
        total = sum(lengths)
        avgdl = total / len(lengths) if total else 1.0
        self._norms = [BM25_K1 * (1.0 - BM25_B + BM25_B * n / avgdl) for n in lengths]

    @classmethod
    def build(cls, docs: Iterable[RecallDoc | AnalyzedDoc]) -> RecallIndex:
        return cls(docs)

    @property
    def analyzed(self) -> Sequence[AnalyzedDoc]:
        return self._analyzed

    def extended(self, docs: Iterable[RecallDoc | AnalyzedDoc]) -> RecallIndex:
        """This index plus `docs` (after its own), without analysing its documents again."""
        new = RecallIndex.__new__(RecallIndex)
        new._analyzed = list(self._analyzed)
        new._postings = dict(self._postings)
        new._add([d if isinstance(d, AnalyzedDoc) else analyze(d) for d in docs])
        return new

    def __len__(self) -> int:
        return len(self.docs)

    def search(self, query: str, limit: int = 5) -> RecallResult:
        """Best documents first (score desc, then chunk id); only scores above 0."""
        if limit < 1:
            raise BadInputError(f"recall: limit must be at least 1, got {limit}")
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms or not self.docs:
            return RecallResult([], 0)
        n_docs = len(self.docs)
        scores: dict[int, float] = {}
        for term in terms:
            postings = self._postings.get(term)
            if not postings:
                continue
            df = len(postings)
            idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            weight = idf * (BM25_K1 + 1.0)
            norms = self._norms
            for index, tf in postings:
                scores[index] = scores.get(index, 0.0) + weight * tf / (tf + norms[index])
        docs = self.docs
        ranked = heapq.nsmallest(
            limit,
            ((i, s) for i, s in scores.items() if s > 0.0),
            key=lambda item: (-item[1], docs[item[0]].chunk_id, docs[item[0]].source),
        )
        matcher = _matcher([t for t in terms if t in self._postings])
        hits = [
            RecallHit(
                chunk_id=self.docs[index].chunk_id,
                source=self.docs[index].source,
                score=score,
                summary=self.docs[index].summary,
                events=self._matched_events(index, matcher),
            )
            for index, score in ranked
        ]
        return RecallResult.of(hits)

    def _matched_events(self, index: int, matcher: Callable[[str], bool] | None) -> list[Event]:
        if matcher is None:
            return []
        doc = self.docs[index]
        out: list[Event] = []
        for event in doc.current_events():
            if matcher(normalize(event_search_text(event))):
                out.append(event)
                if len(out) >= MAX_MATCHED_EVENTS:
                    break
        return out


def _matcher(terms: list[str]) -> Callable[[str], bool] | None:
    """A test for "this normalized text holds one of the terms" (substring search, no regex
    compiled per query)."""
    if not terms:
        return None
    checks = [(term, _CJK_RUN.fullmatch(term) is not None) for term in terms]

    def matches(text: str) -> bool:
        return any(contains_term(text, term, cjk) for term, cjk in checks)

    return matches
