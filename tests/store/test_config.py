"""extraction.yaml (contract §4): defaults, validation messages, resolution order, safety."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from core.config import (
    DEFAULT_CONFIG,
    ENV_CONFIG,
    CompactionConfig,
    SummarizerConfig,
    load_config,
    parse_config,
)
from core.errors import BadInputError, ConfigError

SRC = "/x/extraction.yaml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_the_contracts() -> None:
    c = DEFAULT_CONFIG
    assert (
        c.context_window,
        c.reserve_tokens,
        c.compress_at_percent,
        c.count_compress_after_events,
        c.keep_recent_tokens,
        c.hot_window_events,
        c.summary_max_chunks,
        c.max_rolling_summary_lines,
        c.lock_timeout_seconds,
        dict(c.models),
        c.idle_gap_minutes,
    ) == (128000, 16384, 80, 120, 20000, 40, 8, 100, 10, {}, 0)
    assert c.summarizer == SummarizerConfig()
    assert c.summarizer.backend == "extractive"
    assert c.summarizer.timeout_seconds == 60.0
    assert c.summarizer.max_summary_tokens == 1024
    assert CompactionConfig() == DEFAULT_CONFIG


@pytest.mark.parametrize("data", [None, {}, {"session_compaction": None}, {"other": {"x": 1}}])
def test_missing_section_gives_defaults(data: object) -> None:
    assert parse_config(data, SRC) == (DEFAULT_CONFIG, [])


def test_every_key_with_a_good_value() -> None:
    data = {
        "memory_plane": {"whatever": True},
        "session_compaction": {
            "context_window": 32000,
            "reserve_tokens": 0,
            "compress_at_percent": 100,
            "count_compress_after_events": 1,
            "keep_recent_tokens": 1,
            "hot_window_events": 1,
            "summary_max_chunks": 1,
            "max_rolling_summary_lines": 2,
            "lock_timeout_seconds": 0.5,
            "models": {"gpt-4o": 128000, "local-qwen": 8192},
            "summarizer": {
                "backend": "openai",
                "base_url": "http://127.0.0.1:8080/v1",
                "model": "qwen2.5",
                "api_key_env": "LLM_KEY",
                "timeout_seconds": 5,
                "max_summary_tokens": 256,
            },
            "session_boundary": {"idle_gap_minutes": 30},
        },
    }
    config, warnings = parse_config(data, SRC)
    assert warnings == []
    assert config.context_window == 32000
    assert config.reserve_tokens == 0
    assert config.compress_at_percent == 100.0
    assert isinstance(config.compress_at_percent, float)
    assert config.count_compress_after_events == 1
    assert config.keep_recent_tokens == 1
    assert config.hot_window_events == 1
    assert config.summary_max_chunks == 1
    assert config.max_rolling_summary_lines == 2
    assert config.lock_timeout_seconds == 0.5
    assert dict(config.models) == {"gpt-4o": 128000, "local-qwen": 8192}
    assert config.summarizer == SummarizerConfig(
        backend="openai",
        base_url="http://127.0.0.1:8080/v1",
        model="qwen2.5",
        api_key_env="LLM_KEY",
        timeout_seconds=5.0,
        max_summary_tokens=256,
    )
    assert config.idle_gap_minutes == 30.0


BAD_VALUES: list[tuple[str, Any]] = [
    # (dotted key under session_compaction, bad value): a wrong type, then a wrong range
    ("context_window", "abc"),
    ("context_window", 1.5),
    ("context_window", True),
    ("context_window", None),
    ("context_window", 0),
    ("context_window", -5),
    ("reserve_tokens", "16k"),
    ("reserve_tokens", [1]),
    ("reserve_tokens", -1),
    ("compress_at_percent", "80%"),
    ("compress_at_percent", False),
    ("compress_at_percent", 0),
    ("compress_at_percent", 100.5),
    ("compress_at_percent", float("nan")),
    ("count_compress_after_events", 2.0),
    ("count_compress_after_events", 0),
    ("keep_recent_tokens", {"a": 1}),
    ("keep_recent_tokens", 0),
    ("hot_window_events", "40"),
    ("hot_window_events", 0),
    ("summary_max_chunks", None),
    ("summary_max_chunks", 0),
    ("max_rolling_summary_lines", 10.0),
    ("max_rolling_summary_lines", 1),
    ("lock_timeout_seconds", "10s"),
    ("lock_timeout_seconds", 0),
    ("lock_timeout_seconds", float("inf")),
    ("models", ["gpt-4o"]),
    ("models", "gpt-4o"),
    ("models.gpt-4o", "big"),
    ("models.gpt-4o", 0),
    ("models.gpt-4o", True),
    ("summarizer", 5),
    ("summarizer", "gpt"),
    ("summarizer.backend", "anthropic"),
    ("summarizer.backend", 1),
    ("summarizer.base_url", 8080),
    ("summarizer.model", ["m"]),
    ("summarizer.api_key_env", 1),
    ("summarizer.timeout_seconds", "60"),
    ("summarizer.timeout_seconds", 0),
    ("summarizer.max_summary_tokens", 1.5),
    ("summarizer.max_summary_tokens", 0),
    ("session_boundary", 30),
    ("session_boundary.idle_gap_minutes", "30m"),
    ("session_boundary.idle_gap_minutes", -1),
]


def nest(dotted: str, value: Any) -> dict[str, Any]:
    section: dict[str, Any] = {}
    node = section
    parts = dotted.split(".")
    for part in parts[:-1]:
        node[part] = {}
        node = node[part]
    node[parts[-1]] = value
    return {"session_compaction": section}


@pytest.mark.parametrize(("key", "value"), BAD_VALUES, ids=[f"{k}={v!r}" for k, v in BAD_VALUES])
def test_wrong_type_or_range_names_file_and_key(key: str, value: Any) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(nest(key, value), SRC)
    message = str(info.value)
    assert message.startswith(SRC + ": ")
    assert f"session_compaction.{key}" in message
    assert "must be" in message
    assert "\n" not in message


def test_message_says_what_was_expected_and_found() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"session_compaction": {"context_window": "abc"}}, SRC)
    assert str(info.value) == (
        f"{SRC}: session_compaction.context_window must be an integer ≥ 1, got 'abc'"
    )
    with pytest.raises(ConfigError) as info:
        parse_config({"session_compaction": {"compress_at_percent": 120}}, SRC)
    assert "> 0 and ≤ 100" in str(info.value)
    assert "got 120" in str(info.value)


def test_config_error_is_bad_input_exit_2() -> None:
    assert issubclass(ConfigError, BadInputError)
    assert ConfigError("x").exit_code == 2


@pytest.mark.parametrize("missing", ["base_url", "model"])
def test_openai_backend_needs_base_url_and_model(missing: str) -> None:
    summarizer = {"backend": "openai", "base_url": "http://localhost:1/v1", "model": "m"}
    del summarizer[missing]
    with pytest.raises(ConfigError, match=rf"{SRC}: session_compaction\.summarizer\.{missing}"):
        parse_config({"session_compaction": {"summarizer": summarizer}}, SRC)


def test_openai_base_url_must_be_http() -> None:
    data = {"summarizer": {"backend": "openai", "base_url": "localhost:8080", "model": "m"}}
    with pytest.raises(ConfigError, match="http"):
        parse_config({"session_compaction": data}, SRC)


def test_summarizer_may_be_just_the_backend_name() -> None:
    config, _ = parse_config({"session_compaction": {"summarizer": "extractive"}}, SRC)
    assert config.summarizer == SummarizerConfig()


@pytest.mark.parametrize(
    ("section", "shown"),
    [
        ({"contxt_window": 5}, "session_compaction.contxt_window"),
        ({"summarizer": {"backend": "extractive", "temperature": 0.2}}, "summarizer.temperature"),
        ({"session_boundary": {"idle_gap": 5}}, "session_boundary.idle_gap"),
    ],
)
def test_unknown_key_is_a_warning_not_an_error(section: dict[str, Any], shown: str) -> None:
    config, warnings = parse_config({"session_compaction": section}, SRC)
    assert config == DEFAULT_CONFIG
    assert len(warnings) == 1
    assert warnings[0].startswith(SRC + ": ")
    assert shown in warnings[0]


def test_unknown_key_warning_suggests_the_close_one() -> None:
    _, warnings = parse_config({"session_compaction": {"contxt_window": 5}}, SRC)
    assert "context_window" in warnings[0]


@pytest.mark.parametrize("data", [[1, 2], "text", 42])
def test_top_level_not_a_mapping_is_an_error(data: object) -> None:
    with pytest.raises(ConfigError, match=SRC):
        parse_config(data, SRC)


def test_section_not_a_mapping_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"session_compaction must be a mapping"):
        parse_config({"session_compaction": [1]}, SRC)


def test_model_names_must_be_strings() -> None:
    with pytest.raises(ConfigError, match=r"session_compaction\.models keys .* got 4"):
        parse_config({"session_compaction": {"models": {4: 8000}}}, SRC)


def test_models_map_and_window_for() -> None:
    config, _ = parse_config(
        {"session_compaction": {"context_window": 50000, "models": {"small": 8000}}}, SRC
    )
    assert config.window_for("small") == 8000
    assert config.window_for("unknown-model") == 50000
    assert config.window_for(None) == 50000


def test_effective_reserve_is_clamped_to_half_the_window() -> None:
    config = CompactionConfig(reserve_tokens=16384)
    assert config.effective_reserve(128000) == 16384
    assert config.effective_reserve(20000) == 10000
    assert config.effective_reserve(32768) == 16384


def test_config_is_immutable_and_hashable() -> None:
    config = CompactionConfig(models={"a": 10})
    with pytest.raises(AttributeError):
        config.context_window = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.models["b"] = 3  # type: ignore[index]
    assert hash(config) == hash(CompactionConfig(models={"a": 10}))


def test_replace_changes_values_and_validates_them() -> None:
    changed = DEFAULT_CONFIG.replace(context_window=64000, compress_at_percent=50.0)
    assert changed.context_window == 64000
    assert changed.compress_at_percent == 50.0
    assert DEFAULT_CONFIG.context_window == 128000
    with pytest.raises(ConfigError, match="context_window"):
        DEFAULT_CONFIG.replace(context_window=0)


# -- files ------------------------------------------------------------------------------------


def test_load_reads_an_explicit_file(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "session_compaction:\n  context_window: 64000\n")
    loaded = load_config(path, env={})
    assert loaded.config.context_window == 64000
    assert loaded.source == path
    assert list(loaded.warnings) == []


def test_load_reports_the_file_path_in_errors_and_warnings(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "session_compaction:\n  hot_window: 3\n")
    assert str(path) in load_config(path, env={}).warnings[0]
    bad = write(tmp_path / "bad.yaml", "session_compaction:\n  hot_window_events: many\n")
    with pytest.raises(
        ConfigError, match=rf"^{re.escape(str(bad))}: session_compaction\.hot_window_events"
    ):
        load_config(bad, env={})


def test_python_object_tag_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = write(
        tmp_path / "evil.yaml",
        "session_compaction:\n"
        f'  context_window: !!python/object/apply:os.system ["touch {marker}"]\n',
    )
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert str(path) in str(info.value)
    assert "line 2" in str(info.value)
    assert not marker.exists()


def test_not_yaml_is_an_error_with_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "session_compaction:\n  context_window: [1, 2\n  x: {\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    message = str(info.value)
    assert message.startswith(f"{path}: line ")
    assert "not valid YAML" in message
    assert "\n" not in message


def test_not_utf8_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"session_compaction:\n  context_window: \xff\xfe\n")
    with pytest.raises(ConfigError, match=rf"{re.escape(str(path))}: not UTF-8"):
        load_config(path, env={})


def test_a_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=re.escape(str(tmp_path))):
        load_config(tmp_path, env={})


def test_top_level_list_file_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "- session_compaction\n")
    with pytest.raises(ConfigError, match=re.escape(str(path))):
        load_config(path, env={})


@pytest.mark.parametrize("text", ["", "\n", "# only a comment\n"])
def test_empty_file_gives_defaults(tmp_path: Path, text: str) -> None:
    path = write(tmp_path / "c.yaml", text)
    loaded = load_config(path, env={})
    assert loaded.config == DEFAULT_CONFIG
    assert loaded.source == path


def test_explicit_missing_file_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(missing))}: no such file$"):
        load_config(missing, env={})


def test_env_named_missing_file_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match="no such file"):
        load_config(env={ENV_CONFIG: str(missing)})


def beside_memory(root: Path, window: int) -> tuple[Path, Path]:
    """A memory root M and M/../config/memory/extraction.yaml."""
    memory = root / "memory"
    config = write(
        root / "config" / "memory" / "extraction.yaml",
        f"session_compaction:\n  context_window: {window}\n",
    )
    return memory, config


def test_resolution_order(tmp_path: Path) -> None:
    memory, beside = beside_memory(tmp_path, 1000)
    memory.mkdir()
    from_env = write(tmp_path / "env.yaml", "session_compaction:\n  context_window: 2000\n")
    explicit = write(tmp_path / "cli.yaml", "session_compaction:\n  context_window: 3000\n")
    env = {ENV_CONFIG: str(from_env)}

    loaded = load_config(explicit, memory_dir=memory, env=env)
    assert (loaded.config.context_window, loaded.source) == (3000, explicit)
    loaded = load_config(None, memory_dir=memory, env=env)
    assert (loaded.config.context_window, loaded.source) == (2000, from_env)
    loaded = load_config(None, memory_dir=memory, env={})
    assert loaded.config.context_window == 1000
    assert loaded.source is not None and loaded.source.samefile(beside)
    loaded = load_config(None, memory_dir=tmp_path / "elsewhere" / "memory", env={})
    assert (loaded.config, loaded.source) == (DEFAULT_CONFIG, None)
    assert load_config(None, memory_dir=None, env={}).source is None


def test_memory_relative_config_is_found_before_the_memory_root_exists(tmp_path: Path) -> None:
    memory, _ = beside_memory(tmp_path, 1234)
    assert not memory.exists()
    assert load_config(memory_dir=memory, env={}).config.context_window == 1234


def test_memory_relative_config_with_a_relative_memory_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    beside_memory(tmp_path, 4321)
    monkeypatch.chdir(tmp_path)
    assert load_config(memory_dir="memory", env={}).config.context_window == 4321
    (tmp_path / "memory").mkdir()
    monkeypatch.chdir(tmp_path / "memory")
    assert load_config(memory_dir=".", env={}).config.context_window == 4321


def test_empty_env_var_is_ignored(tmp_path: Path) -> None:
    assert load_config(env={ENV_CONFIG: ""}).source is None


def test_env_defaults_to_the_process_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "c.yaml", "session_compaction:\n  hot_window_events: 7\n")
    monkeypatch.setenv(ENV_CONFIG, str(path))
    assert load_config().config.hot_window_events == 7
