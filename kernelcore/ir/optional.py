"""loopy's ``Optional``: a value that may be absent (an instruction's
*temp_var_type*: no temporary declared, or one of a given or inferred type).

Public names: Optional.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytools.persistent_dict import KeyBuilder

_UNSET = object()


class Optional:
    """A value that may be absent: ``Optional()`` holds none, ``Optional(x)``
    holds *x* (also ``None``)."""

    def __init__(self, value: Any = _UNSET):
        self._value = value

    @property
    def has_value(self) -> bool:
        return self._value is not _UNSET

    @property
    def value(self) -> Any:
        if self._value is _UNSET:
            raise AttributeError("this Optional holds no value")
        return self._value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Optional) and (self.has_value, self._value if
                                                self.has_value else None) == (
            other.has_value, other._value if other.has_value else None)

    def __hash__(self) -> int:
        return hash((self.has_value, self._value if self.has_value else None))

    def __repr__(self) -> str:
        return f"Optional({self._value!r})" if self.has_value else "Optional()"

    def __getstate__(self) -> dict:
        return {"has_value": self.has_value, "value": self._value if self.has_value
                else None}

    def __setstate__(self, state: dict) -> None:
        self._value = state["value"] if state["has_value"] else _UNSET

    def update_persistent_hash(self, key_hash: Any, key_builder: KeyBuilder) -> None:
        key_builder.rec(key_hash, self.has_value)
        if self.has_value:
            key_builder.rec(key_hash, self._value)
