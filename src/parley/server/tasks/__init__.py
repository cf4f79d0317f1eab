"""The task engine: the request handler (every operation, transport-agnostic), sending,
cancel, idempotency, live tasks and their runs, the event log, recovery, retention,
listing, task ownership across processes, and the bus between processes."""
