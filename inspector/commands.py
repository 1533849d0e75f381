"""Command palette provider: every inspector action, gated exactly like the footer.

Read-only mode and archived sessions hide the actions that write; demo actions only show when a
demo is attached. Titles and help are fixed strings (no untrusted text reaches the palette).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from inspector.app import ActionSpec, InspectorApp


class InspectorCommands(Provider):
    """Lists `inspector.app.ACTIONS` that `InspectorApp.check_action` allows right now."""

    def _specs(self) -> list[ActionSpec]:
        app = self.app
        if not hasattr(app, "available_actions"):
            return []
        inspector: InspectorApp = app  # type: ignore[assignment]
        return inspector.available_actions()

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
