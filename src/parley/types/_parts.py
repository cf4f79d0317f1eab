"""Parts: the pieces of content inside messages and artifacts (spec 6.5, 6.6)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, SerializeAsAny

from parley.types._base import A2AModel


class FileWithBytes(A2AModel):
    """A file whose content travels inline, base64-encoded."""

    bytes: str
    """Base64-encoded file content."""
    mime_type: str | None = None
    name: str | None = None


class FileWithUri(A2AModel):
    """A file the receiver fetches from a URI."""

    uri: str
    mime_type: str | None = None
    name: str | None = None


class TextPart(A2AModel):
    kind: Literal["text"] = "text"
    text: str
    metadata: dict[str, Any] | None = None


class FilePart(A2AModel):
    kind: Literal["file"] = "file"
    file: FileWithBytes | FileWithUri
    metadata: dict[str, Any] | None = None


class DataPart(A2AModel):
    kind: Literal["data"] = "data"
    data: dict[str, Any]
    metadata: dict[str, Any] | None = None


Part = Annotated[TextPart | FilePart | DataPart, Field(discriminator="kind"), SerializeAsAny()]
"""Any part, told apart by its ``kind``. Written by its own model's serializer
(``SerializeAsAny``): the same JSON as the union's, without the union's search for the
member a part belongs to (a quarter of a streamed chunk's ``to_json``)."""
