"""What agent authors write against: ``AgentExecutor``, ``EventSink`` and ``TaskUpdater``
(``_agent``), the short way with ``@agent`` (``_simple``), what an agent knows about a
call (``_context``), and the ids and timestamps an agent's events carry (``_ids``).

The names are public from ``parley.server``; this room imports no other room."""
