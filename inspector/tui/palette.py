"""Command palette provider: every inspector action, gated exactly like the footer.

Read-only mode and archived sessions hide the actions that write; demo actions only show when a
demo is attached. Titles and help are fixed strings (no untrusted text reaches the palette).
"""

from __future__ import annotations

from functools import partial
from typing import Protocol, runtime_checkable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from inspector.tui.actions import ActionSpec


@runtime_checkable
class ActionSource(Protocol):
    """What the palette needs of the app (InspectorApp is one): the actions allowed now.
    A protocol, so this module does not import the app that imports it."""

    def available_actions(self) -> list[ActionSpec]: ...


class InspectorCommands(Provider):
    """Lists `inspector.tui.actions.ACTIONS` that `InspectorApp.check_action` allows right now."""

    def _specs(self) -> list[ActionSpec]:
        app = self.app
        return app.available_actions() if isinstance(app, ActionSource) else []

    def _run(self, action: str) -> None:
        self.app.call_later(self.app.run_action, action)

    async def discover(self) -> Hits:
        for spec in self._specs():
            yield DiscoveryHit(
                f"{spec.title} ({spec.key})", partial(self._run, spec.action), help=spec.help
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for spec in self._specs():
            title = f"{spec.title} ({spec.key})"
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(title), partial(self._run, spec.action), help=spec.help
                )
