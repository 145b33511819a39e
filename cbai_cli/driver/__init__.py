"""The Driver environment of Lindner et al. (ICML 2022), Section 4.3 and Appendix C.

Pure library code, numpy arrays in and out (docs/driver.md has the commands, figures and
measurements):

- :mod:`~cbai_cli.driver.dynamics`: the point-mass car step and batched roll-outs.
- :mod:`~cbai_cli.driver.road`: lane geometry.
- :mod:`~cbai_cli.driver.features`: the eight features of Table C.1.
- :mod:`~cbai_cli.driver.scenarios`: traffic, environments, the three named scenarios.
- :mod:`~cbai_cli.driver.cem`: the (constrained) cross-entropy method, Algorithm 4.
- :mod:`~cbai_cli.driver.policies`: candidate policies, one CEM solution each (Appendix C.3).
- :mod:`~cbai_cli.driver.bandit`: policies as arms of a constrained linear bandit.
- :mod:`~cbai_cli.driver.duplicates`: exact duplicates among policies or arms.
- :mod:`~cbai_cli.driver.instances`: arm sets as CBAI instance files (``cbai driver-arms``).
- :mod:`~cbai_cli.driver.penalty`: the constraint-versus-penalty study of Figure 4.
- :mod:`~cbai_cli.driver.plot`: top-down pictures (matplotlib, imported lazily).
- :mod:`~cbai_cli.driver.show`: the pictures of ``cbai driver-arms --show``.
- :mod:`~cbai_cli.driver.command`: ``cbai driver-arms`` as one call (build or draw).
- :mod:`~cbai_cli.driver.arrays`: read-only arrays for the frozen dataclasses.
"""

from cbai_cli.driver.bandit import DriverBandit, build_bandit, evaluate_policies
from cbai_cli.driver.cem import CEMConfig, CEMResult, Problem, cross_entropy
from cbai_cli.driver.duplicates import count_distinct, distinct_rows
from cbai_cli.driver.policies import PolicySet, build_policies
from cbai_cli.driver.scenarios import SCENARIO_NAMES, Scenario, UnknownScenarioError, scenario

__all__ = [
    "SCENARIO_NAMES",
    "CEMConfig",
    "CEMResult",
    "DriverBandit",
    "PolicySet",
    "Problem",
    "Scenario",
    "UnknownScenarioError",
    "build_bandit",
    "build_policies",
    "count_distinct",
    "cross_entropy",
    "distinct_rows",
    "evaluate_policies",
    "scenario",
]
