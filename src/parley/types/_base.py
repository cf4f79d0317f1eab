"""The one pydantic base model of the wire types.

camelCase on the wire, snake_case in Python; aliases come from one generator. Fields
the schema names in a way Python cannot (``in``) set their alias explicitly.
"""

from __future__ import annotations

from typing import Any, Self, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

_M = TypeVar("_M", bound=BaseModel)
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
"""The setters of ``BaseModel``'s own slots, called past pydantic's ``__setattr__`` (as
``object.__setattr__`` would be, without its lookup by name and its argument tuple)."""


def made(cls: type[_M], fields: dict[str, Any], fields_set: set[str]) -> _M:
    """An instance of ``cls`` holding ``fields`` (every field, in the model's order) as
    validation would leave it, without validating: for values known to be of their
    fields' exact types."""
    model = _new(cls)
    _set_dict(model, fields)
    _set_fields_set(model, fields_set)
    _set_extra(model, None)  # extra="ignore": never any
    _set_private(model, None)  # no private attributes
    return model


_new = object.__new__


class A2AModel(BaseModel):
    """Base of every A2A wire object.

    Unknown fields are ignored on input, so a peer speaking a newer minor version still
    parses; ``to_wire()`` gives the JSON form with camelCase names and no ``None`` fields.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        serialize_by_alias=True,
        use_enum_values=False,
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict of this object as the protocol spells it."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def copied(self, **update: Any) -> Self:
        """A shallow copy with ``update`` set, unvalidated: ``model_copy(update=...)``
        without its generic steps (a third of its cost; the server copies a task or a
        message a few times per request)."""
        state = self.__dict__.copy()
        fields_set = self.__pydantic_fields_set__
        if update:
            state.update(update)
            fields_set = fields_set | update.keys()
        else:
            fields_set = set(fields_set)
        return made(type(self), state, fields_set)

    def to_json(self) -> bytes:
        """The wire JSON of this object, as bytes."""
        return self.__pydantic_serializer__.to_json(self, by_alias=True, exclude_none=True)
