"""Recall over compacted history (contract §9): ranking over chunk summaries and event text.

Pure: the manager hands in documents (indexed chunks with source "active", pending evidence with
source "pending") or a persistent corpus (core/recall/sqlite_index.py) that answers the same
questions; nothing here reads a file. The source of a result is whatever its document said; a
chunk id is opaque and never used to guess it.

Tokenization (the same for documents and queries), after NFKC and lowercasing:

- Latin/alphanumeric text: words split on every non-alphanumeric character (so `src/app_main.py`
  gives `src`, `app`, `main`, `py`); CamelCase words also give their parts (`UnicodeDecodeError`
  gives `unicodedecodeerror`, `unicode`, `decode`, `error`).
- Identifiers: a compound of several parts joined by `_ . - / : @` is kept whole
  (`src/app_main.py`, `3.14`), and so is each joined piece inside it: split on `/ : @` first
  (`node:internal/modules/run_main:98:5` gives `run_main`), then on `.` and `-`
  (`apply_fix.py` gives `apply_fix`). A query's whole identifiers weigh more than plain words,
  so an exact identifier outranks a text that only has its parts.
- English function words (`STOPWORDS`) are left out as single terms; they still count inside
  a compound.
- CJK (the Han, kana and Hangul ranges of contract §3): character bigrams of each run, and the
  character itself for a run of one.

Scoring is BM25 at the event level, aggregated per chunk: every event (and the summary) is a
unit with its own length normalisation; a chunk's score for a term is its best unit's weight
plus a small, saturating share of the others'. So one unique hit in a 278-event chunk is not
drowned by the chunk's length, and a chunk that says a word 50 times does not win by that
alone. The per-(term, chunk) figures are quantised integers computed from the chunk alone, so
a persisted index and a fresh in-memory build give equal answers. Phrases (a quoted part of the
query, or the whole query when it has several words) lift the chunks that hold them verbatim
above those that only share words.

Exact matches (issue 19): a query of one blank-free token that has parts (`package.json`,
`this.agent.state.isStreaming`, `hideOAuthSelector`, `../coding-agent/test/compaction.test.ts`)
is also looked for whole, after dropping a leading `./`, `@` or `~`. The chunks that hold it
verbatim as a name (case-insensitive; not inside a longer name: `fix.py` is not in
`apply_fix.py`, `bgGreen` not in `bgGreenBright`) are lifted above every chunk that only holds
its parts. Candidates are the first places by score plus the chunks that hold the query's
longest identifier term (up to EXACT_CANDIDATES), so a mention inside a long file dump, which
BM25 weighs little, is still found. Only candidates that hold that term are read to check
(when none does, those holding every word of the query), best first and only until `limit` of
them hold the query: a chunk file read costs more than a postings look-up, and a persistent
index must not read every candidate's file.
"""

from __future__ import annotations

import heapq
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence

from core.errors import BadInputError
from core.redact import redact_secrets
from core.text import CJK_LETTERS, content_text

TYPE_CHECKING = False  # a cold recall (core.recall.sqlite_index.recall_once) imports neither typing
if TYPE_CHECKING:  # nor dataclasses, the event model or the token estimate
    from typing import Any, Literal, Protocol

    from core.events import Event

    Source = Literal["active", "pending"]
SOURCES: frozenset[str] = frozenset({"active", "pending"})

BM25_K1 = 1.2
BM25_B = 0.75
UNIT_AVG_TERMS = 40.0
"""The average unit length BM25's normalisation assumes: fixed, so a chunk's figures do not
depend on the other chunks (an index grown chunk by chunk equals one built at once)."""
REST_SHARE = 0.5
REST_K = 2.0
"""The other units' part of a chunk's score for a term: REST_SHARE * rest / (rest + REST_K),
so it never exceeds half of one more perfect unit."""
IDENTIFIER_WEIGHT = 2.0
"""How much more a whole identifier of the query (a compound or a CamelCase word) counts
than a plain word or a part."""
WEIGHT_SCALE = 1000
"""Unit weights (0..1) are stored as integers in thousandths."""
MAX_MATCHED_EVENTS = 20
PHRASE_WINDOW = 5
"""Candidates (beyond the limit, at least this many) checked for a verbatim phrase."""
EXACT_CANDIDATES = 50
"""At most this many chunks holding an exact query's identifier term join the candidates
(best scores first): an identifier is rare, so this bounds the chunk reads of a common one."""
_EXACT_LEAD = re.compile(r"^(?:\./|[@~])+")
"""What a query may carry before the name it means: `./src/x.ts`, `@src/x.ts`, `~/.pi/x`."""

_CJK_RUNS: list[re.Pattern[str]] = []


def _cjk_run() -> re.Pattern[str]:
    """A run of CJK characters: compiled on first use (~2 ms: the ranges reach past the
    BMP), which ASCII-only queries and texts never need."""
    if not _CJK_RUNS:
        _CJK_RUNS.append(re.compile(f"[{CJK_LETTERS}]+"))
    return _CJK_RUNS[0]


_PART = re.compile(r"[^\W_]+")
_JOINED = re.compile(r"(?<![^\W_])[^\W_]++(?:[_.\-/:@]++[^\W_]++)+")
"""Words joined by `_ . - / : @` (`app_main.log`, `user@host`): kept whole besides their parts.
Run on text with its CJK blanked out; it starts only at a word's start and never backtracks
into a word (possessive), so a scan is linear in the text."""
_A_PART = re.compile(r"[a-z0-9]+")
_A_JOINED = re.compile(r"(?<![a-z0-9])[a-z0-9]++(?:[_.\-/:@]++[a-z0-9]++)+")
_A_JOINER = re.compile(r"[a-z0-9][_.\-/:@]+[a-z0-9]")
"""ASCII twins of the patterns above, for the common all-ASCII text (`_ascii_terms`), run on
its lowercased form (a lowercase-only class scans about twice as fast)."""
_A_CAMEL_EDGE = re.compile(r"[A-Z](?:(?<=[a-z0-9][A-Z])|(?=[A-Z][a-z]))")
"""An upper-case letter at a CamelCase edge (after a lower-case letter or digit, or starting
`ABc`): it begins with the upper-case class, so a scan skips to capitals in C (~5x faster
than trying the edge at every character)."""
_OUTER_SPLIT = re.compile(r"[/:@]+")
_INNER_SPLIT = re.compile(r"[.\-]+")
_JOINERS = re.compile(r"[_.\-/:@]")
_CAMEL_WORD = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z0-9]*?(?:[a-z0-9][A-Z]|[A-Z]{2}[a-z])[A-Za-z0-9]*"
)
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”")
_SPACES = re.compile(r"\s+")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "like",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "too",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
"""English function words: they match nearly every chunk, so they only add noise to a score."""


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def tokenize(text: str) -> list[str]:
    """Search terms of a text, in order of kind, duplicates kept (term frequency counts them)."""
    return _terms(unicodedata.normalize("NFKC", text))


def _terms(nfkc: str) -> list[str]:
    """The terms of an NFKC text: its lowercased words and compounds, plus CamelCase parts
    (found on the original case)."""
    if nfkc.isascii():
        return _ascii_terms(nfkc)
    low = nfkc.lower()
    tokens = _tokens(low)
    if low != nfkc:
        for word in _CAMEL_WORD.findall(nfkc):
            parts = [p.lower() for p in _CAMEL_PART.findall(word)]
            if len(parts) > 1:
                tokens.extend(p for p in parts if p not in STOPWORDS)
    return tokens


def _ascii_terms(text: str) -> list[str]:
    """`_terms` of an ASCII text (most event text), the same terms in the same order, with
    ASCII-only patterns (Unicode classes cost several times more); CamelCase words are found
    from their rare lower-to-upper edges instead of a scan of every word."""
    low = text.lower()
    stop = STOPWORDS
    tokens = [w for w in _A_PART.findall(low) if w not in stop]
    tokens += _ascii_compounds(text, low)
    return tokens


def _ascii_counts(text: str) -> Counter[str]:
    """`Counter(_ascii_terms(text))`, counted in C (the unit weights need no term order)."""
    low = text.lower()
    counts = Counter(_A_PART.findall(low))
    for word in STOPWORDS.intersection(counts):
        del counts[word]
    counts.update(_ascii_compounds(text, low))
    return counts


def _ascii_compounds(text: str, low: str) -> list[str]:
    """The terms of an ASCII text beyond its plain words: joined compounds with their pieces,
    then CamelCase parts."""
    stop = STOPWORDS
    tokens: list[str] = []
    if _A_JOINER.search(low):
        for joined in _A_JOINED.findall(low):
            tokens.append(joined)
            tokens.extend(_pieces(joined))
    if low != text:
        starts: set[int] = set()
        end_of_text = len(text)
        for edge in _A_CAMEL_EDGE.finditer(text):
            start = end = edge.start()
            while start > 0 and text[start - 1].isalnum():
                start -= 1
            if start in starts:
                continue
            starts.add(start)
            while end < end_of_text and text[end].isalnum():
                end += 1
            parts = _CAMEL_PART.findall(text[start:end])
            if len(parts) > 1:
                tokens.extend(p for p in (q.lower() for q in parts) if p not in stop)
    return tokens


def _tokens(text: str) -> list[str]:
    """CJK bigrams (a lone character as itself), then every word that is not a stop word, then
    every joined compound (`app_main.log`, `a/b`) whole and its joined pieces: found by
    whole-text regex scans rather than a walk over each compound."""
    tokens: list[str] = []
    if not text.isascii():
        cjk_run = _cjk_run()
        for run in cjk_run.findall(text):
            if len(run) == 1:
                tokens.append(run)
            else:
                tokens.extend([run[i : i + 2] for i in range(len(run) - 1)])
        text = cjk_run.sub(" ", text)
    stop = STOPWORDS
    tokens.extend([part for part in _PART.findall(text) if part not in stop])
    for joined in _JOINED.findall(text):
        tokens.append(joined)
        tokens.extend(_pieces(joined))
    return tokens


def _pieces(joined: str) -> list[str]:
    """The joined pieces inside a compound, itself left out: `a/b_c.d:9` gives `b_c.d`,
    `b_c`. Split on `/ : @` first, then on `.` and `-`; a piece without a joiner is a plain
    part (already a term)."""
    out: list[str] = []
    seen = {joined}
    for seg in _OUTER_SPLIT.split(joined):
        if seg not in seen and _JOINERS.search(seg):
            seen.add(seg)
            out.append(seg)
        for piece in _INNER_SPLIT.split(seg):
            if piece not in seen and "_" in piece:
                seen.add(piece)
                out.append(piece)
    return out


class QueryTerms:
    """What a query searches for: each distinct term with its weight, and its phrases
    (normalized, blanks collapsed). (Internal records here are plain classes: a frozen
    dataclass costs ~1 ms to define, and a cold recall imports this module.)"""

    __slots__ = ("exact", "exact_terms", "phrases", "weights")

    def __init__(
        self,
        weights: dict[str, float],
        phrases: tuple[str, ...],
        exact: tuple[str, ...] = (),
        exact_terms: tuple[str, ...] = (),
    ) -> None:
        self.weights = weights
        self.phrases = phrases
        self.exact = exact
        """The whole query (folded, leading `./ @ ~` dropped) when it is one token with parts:
        the chunks holding it verbatim come first."""
        self.exact_terms = exact_terms
        """The longest identifier terms of `exact`: the chunks holding them are candidates."""


def exact_needle(query: str) -> str | None:
    """The whole query as a name to find verbatim (folded, a leading `./`, `@` or `~`
    dropped), when it is one blank-free token with several terms; else None."""
    text = unicodedata.normalize("NFKC", query).strip().strip("\"'“”`")
    if not text or any(c.isspace() for c in text):
        return None
    text = _EXACT_LEAD.sub("", text)
    if len(set(_terms(text))) < 2:
        return None
    return text.lower()


def query_terms(query: str) -> QueryTerms:
    """Terms of a query (whole identifiers weigh IDENTIFIER_WEIGHT), its phrases (each quoted
    part, else the whole query when it has blanks between words) and its exact needle."""
    nfkc = unicodedata.normalize("NFKC", query)
    weights: dict[str, float] = {}
    for term in _terms(nfkc):
        weights.setdefault(term, 1.0)
    for word in _CAMEL_WORD.findall(nfkc):
        if len(_CAMEL_PART.findall(word)) > 1:
            weights[word.lower()] = IDENTIFIER_WEIGHT
    for term in weights:
        if _JOINERS.search(term) and len(term) > 1:
            weights[term] = IDENTIFIER_WEIGHT
    quoted = [a or b for a, b in _QUOTED.findall(nfkc)]
    candidates = quoted if quoted else [nfkc]
    phrases = []
    for text in candidates:
        phrase = _SPACES.sub(" ", text.lower()).strip(" \"'“”")
        if " " in phrase and _tokens(phrase):
            phrases.append(phrase)
    needle = exact_needle(nfkc)
    exact: tuple[str, ...] = ()
    exact_terms: tuple[str, ...] = ()
    named = [t for t, w in weights.items() if w > 1.0 and needle is not None and t in needle]
    if needle is not None and named:  # an identifier (joined or CamelCase), not a CJK run
        exact = (needle,)
        longest = max(len(t) for t in named)
        exact_terms = tuple(t for t in named if len(t) == longest)
    return QueryTerms(weights, tuple(dict.fromkeys(phrases)), exact, exact_terms)


def _exact_runs(needle: str) -> list[str]:
    """The words of a needle that any text holding it whole holds as terms of its own (its
    alphanumeric runs, stop words aside): a chunk missing one cannot hold the needle."""
    runs = _A_PART.findall(needle) if needle.isascii() else _PART.findall(needle)
    return sorted({r for r in runs if r not in STOPWORDS})


def event_search_text(event: Event) -> str:
    """What recall reads of an event: its content, name and arguments, secrets masked
    (core.redact: the recall index, chunks/recall.sqlite included, never holds a key)."""
    return redact_secrets(_event_text(event))


def _event_text(event: Event) -> str:
    content = event.get("content")
    name = event.get("name")
    args = event.get("arguments")
    if isinstance(content, str) and name is None and args is None:
        return content  # most events: no join
    parts: list[str] = []
    if content is not None:
        parts.append(content_text(content))
    if isinstance(name, str):
        parts.append(name)
    if args is not None:
        parts.append(content_text(args))
    return "\n".join(parts)


class RecallDoc:
    """One searchable unit: an indexed chunk ("active") or a pending evidence file.

    With `load`, the index keeps no events for the document once it is analysed: a search
    calls `load()` for the documents it returns (the manager reads the chunk file), so a large
    compacted history costs its term postings in memory, not every event twice.
    (The records here are plain classes, not dataclasses: a cold recall imports this module,
    and `dataclasses` with what it pulls in costs ~8 ms.)
    """

    __slots__ = ("chunk_id", "events", "load", "source", "summary")

    def __init__(
        self,
        chunk_id: str,
        source: Source,
        summary: str,
        events: Sequence[Event],
        load: Callable[[], Sequence[Event]] | None = None,
    ) -> None:
        if source not in SOURCES:
            raise ValueError(f"recall source must be 'active' or 'pending', got {source!r}")
        self.chunk_id = chunk_id
        self.source: Source = source
        self.summary = summary
        self.events = events
        self.load = load

    def _key(self) -> tuple[object, ...]:
        return (self.chunk_id, self.source, self.summary, self.events)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecallDoc) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.chunk_id, self.source, self.summary))

    def __repr__(self) -> str:
        return (
            f"RecallDoc(chunk_id={self.chunk_id!r}, source={self.source!r}, "
            f"summary={self.summary!r}, events={self.events!r})"
        )

    def without_events(self) -> RecallDoc:
        return RecallDoc(self.chunk_id, self.source, self.summary, (), self.load)

    def current_events(self) -> Sequence[Event]:
        return self.events if self.load is None else self.load()


class RecallHit:
    """One result. `events`: the chunk's events whose own text has a query term, in order, at
    most 20. `session_id` is set by a search over several sessions (`recall --all-sessions`):
    the session it is from."""

    __slots__ = ("archived", "chunk_id", "events", "score", "session_id", "source", "summary")

    def __init__(
        self,
        chunk_id: str,
        source: Source,
        score: float,
        summary: str,
        events: list[Event],
        session_id: str | None = None,
        archived: bool = False,
    ) -> None:
        self.chunk_id = chunk_id
        self.source: Source = source
        self.score = score
        self.summary = summary
        self.events = events
        self.session_id = session_id
        self.archived = archived

    def _key(self) -> tuple[object, ...]:
        return (
            self.chunk_id,
            self.source,
            self.score,
            self.summary,
            self.events,
            self.session_id,
            self.archived,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RecallHit) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # holds a list, as the dataclass did

    def __repr__(self) -> str:
        return (
            f"RecallHit(chunk_id={self.chunk_id!r}, source={self.source!r}, "
            f"score={self.score!r}, summary={self.summary!r}, events={self.events!r}, "
            f"session_id={self.session_id!r}, archived={self.archived!r})"
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "chunk_id": self.chunk_id,
            "source": self.source,
            "score": round(self.score, 4),
            "summary": self.summary,
            "events": list(self.events),
        }
        if self.session_id is not None:
            out["session_id"] = self.session_id
            out["archived"] = self.archived
        return out


class RecallResult:
    """`pending_chunks_recalled`: results whose source is "pending", and nothing else (never
    inferred from an id)."""

    __slots__ = ("pending_chunks_recalled", "results")

    def __init__(self, results: list[RecallHit], pending_chunks_recalled: int) -> None:
        self.results = results
        self.pending_chunks_recalled = pending_chunks_recalled

    @classmethod
    def of(cls, hits: list[RecallHit]) -> RecallResult:
        return cls(hits, sum(1 for hit in hits if hit.source == "pending"))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, RecallResult)
            and self.results == other.results
            and self.pending_chunks_recalled == other.pending_chunks_recalled
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"RecallResult(results={self.results!r}, "
            f"pending_chunks_recalled={self.pending_chunks_recalled!r})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "results": [hit.to_json() for hit in self.results],
            "pending_chunks_recalled": self.pending_chunks_recalled,
        }


TermStats = dict[str, tuple[int, int]]
"""term -> (best unit's weight, sum of all units' weights), in thousandths."""


class AnalyzedDoc:
    """A document with its per-term figures: the expensive part of indexing, done once per
    document and reused (or stored) when the index around it changes."""

    __slots__ = ("doc", "stats")

    def __init__(self, doc: RecallDoc, stats: TermStats) -> None:
        self.doc = doc
        self.stats = stats


def unit_weights(text: str) -> dict[str, int]:
    """BM25 term weights of one unit (an event or a summary), in thousandths: tf / (tf + norm)
    with the unit's own length against UNIT_AVG_TERMS."""
    if text.isascii():
        counts = _ascii_counts(text)
    else:
        counts = Counter(_terms(unicodedata.normalize("NFKC", text)))
    if not counts:
        return {}
    length = sum(counts.values())
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / UNIT_AVG_TERMS)
    return {t: round(WEIGHT_SCALE * tf / (tf + norm)) or 1 for t, tf in counts.items()}


def analyze_texts(summary: str, texts: Iterable[str]) -> TermStats:
    """Per-term (best, sum) over the summary and every text."""
    best: dict[str, int] = {}
    total: dict[str, int] = {}
    for text in (summary, *texts):
        for term, w in unit_weights(text).items():
            old = best.get(term)
            if old is None:
                best[term] = total[term] = w
            else:
                if w > old:
                    best[term] = w
                total[term] += w
    return {t: (best[t], total[t]) for t in best}


def analyze(doc: RecallDoc) -> AnalyzedDoc:
    """Term figures of the summary and every event; a document with `load` drops its events."""
    stats = analyze_texts(doc.summary, (event_search_text(e) for e in doc.events))
    kept = doc.without_events() if doc.load is not None else doc
    return AnalyzedDoc(kept, stats)


def term_score(idf: float, best: int, total: int) -> float:
    """A chunk's score for one term: the best unit plus a saturating share of the rest."""
    rest = (total - best) / WEIGHT_SCALE
    return idf * (BM25_K1 + 1.0) * (best / WEIGHT_SCALE + REST_SHARE * rest / (rest + REST_K))


def idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


Posting = tuple[Hashable, int, int]
"""(document key, best, total) for one term."""
TermBound = tuple[int, int, int]
"""(document frequency, max best, max of total - best) of one term: `_score`'s MaxScore
bound for a term is its term_score at these maxima (the score rises with both)."""


def bound_of(postings: Iterable[Posting]) -> TermBound:
    df = max_best = max_rest = 0
    for _, best, total in postings:
        df += 1
        max_best = max(max_best, best)
        max_rest = max(max_rest, total - best)
    return (df, max_best, max_rest)


if TYPE_CHECKING:  # a protocol for the type checker only (no typing import at run time)

    class Corpus(Protocol):
        """What a search needs of an index: the in-memory `RecallIndex` and the persistent
        `core.recall.sqlite_index.PersistentRecallIndex` both answer it."""

        def doc_count(self) -> int: ...

        def doc_freq(self, terms: Sequence[str]) -> Mapping[str, int]: ...

        def term_stats(self, terms: Sequence[str]) -> Mapping[str, TermBound]:
            """Per term held: (documents, max best, max of total - best) over its postings."""
            ...

        def postings(self, terms: Sequence[str]) -> Mapping[str, Sequence[Posting]]: ...

        def postings_for(self, term: str, keys: Sequence[Hashable]) -> Sequence[Posting]:
            """The postings of `term` for these documents only."""
            ...

        def doc(self, key: Hashable) -> RecallDoc: ...


class Part:
    """One corpus of a search and the session its results are from (None: not said)."""

    __slots__ = ("archived", "corpus", "session_id")

    def __init__(
        self, corpus: Corpus, session_id: str | None = None, archived: bool = False
    ) -> None:
        self.corpus = corpus
        self.session_id = session_id
        self.archived = archived


class RecallIndex:
    """Inverted postings built once; each search touches only the postings of its terms.

    An index is never changed after it is built (a search may run in another thread):
    `extended` returns a new one that shares every postings list it does not touch.
    """

    def __init__(self, docs: Iterable[RecallDoc | AnalyzedDoc] = ()) -> None:
        self._analyzed: list[AnalyzedDoc] = []
        self._postings: dict[str, list[Posting]] = {}
        self._bounds: dict[str, TermBound] = {}
        self.docs: list[RecallDoc] = []
        self._add([d if isinstance(d, AnalyzedDoc) else analyze(d) for d in docs])

    def _add(self, analyzed: Sequence[AnalyzedDoc]) -> None:
        postings = self._postings
        own: set[str] = set()  # lists made by this call; the others may be shared: copied once
        for a in analyzed:
            index = len(self._analyzed)
            self._analyzed.append(a)
            for term, (best, total) in a.stats.items():
                if term in own:
                    postings[term].append((index, best, total))
                else:
                    postings[term] = [*postings.get(term, ()), (index, best, total)]
                    own.add(term)
        self.docs = [a.doc for a in self._analyzed]

    @property
    def analyzed(self) -> Sequence[AnalyzedDoc]:
        return self._analyzed

    def extended(self, docs: Iterable[RecallDoc | AnalyzedDoc]) -> RecallIndex:
        """This index plus `docs` (after its own), without analysing its documents again."""
        new = RecallIndex.__new__(RecallIndex)
        new._analyzed = list(self._analyzed)
        new._postings = dict(self._postings)
        new._bounds = {}
        new._add([d if isinstance(d, AnalyzedDoc) else analyze(d) for d in docs])
        return new

    def __len__(self) -> int:
        return len(self.docs)

    def doc_count(self) -> int:
        return len(self.docs)

    def doc_freq(self, terms: Sequence[str]) -> Mapping[str, int]:
        return {t: len(self._postings[t]) for t in terms if t in self._postings}

    def term_stats(self, terms: Sequence[str]) -> Mapping[str, TermBound]:
        out: dict[str, TermBound] = {}
        for t in terms:
            if t in self._postings:
                b = self._bounds.get(t)
                if b is None:
                    b = self._bounds[t] = bound_of(self._postings[t])
                out[t] = b
        return out

    def postings(self, terms: Sequence[str]) -> Mapping[str, Sequence[Posting]]:
        return {t: self._postings[t] for t in terms if t in self._postings}

    def postings_for(self, term: str, keys: Sequence[Hashable]) -> Sequence[Posting]:
        wanted = set(keys)
        return [p for p in self._postings.get(term, ()) if p[0] in wanted]

    def doc(self, key: Hashable) -> RecallDoc:
        assert isinstance(key, int)
        return self.docs[key]

    def search(self, query: str, limit: int = 5) -> RecallResult:
        """Best documents first (score desc, then chunk id); only scores above 0."""
        return search([Part(self)], query, limit)


def search(parts: Sequence[Part], query: str, limit: int = 5) -> RecallResult:
    """Rank the documents of every part together (one idf over all of them): best first
    (score desc, then chunk id, source and session), only scores above 0; the chunks that hold
    a phrase of the query verbatim are lifted above the rest of the first candidates."""
    if limit < 1:
        raise BadInputError(f"recall: limit must be at least 1, got {limit}")
    q = query_terms(query)
    terms = list(q.weights)
    if not terms:
        return RecallResult([], 0)
    n_docs = sum(p.corpus.doc_count() for p in parts)
    if not n_docs:
        return RecallResult([], 0)
    window = limit + PHRASE_WINDOW if q.phrases or q.exact else limit
    scores, found, weights = _score(parts, q, terms, n_docs, window)
    read = _Candidates(parts)
    ranked = _first_candidates(scores, window, read.order)
    if not ranked:
        return RecallResult([], 0)
    if q.exact_terms:
        ranked = _with_exact_candidates(parts, q, weights, scores, ranked, read.order)
    ranked = _lift_verbatim(q, ranked, read, limit)
    matched_terms = [t for t in terms if t in found]
    strong = frozenset(t for t in matched_terms if q.weights[t] > 1.0)
    hits: list[RecallHit] = []
    for k, score in ranked[:limit]:
        d = read.doc(k)
        part = parts[k[0]]
        hits.append(
            RecallHit(
                chunk_id=d.chunk_id,
                source=d.source,
                score=score,
                summary=d.summary,
                events=_matched_events(read.events(k), matched_terms, strong, q.phrases, q.exact),
                session_id=part.session_id,
                archived=part.archived,
            )
        )
    return RecallResult.of(hits)


class _Candidates:
    """The candidates' documents and events, each read once (a part may read them from SQLite):
    ranking reads a document's ids to break ties, and a candidate's events to look for the
    query's phrases and to list the matched events."""

    def __init__(self, parts: Sequence[Part]) -> None:
        self.parts = parts
        self._docs: dict[tuple[int, Hashable], RecallDoc] = {}
        self._events: dict[tuple[int, Hashable], Sequence[Event]] = {}

    def doc(self, k: tuple[int, Hashable]) -> RecallDoc:
        d = self._docs.get(k)
        if d is None:
            d = self._docs[k] = self.parts[k[0]].corpus.doc(k[1])
        return d

    def events(self, k: tuple[int, Hashable]) -> Sequence[Event]:
        if k not in self._events:
            self._events[k] = self.doc(k).current_events()
        return self._events[k]

    def order(self, item: tuple[tuple[int, Hashable], float]) -> tuple[float, str, str, str]:
        """Rank order: score desc, then chunk id, source and session."""
        d = self.doc(item[0])
        return (-item[1], d.chunk_id, d.source, self.parts[item[0][0]].session_id or "")


def _first_candidates(
    scores: dict[tuple[int, Hashable], float],
    window: int,
    order: Callable[[tuple[tuple[int, Hashable], float]], tuple[float, str, str, str]],
) -> list[tuple[tuple[int, Hashable], float]]:
    """The `window` best positive scores in rank order. Every tie at the window's edge is a
    candidate before the cut, so the ids, not the order scores came in, break ties."""
    top = heapq.nlargest(window, (s for s in scores.values() if s > 0.0))
    if not top:
        return []
    floor = top[-1]
    return sorted(((k, s) for k, s in scores.items() if s >= floor), key=order)[:window]


def _lift_verbatim(
    q: QueryTerms,
    ranked: list[tuple[tuple[int, Hashable], float]],
    read: _Candidates,
    limit: int,
) -> list[tuple[tuple[int, Hashable], float]]:
    """`ranked` with the candidates that hold a phrase of the query (or, for an exact query,
    the query itself) verbatim lifted above the rest by the best score, in rank order
    (`ranked` is never empty)."""
    if q.phrases:
        lift = ranked[0][1]
        return sorted(
            (
                (k, s + lift if _holds_phrase(read.doc(k), read.events(k), q.phrases) else s)
                for k, s in ranked
            ),
            key=read.order,
        )
    if q.exact:
        # Best first, only the candidates that may hold the query are read, and only until
        # `limit` of them hold it: a lifted chunk below those could not reach the results.
        lift = ranked[0][1]
        may_hold = _may_hold(read.parts, [k for k, _ in ranked], q)
        holders: set[tuple[int, Hashable]] = set()
        for k, _s in ranked:
            if len(holders) >= limit:
                break
            if k in may_hold and _holds_exact(read.doc(k), read.events(k), q.exact):
                holders.add(k)
        return sorted(((k, s + lift if k in holders else s) for k, s in ranked), key=read.order)
    return ranked


def _may_hold(
    parts: Sequence[Part], keys: Sequence[tuple[int, Hashable]], q: QueryTerms
) -> set[tuple[int, Hashable]]:
    """The candidates worth reading to see whether they hold an exact query whole: those
    holding its identifier term (`module_4.py`), or when none does (the name sits inside a
    longer path: `/Users/me/.pi/agent/settings.json` for `~/.pi/agent/settings.json`), those
    holding every word of it. A chunk file read costs more than a postings look-up."""
    if not q.exact:
        return set()
    by_part: dict[int, list[Hashable]] = {}
    for p, key in keys:
        by_part.setdefault(p, []).append(key)

    def holding(terms: Sequence[str], every: bool) -> set[tuple[int, Hashable]]:
        out: set[tuple[int, Hashable]] = set()
        for p, part_keys in by_part.items():
            sets = [
                {key for key, _b, _t in parts[p].corpus.postings_for(t, part_keys)} for t in terms
            ]
            if sets:
                held = set.intersection(*sets) if every else set.union(*sets)
                out.update((p, key) for key in held)
        return out

    named = holding(q.exact_terms, every=False)
    if named:
        return named
    out: set[tuple[int, Hashable]] = set()
    for needle in q.exact:
        out |= holding(_exact_runs(needle), every=True)
    return out


def _with_exact_candidates(
    parts: Sequence[Part],
    q: QueryTerms,
    weights: Mapping[str, float],
    scores: dict[tuple[int, Hashable], float],
    ranked: list[tuple[tuple[int, Hashable], float]],
    order: Callable[[tuple[tuple[int, Hashable], float]], tuple[float, str, str, str]],
) -> list[tuple[tuple[int, Hashable], float]]:
    """`ranked` plus the chunks holding an exact query's identifier term (scored in full as
    the others are; at most EXACT_CANDIDATES of them, best first), in rank order."""
    have = {k for k, _ in ranked}
    holders: dict[int, set[Hashable]] = {}
    for p, part in enumerate(parts):
        for term in q.exact_terms:
            for key, _best, _total in part.corpus.postings([term]).get(term, ()):
                if (p, key) not in have:
                    holders.setdefault(p, set()).add(key)
    if not holders:
        return ranked
    full: dict[tuple[int, Hashable], float] = {}
    for p, keys in holders.items():
        wanted = sorted(keys, key=repr)
        for term in sorted(weights, key=lambda t: (-weights[t], t)):
            w = weights[term]
            for key, best, total in parts[p].corpus.postings_for(term, wanted):
                full[(p, key)] = full.get((p, key), 0.0) + term_score(w, best, total)
    extra = sorted(full.items(), key=order)[:EXACT_CANDIDATES]
    for k, v in extra:
        scores[k] = v
    return sorted([*ranked, *extra], key=order)


def _score(
    parts: Sequence[Part], q: QueryTerms, terms: Sequence[str], n_docs: int, window: int
) -> tuple[dict[tuple[int, Hashable], float], set[str], dict[str, float]]:
    """Scores of the documents that can reach the first `window` places, and the query terms
    some document holds. Terms go rarest first (highest weighted idf); once the window's
    lowest score exceeds what every remaining term could still add (MaxScore), a document not
    seen yet cannot enter it, and the remaining terms are read for the seen documents that
    still could, not for every document that holds a common word. The window and its ties
    are the same as scoring every document."""
    stats = [p.corpus.term_stats(terms) for p in parts]
    weights: dict[str, float] = {}
    peak: dict[str, tuple[int, int]] = {}
    for term in terms:
        held = [f[term] for f in stats if term in f]
        df = sum(h[0] for h in held)
        if df:
            weights[term] = idf(n_docs, df) * q.weights[term]
            peak[term] = (max(h[1] for h in held), max(h[2] for h in held))
    order = sorted(weights, key=lambda t: (-weights[t], t))
    # The most a term can add to any document: its score at its own maxima (a hair more,
    # so float rounding never prunes a document that could tie).
    bound = [
        term_score(weights[t], peak[t][0], peak[t][0] + peak[t][1]) * (1.0 + 1e-9) for t in order
    ]
    rest = [sum(bound[i:]) for i in range(len(order))]
    scores: dict[tuple[int, Hashable], float] = {}
    for i, term in enumerate(order):
        if len(scores) >= window:
            floor = heapq.nlargest(window, scores.values())[-1]
            if floor > rest[i]:
                keep = [k for k, v in scores.items() if v + rest[i] >= floor]
                scores = {k: scores[k] for k in keep}
                by_part: dict[int, list[Hashable]] = {}
                for p, key in keep:
                    by_part.setdefault(p, []).append(key)
                for later in order[i:]:
                    w = weights[later]
                    for p, keys in by_part.items():
                        for key, best, total in parts[p].corpus.postings_for(later, keys):
                            scores[(p, key)] += term_score(w, best, total)
                return scores, set(order), weights
        w = weights[term]
        c = w * (BM25_K1 + 1.0)
        get = scores.get
        for p, part in enumerate(parts):
            for key, best, total in part.corpus.postings([term]).get(term, ()):
                k = (p, key)
                # term_score inlined (the same arithmetic: equal floats): the hot loop
                rest_w = (total - best) / WEIGHT_SCALE
                scores[k] = get(k, 0.0) + c * (
                    best / WEIGHT_SCALE + REST_SHARE * rest_w / (rest_w + REST_K)
                )
    return scores, set(order), weights


def _fold(text: str) -> str:
    """Lowercase, and NFKC first when the text is not ASCII (ASCII is its own NFKC)."""
    return text.lower() if text.isascii() else normalize(text)


def _phrase_in(text: str, phrases: Sequence[str], words: Sequence[Sequence[str]]) -> bool:
    """Whether a folded text holds one of the phrases (blanks collapsed); every word of a
    phrase is looked for first, so most texts are rejected without a rewrite."""
    for phrase, parts in zip(phrases, words, strict=True):
        if all(w in text for w in parts) and contains_term(_SPACES.sub(" ", text), phrase, False):
            return True
    return False


class EventTexts(list):  # type: ignore[type-arg]  # list[Event], with what search reads
    """A chunk's events with each one's search text and its folded form, computed once: an
    index that caches a chunk's events (core.recall.sqlite_index) hands these to every later search
    instead of a plain list, so a warm query does not rebuild and lowercase them again."""

    __slots__ = ("_texts",)

    def __init__(self, events: Iterable[Event] = ()) -> None:
        super().__init__(events)
        self._texts: list[tuple[str, str]] | None = None

    def texts(self) -> list[tuple[str, str]]:
        if self._texts is None:
            self._texts = [(t, _fold(t)) for t in map(event_search_text, self)]
        return self._texts


def _texts_of(events: Sequence[Event]) -> Iterable[tuple[str, str]]:
    """(search text, folded text) of each event."""
    if isinstance(events, EventTexts):
        return events.texts()
    return ((t, _fold(t)) for t in map(event_search_text, events))


def _is_name_char(ch: str) -> bool:
    """A character that continues a name: `fix.py` is not a name of its own inside
    `apply_fix.py` (after `_`), nor `bgGreen` inside `bgGreenBright`."""
    return _is_word_char(ch) or ch in "_-"


def holds_exact(text: str, needle: str) -> bool:
    """Whether a folded text holds `needle` as a whole name: not continued by a name character
    on a side where the needle itself starts or ends with one."""
    start_open = not _is_name_char(needle[0])
    end_open = not _is_name_char(needle[-1])
    at = text.find(needle)
    while at >= 0:
        end = at + len(needle)
        before_ok = start_open or at == 0 or not _is_name_char(text[at - 1])
        after_ok = end_open or end == len(text) or not _is_name_char(text[end])
        if before_ok and after_ok:
            return True
        at = text.find(needle, at + 1)
    return False


def _holds_exact(doc: RecallDoc, events: Sequence[Event], needles: Sequence[str]) -> bool:
    if any(holds_exact(_fold(doc.summary), n) for n in needles):
        return True
    return any(n in low and holds_exact(low, n) for _, low in _texts_of(events) for n in needles)


def _holds_phrase(doc: RecallDoc, events: Sequence[Event], phrases: Sequence[str]) -> bool:
    words = [p.split(" ") for p in phrases]
    if _phrase_in(_fold(doc.summary), phrases, words):
        return True
    return any(_phrase_in(low, phrases, words) for _, low in _texts_of(events))


def _matched_events(
    events: Sequence[Event],
    terms: Sequence[str],
    strong: frozenset[str],
    phrases: Sequence[str],
    exact: Sequence[str] = (),
) -> list[Event]:
    """The events that share a term with the query, in order, at most MAX_MATCHED_EVENTS.
    When some event holds the exact query, only such events are listed; else when some holds
    a whole identifier or a phrase of the query, only those (the others matched on a part
    like `py` or `4` alone)."""
    if not terms:
        return []
    wanted = set(terms)
    cjk = {t: not t.isascii() and _cjk_run().fullmatch(t) is not None for t in wanted}
    words = [p.split(" ") for p in phrases]
    matched: list[tuple[Event, bool, bool]] = []
    any_strong = any_exact = False
    for event, (text, low) in zip(events, _texts_of(events), strict=True):
        present = [term for term in wanted if term in low]
        if not present:  # most events: a substring scan says no
            continue
        shared = {t for t in present if contains_term(low, t, cjk[t])}
        if not shared and text.lower() != text:
            # a CamelCase part sits inside a word: only the text's own terms can tell
            shared = wanted.intersection(_terms(unicodedata.normalize("NFKC", text)))
        if not shared:
            continue
        is_strong = not strong.isdisjoint(shared) or (
            bool(phrases) and _phrase_in(low, phrases, words)
        )
        is_exact = any(n in low and holds_exact(low, n) for n in exact)
        any_strong = any_strong or is_strong
        any_exact = any_exact or is_exact
        matched.append((event, is_strong, is_exact))
    if any_exact:
        kept = [e for e, _, is_exact in matched if is_exact]
    else:
        kept = [e for e, is_strong, _ in matched if is_strong or not any_strong]
    return kept[:MAX_MATCHED_EVENTS]


def _is_cjk(ch: str) -> bool:
    return not ch.isascii() and _cjk_run().match(ch) is not None


def _is_word_char(ch: str) -> bool:
    """A character that continues a Latin/alphanumeric word (CJK and "_" do not)."""
    return ch.isalnum() and not _is_cjk(ch)


def contains_term(text: str, term: str, cjk: bool) -> bool:
    """Whether `term` occurs in a normalized text as a token would (not inside a longer word)."""
    if cjk and len(term) > 1:
        return term in text
    at = text.find(term)
    while at >= 0:
        end = at + len(term)
        before = text[at - 1] if at > 0 else ""
        after = text[end] if end < len(text) else ""
        if cjk:
            ok = not (before and _is_cjk(before)) and not (after and _is_cjk(after))
        else:
            ok = not (before and _is_word_char(before)) and not (after and _is_word_char(after))
        if ok:
            return True
        at = text.find(term, at + 1)
    return False


def highlight_spans(text: str, query: str) -> list[tuple[int, int]]:
    """Where a query's terms and phrases occur in `text` (start, end offsets into `text`
    itself, merged, in order): for showing a hit, never for ranking. Matching is on the
    lowercased text; a text whose lowercase changes its length is matched as is."""
    q = query_terms(query)
    low = text.lower()
    if len(low) != len(text):
        low = text
    spans: list[tuple[int, int]] = []
    needles = [*q.phrases, *q.weights]
    for needle in needles:
        if not needle:
            continue
        cjk = not needle.isascii() and _cjk_run().search(needle) is not None
        at = low.find(needle)
        while at >= 0:
            end = at + len(needle)
            before = low[at - 1] if at > 0 else ""
            after = low[end] if end < len(low) else ""
            boundary = cjk or not (
                (before and _is_word_char(before) and not _camel_edge(text, at))
                or (after and _is_word_char(after) and not _camel_edge(text, end))
            )
            if boundary:
                spans.append((at, end))
            at = low.find(needle, at + 1)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _camel_edge(text: str, at: int) -> bool:
    """Whether offset `at` is a CamelCase boundary of `text` (`decode` in `UnicodeDecode`)."""
    if at <= 0 or at >= len(text):
        return False
    a, b = text[at - 1], text[at]
    if a.islower() and b.isupper():
        return True
    nxt = text[at + 1] if at + 1 < len(text) else ""
    return a.isupper() and b.isupper() and nxt.islower()
