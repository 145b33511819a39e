"""The compiled radius is the regime's Python radius, bitwise."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from cbai_cli.numerics.confidence import REGIMES, ConfidenceSettings
from cbai_cli.numerics.kernels.radius import radius


class FakeDesign:
    def __init__(self, n_samples: int, logdet: float, dim: int) -> None:
        self.n_samples, self.logdet, self.dim = n_samples, logdet, dim


@given(regime=st.sampled_from(["theory", "det", "tuned"]), n=st.integers(0, 10**9),
       logdet=st.floats(-50, 5000), dim=st.integers(1, 300), delta=st.floats(1e-300, 0.99),
       subgaussian=st.floats(0, 100), ridge=st.floats(1e-6, 1e6), norm_bound=st.floats(0, 100),
       arm_bound=st.floats(0, 100), beta=st.floats(1e-6, 1e6))
def test_compiled_radius_equals_the_regime_radius(regime, n, logdet, dim, delta, subgaussian, ridge, norm_bound,
                                                  arm_bound, beta):
    settings = ConfidenceSettings(delta=delta, subgaussian=subgaussian, ridge=ridge, norm_bound=norm_bound,
                                  arm_bound=arm_bound, beta=beta)
    chosen = REGIMES[regime](settings)
    code, params = chosen.kernel(dim)
    assert radius(code, np.int64(n), logdet, np.array(params)) == chosen.radius(FakeDesign(n, logdet, dim))
