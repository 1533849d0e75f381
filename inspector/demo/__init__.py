"""The scripted demo agent: `session-inspector demo` plays it into a fresh memory root."""

from inspector.demo.agent import DemoAgent, DemoPlayer, DemoStats, DemoStep, scenario_names
from inspector.demo.scenarios import (
    DEFAULT_SCENARIO,
    SCENARIOS,
    config_yaml,
    demo_config,
    write_demo_config,
)

__all__ = [
    "DEFAULT_SCENARIO",
    "SCENARIOS",
    "DemoAgent",
    "DemoPlayer",
    "DemoStats",
    "DemoStep",
    "config_yaml",
    "demo_config",
    "scenario_names",
    "write_demo_config",
]
