"""The settings of an app, in two groups: how the app serves (``Serving``: the app's
own), and what the request handler built for an agent is given (``TaskOptions``: the
handler's own, ``RequestHandler``'s keywords).

``A2AApp(handler, **serving)`` takes the first group; ``create_app(agent, card,
**options)`` takes both and builds the handler from the second. The keyword types are
``ServingOptions`` and ``AppOptions``, so a type checker knows each keyword.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, TypedDict

from parley.server.agent._context import CallContext
from parley.server.auth._auth import SchemeVerifier
from parley.server.auth._keys import SigningKeys
from parley.server.bindings._grpc_options import GRPCOptions
from parley.server.bindings._http import DEFAULT_MAX_BODY_SIZE
from parley.server.push._configs import PushSettings
from parley.server.tasks._bus import Bus
from parley.server.tasks._retention import Retention
from parley.stores import Store
from parley.types import AgentCard

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

ExtendedCard = AgentCard | Callable[[CallContext], Awaitable[AgentCard]]


DEFAULT_CARD_MAX_AGE = 300
"""How long caches may keep the card, in seconds: a changed card reaches every client
within five minutes, and a client that asks again sooner gets a 304 for its ETag."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Serving:
    """How the app serves its handler: the bindings and where, limits, who may call."""

    rest: bool | None = None
    """Serve HTTP+JSON (``/v1/...`` under ``rest_path``) unless false."""
    rest_path: str | None = None
    """Where HTTP+JSON is served: the card's url path when it prefers HTTP+JSON, else
    the root."""
    grpc: GRPCOptions | None = None
    """Run the gRPC server beside the app, on the same event loop."""
    max_body_size: int = DEFAULT_MAX_BODY_SIZE
    """The largest request body any binding reads."""
    forwarded_allow_ips: str | Sequence[str] | None = None
    """The proxies whose ``X-Forwarded-Proto``/``-Host`` are believed."""
    tune_gc: bool = True
    """Tune the collector for serving once startup is done (``tune_gc``)."""
    security: Mapping[str, SchemeVerifier] | None = None
    """The verifier of each scheme the card's ``security`` names."""
    sign_card: bool | None = None
    """Sign the served card with the current signing key; by default, when the
    operator gave the signing keys."""
    card_max_age: int = DEFAULT_CARD_MAX_AGE
    """How long caches may keep the card (``Cache-Control: max-age``), in seconds."""


class ServingOptions(TypedDict, total=False):
    """The keywords of ``Serving``, as ``A2AApp`` and ``create_app`` take them."""

    rest: bool | None
    rest_path: str | None
    grpc: GRPCOptions | None
    max_body_size: int
    forwarded_allow_ips: str | Sequence[str] | None
    tune_gc: bool
    security: Mapping[str, SchemeVerifier] | None
    sign_card: bool | None
    card_max_age: int


class TaskOptions(TypedDict, total=False):
    """The keywords ``create_app`` gives the ``RequestHandler`` it builds for an agent
    (see ``RequestHandler``)."""

    task_store: Store | None
    extended_card: ExtendedCard | None
    retention: Retention | None
    push: PushSettings | None
    signing_keys: SigningKeys | None
    bus: Bus | None
    lease_ttl: float
    tracer_provider: TracerProvider | None
    meter_provider: MeterProvider | None


class AppOptions(ServingOptions, TaskOptions, total=False):
    """Every keyword of ``create_app``: how the app serves, and what its handler is given."""


SERVING_NAMES = frozenset(field.name for field in fields(Serving))
TASK_NAMES = frozenset(TaskOptions.__optional_keys__)


def serving(options: ServingOptions) -> Serving:
    """The ``Serving`` the keywords say; a keyword of the handler's is a ``TypeError``
    that says where it belongs."""
    theirs = sorted(set(options) - SERVING_NAMES)
    if theirs:
        whose = "the RequestHandler's own" if TASK_NAMES.issuperset(theirs) else "unknown"
        raise TypeError(
            f"A2AApp(handler) takes how the app serves only: {', '.join(theirs)} "
            f"{'is' if len(theirs) == 1 else 'are'} {whose}; set the handler's on the "
            "RequestHandler, or build the app with create_app(agent, card, ...)"
        )
    return Serving(**options)


def split(options: AppOptions) -> tuple[TaskOptions, ServingOptions]:
    """``create_app``'s keywords: those of the handler, and those of the app."""
    given: Mapping[str, object] = options
    task = {name: value for name, value in given.items() if name in TASK_NAMES}
    served = {name: value for name, value in given.items() if name not in TASK_NAMES}
    return TaskOptions(**task), ServingOptions(**served)  # type: ignore[typeddict-item]
