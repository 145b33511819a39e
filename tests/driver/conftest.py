"""Fixtures of the driver tests: a cheap CEM and a few candidate policies made with it."""

import pytest

from cbai_cli.driver.cem import CEMConfig
from cbai_cli.driver.policies import PolicySet, build_policies


@pytest.fixture(scope="session")
def fast_cem() -> CEMConfig:
    """A CEM of 3 iterations of 10 samples: poor policies, quickly."""
    return CEMConfig(n_iterations=3, n_samples=10, n_elite=2)


@pytest.fixture(scope="session")
def policies(fast_cem) -> PolicySet:
    """12 candidate policies from seed 5."""
    return build_policies(12, seed=5, config=fast_cem)
