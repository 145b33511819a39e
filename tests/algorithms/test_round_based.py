"""The round-based algorithms share their design solves across the seeds of one request
(:class:`cbai_cli.numerics.design.cache.DesignCache` on the configuration) without changing a record."""

from __future__ import annotations

import pytest

from cbai_cli.run.simulate import RunRequest, prepare, run_once


def _record(result) -> tuple:
    return result.seed, result.iterations, result.recommended, result.stopped, result.rounds


@pytest.mark.parametrize("name", ["acol", "g-allocation"])
def test_seeds_sharing_a_request_give_the_records_of_seeds_run_alone(name, irrelevant_dims):
    request = RunRequest.of(name, subgaussian=1.0)
    shared = prepare(request, irrelevant_dims)
    together = [_record(run_once(shared, seed)) for seed in range(3)]
    alone = [_record(run_once(prepare(request, irrelevant_dims), seed)) for seed in range(3)]
    assert together == alone


def test_acol_solves_each_distinct_uncertain_set_once(irrelevant_dims):
    # At R = 1 every run has four rounds: U_1 = X, then the same two uncertain arms
    # (32,540 queries, Lindner et al. 2022, Figure 2's instance).
    prepared = prepare(RunRequest.of("acol", subgaussian=1.0), irrelevant_dims)
    assert [run_once(prepared, seed).rounds for seed in range(3)] == [4, 4, 4]
    assert len(prepared.config.designs) == 2


def test_each_configuration_has_its_own_cache_outside_equality(irrelevant_dims):
    request = RunRequest.of("acol")
    first, second = prepare(request, irrelevant_dims).config, prepare(request, irrelevant_dims).config
    assert first == second and first.designs is not second.designs
