"""The error of an agent card that does not describe what the server serves."""


class CardError(ValueError):
    """The agent card does not describe what the server serves; the message names the field."""
