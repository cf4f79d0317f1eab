"""Every failure of a call as the A2A error it answers with: the one translation of
foreign exceptions that all three bindings use."""

from __future__ import annotations

import logging

from pydantic import ValidationError

from parley.protocol import A2AError, ConversionError, InternalError, InvalidParamsError
from parley.protocol._errors import shorten

logger = logging.getLogger("parley.server")


def as_a2a_error(error: Exception) -> A2AError:
    """``error`` as an A2A error: itself when it is one; a request that does not fit its
    model (pydantic, or a protobuf message parley cannot map) as ``InvalidParamsError``;
    anything else as ``InternalError``, its text kept for the server log only."""
    if isinstance(error, A2AError):
        return error
    if isinstance(error, ValidationError):
        return InvalidParamsError.from_validation("this request", error)
    if isinstance(error, ConversionError):
        return InvalidParamsError(f"Invalid request: {shorten(str(error), 200)}")
    logger.exception("unexpected error while handling a request", exc_info=error)
    return InternalError("The server met an unexpected error; it has been logged")
