"""extraction.yaml (contract §4): compaction settings, validated once, immutable afterwards.

Every problem is reported as one line naming the file and the key, saying what was expected
and what was found, so a person can fix the file without reading this code.
"""

from __future__ import annotations

import dataclasses
import difflib
import errno
import math
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from core.errors import ConfigError
from core.yaml_safe import strict_load

ENV_CONFIG = "SESSION_INSPECTOR_CONFIG"
SECTION = "session_compaction"
BACKENDS = ("extractive", "openai")


class ModelWindows(Mapping[str, int]):
    """Model name → context window; immutable and hashable so the config can be too."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, int] | None = None) -> None:
        self._data: dict[str, int] = dict(data or {})

    def __getitem__(self, key: str) -> int:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __repr__(self) -> str:
        return f"ModelWindows({self._data!r})"


# key -> (kind, lower bound, lower bound inclusive, upper bound or None)
_Spec = tuple[Literal["int", "number"], float, bool, float | None]
_MAX_COUNT = 10**12
"""Upper bound of every count and token figure: far above any real value, and low enough
that arithmetic on it never overflows a float (a 400-digit figure did)."""
_MAX_SECONDS = 86_400.0
"""Upper bound of the waits: a day (1e300 seconds overflowed the lock's deadline)."""
_TOP_SPECS: dict[str, _Spec] = {
    "context_window": ("int", 1, True, _MAX_COUNT),
    "reserve_tokens": ("int", 0, True, _MAX_COUNT),
    "compress_at_percent": ("number", 0, False, 100),
    "count_compress_after_events": ("int", 1, True, _MAX_COUNT),
    "keep_recent_tokens": ("int", 1, True, _MAX_COUNT),
    "hot_window_events": ("int", 1, True, _MAX_COUNT),
    "summary_max_chunks": ("int", 1, True, _MAX_COUNT),
    "max_rolling_summary_lines": ("int", 2, True, _MAX_COUNT),
    "compact_headroom_percent": ("number", 0, True, 50),
    "lock_timeout_seconds": ("number", 0, False, _MAX_SECONDS),
    "fsync_interval_ms": ("int", 1, True, 60_000),
}
_SUMMARIZER_SPECS: dict[str, _Spec] = {
    "timeout_seconds": ("number", 0, False, _MAX_SECONDS),
    "max_summary_tokens": ("int", 1, True, _MAX_COUNT),
}
DURABILITY = ("run", "always", "relaxed")
"""`durability:` values (see docs/RELIABILITY.md): when appends reach the disk."""
_SUMMARIZER_STR_KEYS = ("base_url", "model", "api_key_env")
_SUMMARIZER_KEYS = ("backend", *_SUMMARIZER_STR_KEYS, *_SUMMARIZER_SPECS)
_BOUNDARY_SPECS: dict[str, _Spec] = {"idle_gap_minutes": ("number", 0, True, 1e9)}
_TOP_KEYS = (
    *_TOP_SPECS,
    "durability",
    "models",
    "summarizer",
    "session_boundary",
    "redact_secrets",
)


def _expected(spec: _Spec, value: object = None) -> str:
    """What a key takes. A sanity cap (_MAX_COUNT, _MAX_SECONDS) is named only to a value
    above it: it is not a limit anyone meets otherwise."""
    kind, low, inclusive, high = spec
    noun = "an integer" if kind == "int" else "a number"
    low_text = f"{'≥' if inclusive else '>'} {low:g}"
    if high in (_MAX_COUNT, _MAX_SECONDS) and not (
        isinstance(value, int | float) and not isinstance(value, bool) and value > high
    ):
        high = None
    return f"{noun} {low_text}" + (f" and ≤ {high:g}" if high is not None else "")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return _is_int(value)


def _fits(value: object, spec: _Spec) -> bool:
    kind, low, inclusive, high = spec
    if not (_is_int(value) if kind == "int" else _is_number(value)):
        return False
    assert isinstance(value, int | float)
    above = value >= low if inclusive else value > low
    return above and (high is None or value <= high)


def _found(value: object) -> str:
    """What the file holds, in YAML terms, short enough for a one-line message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class SummarizerConfig:
    """Which summarizer writes chunk summaries; `openai` is any chat-completions server."""

    backend: Literal["extractive", "openai"] = "extractive"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout_seconds: float = 60.0
    max_summary_tokens: int = 1024

    def __post_init__(self) -> None:
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        _check_summarizer(values, "SummarizerConfig", "")


def _check_summarizer(values: Mapping[str, Any], source: str, prefix: str) -> None:
    """Checks that need several summarizer keys at once (the openai backend's requirements)."""
    backend = values["backend"]
    if backend not in BACKENDS:
        raise ConfigError(
            f"{source}: {prefix}backend must be one of extractive, openai, got {_found(backend)}"
        )
    for key in _SUMMARIZER_STR_KEYS:
        if values[key] is not None and not isinstance(values[key], str):
            raise ConfigError(
                f"{source}: {prefix}{key} must be a string, got {_found(values[key])}"
            )
    for key, spec in _SUMMARIZER_SPECS.items():
        if not _fits(values[key], spec):
            raise ConfigError(
                f"{source}: {prefix}{key} must be {_expected(spec, values[key])}, "
                f"got {_found(values[key])}"
            )
    if backend == "openai":
        for key in ("base_url", "model"):
            if not values[key]:
                raise ConfigError(
                    f"{source}: {prefix}{key} is required when {prefix}backend is openai"
                )
        if not values["base_url"].startswith(("http://", "https://")):
            raise ConfigError(
                f"{source}: {prefix}base_url must be an http:// or https:// URL, "
                f"got {_found(values['base_url'])}"
            )


@dataclass(frozen=True)
class CompactionConfig:
    """The `session_compaction:` section with the defaults of contract §4."""

    context_window: int = 128000
    reserve_tokens: int = 16384
    compress_at_percent: float = 80.0
    count_compress_after_events: int = 120
    keep_recent_tokens: int = 20000
    hot_window_events: int = 40
    summary_max_chunks: int = 8
    max_rolling_summary_lines: int = 100
    compact_headroom_percent: float = 10.0
    """After a pass the predicted prompt must be this share of the window below the trigger
    threshold, else the cut moves forward (contract §5, Headroom; core.compaction.headroom)."""
    lock_timeout_seconds: float = 10.0
    models: Mapping[str, int] = field(default_factory=ModelWindows)
    summarizer: SummarizerConfig = field(default_factory=SummarizerConfig)
    idle_gap_minutes: float = 0.0
    durability: Literal["run", "always", "relaxed"] = "run"
    """`run`: appends reach the disk by the end of a CLI append, at `commit_run` and within
    `fsync_interval_ms`; `always`: before each append returns; `relaxed`: when the OS writes
    them (a power cut may lose the last ones). See docs/RELIABILITY.md."""
    fsync_interval_ms: int = 1000
    redact_secrets: bool = True
    """Mask API keys, tokens, passwords and private keys (core.redact) in everything derived
    from events: chunk summaries, summary.md, what a summarizer is sent, the TUI's view. The
    events themselves are never changed."""

    def __post_init__(self) -> None:
        """Same checks as the file gets, so a what-if `replace()` cannot build a broken config."""
        if not isinstance(self.redact_secrets, bool):
            raise ConfigError(
                f"CompactionConfig: redact_secrets must be true or false, "
                f"got {_found(self.redact_secrets)}"
            )
        if self.durability not in DURABILITY:
            raise ConfigError(
                f"CompactionConfig: durability must be one of {', '.join(DURABILITY)}, "
                f"got {_found(self.durability)}"
            )
        if not isinstance(self.models, ModelWindows):
            object.__setattr__(self, "models", ModelWindows(self.models))
        for key, spec in (*_TOP_SPECS.items(), *_BOUNDARY_SPECS.items()):
            value = getattr(self, key)
            if not _fits(value, spec):
                raise ConfigError(
                    f"CompactionConfig: {key} must be {_expected(spec, value)}, got {_found(value)}"
                )
        for name, window in self.models.items():
            if not _fits(window, _TOP_SPECS["context_window"]):
                raise ConfigError(
                    f"CompactionConfig: models[{name!r}] must be an integer ≥ 1, "
                    f"got {_found(window)}"
                )

    def window_for(self, model: str | None) -> int:
        """The active model's window when the models map knows it, else context_window."""
        if model is not None and model in self.models:
            return self.models[model]
        return self.context_window

    def effective_reserve(self, window: int) -> int:
        """reserve_tokens clamped to half the window, so a small window can still hold a prompt.

        Flooring is exact here: for integer prompts, `prompt ≥ window − window/2` and
        `prompt ≥ window − window // 2` agree.
        """
        return min(self.reserve_tokens, window // 2)

    def replace(self, **changes: Any) -> CompactionConfig:
        """A copy with some values changed (validated like the file), e.g. for a what-if view."""
        return dataclasses.replace(self, **changes)


DEFAULT_CONFIG = CompactionConfig()


@dataclass(frozen=True)
class LoadedConfig:
    """The config in force, the file it came from (None: built-in defaults) and its warnings."""

    config: CompactionConfig
    source: Path | None
    warnings: list[str] = field(default_factory=list)


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.warnings: list[str] = []

    def error(self, key: str, expected: str, value: object) -> ConfigError:
        return ConfigError(f"{self.source}: {key} must be {expected}, got {_found(value)}")

    def section(self, value: object, key: str, known: tuple[str, ...]) -> dict[str, Any]:
        """A mapping (null: empty) with unknown keys reported as warnings."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(key, "a mapping", value)
        for name in value:
            if name not in known:
                hint = difflib.get_close_matches(str(name), known, n=1)
                more = f"; did you mean {hint[0]!r}?" if hint else ""
                shown = name if isinstance(name, str) else _found(name)
                self.warnings.append(f"{self.source}: unknown key {key}.{shown} is ignored{more}")
        return value

    def scalar(self, data: dict[str, Any], key: str, prefix: str, spec: _Spec) -> Any:
        value = data[key]
        if not _fits(value, spec):
            raise self.error(f"{prefix}.{key}", _expected(spec, value), value)
        return float(value) if spec[0] == "number" else value

    def models(self, value: object) -> ModelWindows:
        key = f"{SECTION}.models"
        if value is None:
            return ModelWindows()
        if not isinstance(value, dict):
            raise self.error(key, "a mapping of model name to context window", value)
        out: dict[str, int] = {}
        for name, window in value.items():
            if not isinstance(name, str) or not name:
                raise self.error(f"{key} keys", "model names (non-empty strings)", name)
            if not _fits(window, _TOP_SPECS["context_window"]):
                raise self.error(f"{key}.{name}", "an integer ≥ 1 (a context window)", window)
            out[name] = window
        return ModelWindows(out)

    def summarizer(self, value: object) -> SummarizerConfig:
        key = f"{SECTION}.summarizer"
        if isinstance(value, str):
            if value not in BACKENDS:
                raise self.error(key, "a mapping or one of extractive, openai", value)
            value = {"backend": value}
        data = self.section(value, key, _SUMMARIZER_KEYS)
        kwargs = {name: data[name] for name in _SUMMARIZER_KEYS if name in data}
        defaults = {f.name: f.default for f in dataclasses.fields(SummarizerConfig)}
        _check_summarizer({**defaults, **kwargs}, self.source, f"{key}.")
        for name in _SUMMARIZER_SPECS:
            if name in kwargs and _SUMMARIZER_SPECS[name][0] == "number":
                kwargs[name] = float(kwargs[name])
        return SummarizerConfig(**kwargs)

    def parse(self, data: object) -> CompactionConfig:
        if data is None:
            return CompactionConfig()
        if not isinstance(data, dict):
            raise ConfigError(
                f"{self.source}: the file must be a mapping with a {SECTION}: section, "
                f"got {_found(data)}"
            )
        section = self.section(data.get(SECTION), SECTION, _TOP_KEYS)
        kwargs: dict[str, Any] = {}
        for name, spec in _TOP_SPECS.items():
            if name in section:
                kwargs[name] = self.scalar(section, name, SECTION, spec)
        if "durability" in section:
            if section["durability"] not in DURABILITY:
                raise self.error(
                    f"{SECTION}.durability",
                    f"one of {', '.join(DURABILITY)}",
                    section["durability"],
                )
            kwargs["durability"] = section["durability"]
        if "redact_secrets" in section:
            if not isinstance(section["redact_secrets"], bool):
                raise self.error(
                    f"{SECTION}.redact_secrets", "true or false", section["redact_secrets"]
                )
            kwargs["redact_secrets"] = section["redact_secrets"]
        kwargs["models"] = self.models(section.get("models"))
        kwargs["summarizer"] = self.summarizer(section.get("summarizer"))
        boundary_key = f"{SECTION}.session_boundary"
        boundary = self.section(
            section.get("session_boundary"), boundary_key, ("idle_gap_minutes",)
        )
        if "idle_gap_minutes" in boundary:
            spec = _BOUNDARY_SPECS["idle_gap_minutes"]
            kwargs["idle_gap_minutes"] = self.scalar(
                boundary, "idle_gap_minutes", boundary_key, spec
            )
        return CompactionConfig(**kwargs)


def parse_config(data: object, source: str) -> tuple[CompactionConfig, list[str]]:
    """Validate what `yaml.safe_load` returned; `source` names the file in every message."""
    parser = _Parser(source)
    config = parser.parse(data)
    return config, parser.warnings


def _message_line(text: str) -> str:
    return " ".join(text.split())


def _read_regular_file(path: Path) -> bytes:
    """The file's bytes; a FIFO or a device (which would block or never end) is refused."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read()
    finally:
        os.close(fd)


def read_config_file(path: Path) -> tuple[CompactionConfig, list[str]]:
    """Parse one extraction.yaml with `yaml.safe_load` (no tags that construct objects)."""
    try:
        raw = _read_regular_file(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a config file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (bad byte at offset {exc.start})") from None
    try:
        data = strict_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = _message_line(str(exc.problem or exc.context or "malformed"))
        raise ConfigError(f"{path}: {where}not valid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {_message_line(str(exc))}") from None
    return parse_config(data, str(path))


def find_config_path(
    path: Path | str | None = None,
    memory_dir: Path | str | None = None,
    env: Mapping[str, str] | None = None,
) -> Path | None:
    """The file to read (a named one even when missing, so that reading it reports that).

    M/.. is taken from the resolved memory root, so it is the same folder before and after M
    is created.
    """
    if path is not None and str(path) != "":
        return Path(path)
    environ = os.environ if env is None else env
    named = environ.get(ENV_CONFIG)
    if named:
        return Path(named)
    if memory_dir is not None:
        beside = Path(memory_dir).resolve().parent / "config" / "memory" / "extraction.yaml"
        if beside.is_file():
            return beside
    return None


def load_config(
    path: Path | str | None = None,
    memory_dir: Path | str | None = None,
    env: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """--config PATH, else $SESSION_INSPECTOR_CONFIG, else M/../config/memory/extraction.yaml
    when it exists, else the built-in defaults."""
    found = find_config_path(path, memory_dir, env)
    if found is None:
        return LoadedConfig(DEFAULT_CONFIG, None, [])
    config, warnings = read_config_file(found)
    return LoadedConfig(config, found, warnings)
