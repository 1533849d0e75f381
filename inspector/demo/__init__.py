"""The scripted demo agent: `session-inspector demo` plays it into a fresh memory root."""

from inspector.demo.agent import DemoAgent, DemoStats, DemoStep
from inspector.demo.config import config_yaml, demo_config, write_demo_config
from inspector.demo.player import DemoPlayer, scenario_names
from inspector.demo.scenarios import DEFAULT_SCENARIO, SCENARIOS

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
