"""A strict YAML loader for the files this program reads (index.yaml, extraction.yaml).

`yaml.safe_load` already refuses tags that construct objects, but it still expands aliases:
nine anchors of nine aliases each ("billion laughs") build a graph that costs gigabytes once
it is walked, and every command that reads the file hangs. This program never writes an
alias, so one in a file is refused as a YAML error. Duplicate mapping keys are refused too
(the last one silently winning hides a typo in a config file).
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode

_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StrictLoader(_BASE):  # type: ignore[misc]
    """libyaml's parser (when available) with the safe constructor, no aliases, no duplicate
    keys. Each node is constructed once, so a node seen a second time is an alias."""

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        if node in self.constructed_objects or node in self.recursive_objects:
            raise ConstructorError(
                None, None, "aliases (*name) are not allowed in this file", node.start_mark
            )
        return super().construct_object(node, deep)

    def construct_mapping(self, node: Node, deep: bool = False) -> Any:
        if isinstance(node, MappingNode):
            seen: set[tuple[str, str]] = set()
            for key_node, _value in node.value:
                if isinstance(key_node, ScalarNode):
                    key = (key_node.tag, key_node.value)
                    if key in seen:
                        raise ConstructorError(
                            "while reading a mapping",
                            node.start_mark,
                            f"duplicate key {key_node.value[:60]!r}",
                            key_node.start_mark,
                        )
                    seen.add(key)
        return super().construct_mapping(node, deep)


def strict_load(data: bytes | str) -> Any:
    """One YAML document through `StrictLoader`; yaml.YAMLError on anything refused."""
    return yaml.load(data, Loader=StrictLoader)


__all__ = ["StrictLoader", "strict_load"]
