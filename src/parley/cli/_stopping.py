"""How ``parley serve`` stops on Ctrl-C (or SIGTERM): gracefully first, at once on the
second press, with a line saying which, and never a traceback.

The first signal stops uvicorn from accepting, closes idle connections, and lets the
requests still running (streams among them) end on their own for ``grace`` seconds;
then their connections are closed, which each answer meets as its client leaving, so
it ends the way a disconnect ends it. The second signal closes them at once. uvicorn's
own handling would wait for open streams without a bound, and on the second press
cancel the answers mid-write (a traceback each) and raise ``KeyboardInterrupt``
through the event loop once serving returns; the signals are taken here instead.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from types import FrameType
from typing import Any

import uvicorn

DEFAULT_GRACE = 10.0
"""Seconds running requests and streams get to end after the first Ctrl-C."""


class StoppingServer(uvicorn.Server):
    """A uvicorn server that stops as the module docstring says; ``say`` prints a line
    for the person at the terminal."""

    def __init__(self, config: uvicorn.Config, grace: float, say: Callable[[str], None]) -> None:
        super().__init__(config)
        self.grace = grace
        self.say = say
        self._cut_later: asyncio.TimerHandle | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # Not recorded for uvicorn to raise again once serving returns: the stop is done
        # here, and the agent's own shutdown follows in the caller.
        if self.should_exit:
            self.force_exit = True
            self.say("stopping now: open connections closed")
            self.cut()
            return
        self.should_exit = True
        if sig == signal.SIGINT:
            self.say(
                f"stopping: no new connections; running requests and streams have "
                f"{self.grace:g} s to end (Ctrl-C again to stop now)"
            )

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        self._cut_later = asyncio.get_running_loop().call_later(self.grace, self.cut)
        try:
            await super().shutdown(sockets)
        finally:
            self._cut_later.cancel()

    def cut(self) -> None:
        """Close every open connection (a running answer sees its client leave)."""
        for connection in list(self.server_state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None and not transport.is_closing():
                transport.close()
