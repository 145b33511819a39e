"""The round-robin algorithm: one module, one class, as every cbai algorithm."""

from __future__ import annotations

from cbai_cli.algorithms.base import Adaptive


class RoundRobin(Adaptive):
    """Pull the arms in turn: step t pulls arm (t + f) mod K, f = ``--first-arm``."""

    def __init__(self, problem, config, rng) -> None:
        super().__init__(problem, config, rng)
        self.turn = config.own_options["first_arm"]

    def select(self) -> int:
        arm = self.turn % self.problem.n_arms
        self.turn += 1
        return arm
