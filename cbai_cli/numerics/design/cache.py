"""The designs one configuration's runs have solved (:class:`DesignCache`), so that the seeds of
one request solve each distinct design problem once."""

from __future__ import annotations

import threading
import numpy as np

from cbai_cli.numerics.design.solver import Design, optimal_design, unsolvable_at_scale


class DesignCache:
    """The designs one configuration's runs have solved, by exact target set, so that the
    seeds of one request solve each distinct design problem once.

    ACOL's rounds on one instance face few distinct uncertain sets (irrelevant-dims,
    d = 10, R = 1: 80 solves for 20 seeds, 2 distinct target sets) and G-Allocation solves
    the same G-optimal design in every run. :func:`optimal_design` without a time limit is
    deterministic (nothing reads the clock), so a design returned from here is the design
    the call would have computed, bit for bit, and records do not change.

    An entry is keyed by the exact (K,) target mask and the tolerance, for the arms the
    cache holds (the array itself when it is read-only, as an instance's arms are, else a
    copy); a call with other arms empties the cache and keeps the new arms, so no design
    can be returned for another arm set or another target set. It also keeps the arms in
    the coordinates of their D-optimal design (:meth:`d_optimal_arms`, the ``ols`` runs' default).
    Entries are evicted oldest-used first beyond :attr:`max_bytes` of weights. Not
    pickled with its entries (a copy starts empty). Safe to share between threads (a lock
    guards the entries, not the solves): a race computes a design twice, with the same
    result.
    """

    #: Total size of the cached weight vectors (8 bytes per arm per design), at most.
    max_bytes = 1 << 25

    def __init__(self) -> None:
        self._arms: np.ndarray | None = None
        self._designs: dict[tuple[bytes, float], Design] = {}
        self._d_optimal: np.ndarray | None = None  # d_optimal_arms of the arms held
        self._lock = threading.Lock()  # guards the bookkeeping, never a solve

    def __reduce__(self):
        return DesignCache, ()

    def __len__(self) -> int:
        return len(self._designs)

    def _holds(self, arms: np.ndarray) -> bool:
        """Whether the cached designs are for ``arms``: the same read-only array, or equal values."""
        held = self._arms
        if held is None:
            return False
        if held is arms and not arms.flags.writeable:
            return True
        return held.shape == arms.shape and np.array_equal(held, arms)

    def _hold(self, arms: np.ndarray) -> np.ndarray:
        """The arm set the cache holds, moved to ``arms`` (and emptied) unless it holds them
        already; called with the lock held."""
        if not self._holds(arms):
            self._designs.clear()
            self._d_optimal = None
            # A read-only array (an instance's arms) cannot change under the cache: hold it
            # itself, so a large arm matrix is neither copied nor compared on every call.
            self._arms = arms if not arms.flags.writeable else arms.copy()
        return self._arms

    def d_optimal_arms(self, arms: np.ndarray) -> np.ndarray:
        """(K, d) :func:`~cbai_cli.numerics.design.d_optimal.d_optimal_arms` of ``arms``,
        computed once per arm set (read-only)."""
        arms = np.asarray(arms, dtype=float)
        with self._lock:
            held, found = self._hold(arms), self._d_optimal
        if found is None:
            from cbai_cli.numerics.design.d_optimal import d_optimal_arms

            found = d_optimal_arms(arms)
            found.flags.writeable = False
            with self._lock:
                if self._arms is held:  # no other thread has moved the cache to other arms meanwhile
                    self._d_optimal = found
        return found

    def design(self, arms: np.ndarray, mask: np.ndarray, tol: float) -> Design:
        """``optimal_design(arms, arms[mask], tol=tol)``, solved once per (arms, mask, tol).

        Args:
            arms: (K, d) design arms.
            mask: (K,) bool, the targets among the arms (ACOL's U_t; all True for
                G-optimal design).
            tol: the solver's relative gap.
        """
        arms = np.asarray(arms, dtype=float)
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (arms.shape[0],):
            raise ValueError(f"mask must have shape ({arms.shape[0]},), got {mask.shape}")
        key = (mask.tobytes(), float(tol))
        with self._lock:
            held = self._hold(arms)
            found = self._designs.pop(key, None)
        if found is None:
            try:
                found = optimal_design(arms, arms[mask], tol=tol)
            except ValueError as error:
                raise unsolvable_at_scale(error) from None
        capacity = max(1, self.max_bytes // (8 * max(arms.shape[0], 1)))
        with self._lock:
            if self._arms is held:  # no other thread has moved the cache to other arms meanwhile
                self._designs[key] = found  # (re)inserted last: the dict's order is the order of use
            while len(self._designs) > capacity:
                del self._designs[next(iter(self._designs))]
        return found
