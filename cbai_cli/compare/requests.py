"""The two kinds of request a comparison runs, behind one interface.

- CBAI algorithms on ``kind: cbai`` instances: :class:`cbai_cli.simulate.RunSpec`,
  prepared by :func:`cbai_cli.simulate.prepare` and run by :func:`cbai_cli.simulate.run_once`.
- Safe algorithms on ``safe-regret`` and ``safe-bai`` instances:
  :class:`cbai_cli.safe.solving.SafeRunSpec`, prepared and run by :mod:`cbai_cli.safe.solving`.

Both draw their randomness from ``SeedSequence(seed, spawn_key=key)`` (see
:func:`cbai_cli.simulate.run_streams`), so common random numbers and ``--jobs``
independence hold for both. A run's result is one flat mapping with the record keys of
:mod:`cbai_cli.compare.records` that concern it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunParts:
    """What one run contributes to its record: the resolved algorithm and regime (None
    for safe algorithms, which have no confidence regime), the options in effect (None
    where an option does not enter the algorithm) and the scored result."""

    algorithm: str
    regime: str | None
    options: dict
    result: dict


def is_safe(request: Any) -> bool:
    from cbai_cli.safe.solving import SafeRunSpec

    return isinstance(request, SafeRunSpec)


def prepare_request(request: Any, instance: Any, *, solve_oracle: bool = True) -> Any:
    """Check ``request`` against ``instance`` as ``cbai solve`` would and fill in defaults
    (``solve_oracle=False`` skips the Oracle's design: a check, not a run).

    Raises :class:`OptionError` when the algorithm runs on another kind of instance, or
    for any option the algorithm cannot use.
    """
    if is_safe(request):
        from cbai_cli.safe.solving import prepare

        return prepare(request, instance)
    if instance.kind != "cbai":
        from cbai_cli.safe.registry import algorithm_for_kind

        algorithm_for_kind(request.algorithm, instance.kind)  # raises: names the algorithms that fit
    from cbai_cli.simulate import prepare

    return prepare(request, instance, solve_oracle=solve_oracle)


def run_prepared(prepared: Any, instance: Any, seed: int, key: tuple[int, ...]) -> RunParts:
    """Run one seed of a prepared request and score it."""
    from cbai_cli.safe.solving import PreparedSafeRun

    if isinstance(prepared, PreparedSafeRun):
        from cbai_cli.safe.solving import run_once

        result = run_once(prepared, seed, key)
        record = result.record()
        if result.kind == "safe-regret":
            record["regret_curve"] = [[t, regret] for t, regret in result.curve]
        budget = prepared.options.get("budget")
        options = {"budget": budget, "algorithm_options": dict(prepared.options)}
        return RunParts(prepared.algorithm, None, options, record)
    from cbai_cli.simulate import run_once

    result = run_once(prepared, instance, seed, key=key)
    return RunParts(prepared.algorithm, prepared.regime, cbai_options(prepared), {"kind": "cbai", **result.to_dict()})


def cbai_options(prepared: Any) -> dict:
    """The options a prepared CBAI run actually uses; None for those it ignores (β outside
    the tuned regime, R in the tuned regime, λ for round-based algorithms, …)."""
    settings = prepared.config.confidence
    regime = prepared.regime
    adaptive = prepared.spec.style == "adaptive"
    return {
        "delta": settings.delta,
        "beta": settings.beta if regime == "tuned" else None,
        "subgaussian": settings.subgaussian if regime != "tuned" else None,
        "ridge": settings.ridge if adaptive else None,
        "norm_bound": settings.norm_bound if regime in ("theory", "det") else None,
        "rounding_epsilon": prepared.config.rounding_epsilon if not adaptive else None,
        "budget": prepared.budget,
    }
