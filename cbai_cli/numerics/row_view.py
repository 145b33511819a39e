"""A Python object whose arrays are views on one row of a stacked run state."""

from __future__ import annotations

from typing import Any, ClassVar


class RowView:
    """Arrays that are views on the row ``run`` = (state, row) of a stacked state: ``_bind``
    makes the views (the subclass names them in ``_VIEWS``), :meth:`attach` moves them to
    another row (a batch lays its runs over its own stack), and a pickle or copy leaves the
    views out and makes them again on its own state, since a copied view would no longer be
    the state's."""

    _VIEWS: ClassVar[tuple[str, ...]] = ()
    run: tuple[Any, int]

    def _bind(self) -> None:
        raise NotImplementedError

    def attach(self, run: tuple[Any, int]) -> None:
        """Be the view of the row ``run`` = (state, row)."""
        self.run = run
        self._bind()

    def __getstate__(self) -> dict:
        return {name: value for name, value in self.__dict__.items() if name not in self._VIEWS}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind()
