"""The web console served by ``semps serve`` under ``/console/`` (see :mod:`.router`)."""

from semps.api.console.router import console_router

__all__ = ["console_router"]
