"""Attribute reads on parley's models at the price of a plain object's, and enum values
read in C (``read_models_plainly``).

pydantic's ``BaseModel`` defines ``__getattr__`` (for private attributes and extra
fields). A class with a ``__getattr__`` anywhere in its MRO gets CPython's
``slot_tp_getattr_hook`` as its attribute lookup, and the interpreter does not
specialise attribute reads on such a class: every ``task.status`` takes the generic
path, many times slower than a specialised read, and a send reads model attributes some
hundreds of times. parley's models need none of it: they have no private attributes
and ignore extra fields, so the hook only ever runs for an attribute that does not
exist, and raises the same ``AttributeError`` object's lookup raises.

So a model class without private attributes and without ``extra="allow"``, whose
``__getattr__`` is pydantic's own, gets object's lookup (``PyObject_GenericGetAttr``)
back in its type slot, once, when the class is made. This is CPython's type layout,
found at import by looking for that function in a plain class's type object rather
than assumed; on another interpreter, or if it is not found, nothing changes (pydantic's
lookup stays, only slower). Assigning ``__getattr__`` on the class or a base later makes
CPython recompute the slot, which brings the hook back, correctly.
"""

from __future__ import annotations

import ctypes
import sys
from operator import attrgetter
from typing import Any

from pydantic import BaseModel

from parley._speedups import _switch
from parley.types import A2AModel, Role, TaskState

_WORD = ctypes.sizeof(ctypes.c_void_p)


def _slot() -> tuple[int, int] | None:
    """The offset of ``tp_getattro`` in a type object, and object's lookup function."""
    if sys.implementation.name != "cpython":
        return None
    generic = ctypes.cast(ctypes.pythonapi.PyObject_GenericGetAttr, ctypes.c_void_p).value
    plain = type("_Plain", (), {})
    size: int = vars(type)["__basicsize__"].__get__(type)  # a type object's size
    found = [
        offset
        for offset in range(0, size, _WORD)
        if ctypes.c_void_p.from_address(id(plain) + offset).value == generic
    ]
    if generic is None or len(found) != 1:
        return None
    return found[0], generic


_SLOT = _slot()

_type_modified = (
    ctypes.PYFUNCTYPE(None, ctypes.py_object)(("PyType_Modified", ctypes.pythonapi))
    if _SLOT is not None
    else None
)
"""CPython's ``PyType_Modified``: a type's cached lookups are stale."""


def plain_getattr(cls: type[BaseModel]) -> bool:
    """Give ``cls`` object's attribute lookup when pydantic's ``__getattr__`` has nothing
    to do for it (see the module docs); whether it did."""
    if (
        _SLOT is None
        or cls.__private_attributes__
        or cls.model_config.get("extra") == "allow"
        or _hook(cls) is not _hook(BaseModel)
        or cls.__getattribute__ is not object.__getattribute__
    ):
        return False
    offset, generic = _SLOT
    ctypes.c_void_p.from_address(id(cls) + offset).value = generic
    if _type_modified is not None:  # no lookup cached for the old slot outlives it
        _type_modified(cls)
    return True


def _hook(cls: type) -> Any:
    return cls.__getattr__  # type: ignore[attr-defined]


def read_models_plainly() -> None:
    """Give every wire model class made so far object's attribute lookup where pydantic's
    ``__getattr__`` has nothing to do (``plain_getattr``), and the wire enums a ``value``
    read in C: ``Enum``'s own is a descriptor written in Python (two Python calls a
    read), and pydantic-core reads it for each enum it writes to JSON (a task's state, a
    message's role). A model class made later gets the same when it is made. Nothing
    with ``PARLEY_SPEEDUPS=0``."""
    if not _switch.on or "__pydantic_init_subclass__" in A2AModel.__dict__:
        return
    pending: list[type[BaseModel]] = [A2AModel]
    while pending:
        cls = pending.pop()
        pending += cls.__subclasses__()
        plain_getattr(cls)
    type.__setattr__(A2AModel, "__pydantic_init_subclass__", classmethod(_made))
    for enum in (TaskState, Role):
        type.__setattr__(enum, "value", property(attrgetter("_value_")))


def _made(cls: type[Any], /, **kwargs: Any) -> None:
    """``A2AModel.__pydantic_init_subclass__``: a model class made later reads as plainly."""
    BaseModel.__pydantic_init_subclass__.__func__(cls, **kwargs)  # type: ignore[attr-defined]
    plain_getattr(cls)
