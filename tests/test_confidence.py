"""Confidence radii (cbai_cli/confidence.py): the formulas, and the regimes that call them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cbai_cli.confidence import (
    ConfidenceSettings,
    DeterminantRegime,
    StaticRegime,
    TheoryRegime,
    radius_determinant,
    radius_horizon,
    radius_lingape_script,
    radius_static,
)
from cbai_cli.linalg import DesignState, RidgeDesign


def test_radius_forms():
    # Determinant form at A = λI: R sqrt(2 log(1/δ)) + sqrt(λ) S.
    assert radius_determinant(2 * math.log(2.0), 2, 2.0, 1.5, 3.0, 0.1) == pytest.approx(
        1.5 * math.sqrt(2 * math.log(10)) + math.sqrt(2) * 3
    )
    # K² union factor.
    assert radius_determinant(0.0, 1, 1.0, 1.0, 0.0, 0.05, union=16) == pytest.approx(math.sqrt(2 * math.log(16 / 0.05)))
    assert radius_horizon(10, 2, 1.0, 1.0, 1.0, math.sqrt(2), 0.01) == pytest.approx(
        math.sqrt(2 * math.log(21 / 0.01)) + 1
    )
    assert radius_lingape_script(7, 3, 1.0, 1.0, 2.0, 1.0, 0.05, 4) == pytest.approx(
        math.sqrt(3 * math.log(16 * 8 / 0.05)) + 2
    )
    with pytest.raises(ValueError, match="delta"):
        radius_horizon(1, 1, 1.0, 1.0, 1.0, 1.0, 1.5)


def test_static_radius():
    assert radius_static(10, 0.05, 2.0) == pytest.approx(2.0 * math.sqrt(2 * math.log(200)))


def test_horizon_form_dominates_determinant_form_for_d_at_least_2():
    """β_n ≥ β_det for d ≥ 2 (det A ≤ (λ + n L²/d)^d), not for d = 1."""
    rng = np.random.default_rng(2)
    for d in (2, 3, 5):
        design = RidgeDesign(d, 1.0)
        for _ in range(200):
            x = rng.normal(size=d)
            design.add(x / max(1.0, np.linalg.norm(x)), 0.0)
        bd = radius_determinant(design.logdet, d, 1.0, 1.0, 1.0, 0.01)
        bh = radius_horizon(design.n_samples, d, 1.0, 1.0, 1.0, 1.0, 0.01)
        assert bh >= bd
    one = RidgeDesign(1, 1.0)
    for _ in range(100):
        one.add(np.ones(1), 0.0)
    assert radius_horizon(100, 1, 1.0, 1.0, 1.0, 1.0, 0.01) < radius_determinant(one.logdet, 1, 1.0, 1.0, 1.0, 0.01)


def test_regimes_call_the_formulas_with_their_settings_and_the_design():
    settings = ConfidenceSettings(delta=0.05, subgaussian=0.5, ridge=0.1, norm_bound=2.0, arm_bound=1.5)
    state = DesignState(np.array([[1.0, 0.0], [0.6, 0.8]]), ridge=0.1)
    state.update(1, 0.3, count=4)
    assert TheoryRegime(settings).radius(state) == radius_horizon(4, 2, 0.1, 0.5, 2.0, 1.5, 0.05)
    assert DeterminantRegime(settings).radius(state) == radius_determinant(state.logdet, 2, 0.1, 0.5, 2.0, 0.05)
    assert StaticRegime(settings).round_radius(5, 0.01) == radius_static(5, 0.01, 0.5)
