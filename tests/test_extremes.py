"""Inputs at the edges: nothing hangs, extreme numbers stay numbers, gaps are honest.

- Undecidable instances (an arm of X≥(x*) exactly on the boundary) are refused up front
  by ``prepare`` unless a budget is given, with the explanation ``cbai bound`` gives.
- Round lengths are bounded in logs; a round longer than a run can count
  (:data:`cbai_cli.options.QUERY_LIMIT`) is one line, or the end of a budgeted run.
- δ down to the smallest subnormal, huge sizes and B = 0 give numbers or one line.
- A design the solver cannot certify says so; a singular optimum is certified.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cbai_cli.bounds import at_least_set, h_clb_design
from cbai_cli.cli import app
from cbai_cli.errors import InstanceError
from cbai_cli.generators import generate_instance
from cbai_cli.kinds import save


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_line_error(result, message: str | None = None) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("cbai: error: "), result.stderr
    assert "Traceback" not in result.stderr
    if message is not None:
        assert message in result.stderr, result.stderr
    return result.stderr


# --------------------------------------------------------------------------- #
# Extreme numbers: sizes and B = 0
# --------------------------------------------------------------------------- #


def test_generate_refuses_an_instance_beyond_the_memory_limit():
    one_line_error(invoke("generate", "random", "--n", str(10**12)),
                   "random: n = 1000000000000, d = 5 would take about 564 TiB of memory, more than the limit of 4 GiB")


def test_generate_names_the_size_options_to_shrink():
    one_line_error(invoke("generate", "irrelevant-dims", "--d", str(10**6)), "choose a smaller d")


def test_generate_counts_the_pairwise_distances_of_the_unit_sphere():
    one_line_error(invoke("generate", "unit-sphere", "--d", "30", "--n", "100000"), "unit-sphere: n = 100000, d = 30")


def test_generate_accepts_an_instance_under_the_memory_limit(tmp_path):
    assert invoke("generate", "random", "--d", "5", "--n", "1000", "-o", tmp_path / "r.npz").exit_code == 0


def test_compare_refuses_seeds_beyond_the_memory_limit():
    stderr = one_line_error(invoke("compare", "instances/regret-1d.yaml", "--algos", "acol", "--seeds", str(10**12),
                                   "-q"), "--seeds 1000000000000 would keep about")
    assert "more than the limit of 4 GiB" in stderr and "seeds fit" in stderr


def test_compare_refuses_a_generator_spec_beyond_the_memory_limit():
    one_line_error(invoke("compare", f"random:n={10**12}", "--algos", "acol", "--seeds", "1", "-q"), "random: n =")


def zero_b_instance():
    from cbai_cli.kinds import from_mapping

    mapping = generate_instance("amani-a", T=100).to_mapping()
    mapping["B"] = [[0.0, 0.0], [0.0, 0.0]]
    return from_mapping(mapping)


def test_safe_regret_bound_with_zero_b_is_one_instance_error():
    from cbai_cli.safe.bounds import safe_regret_bounds

    with pytest.raises(InstanceError, match="B = 0: every action is safe"):
        safe_regret_bounds(zero_b_instance())


def test_bound_cli_on_a_safe_regret_file_with_zero_b_is_one_line(tmp_path):
    path = tmp_path / "zero-b.yaml"
    save(zero_b_instance(), path)
    one_line_error(invoke("bound", path), "Safe-LUCB's constants (λ_−, t_δ, T_Δ, T_0) are undefined on this instance")


# --------------------------------------------------------------------------- #
# Honest numbers
# --------------------------------------------------------------------------- #


def test_a_singular_h_clb_design_is_certified():
    # X≥(x*) has 8 arms in d = 15: the optimal design is singular and the barrier method
    # alone stalled at a gap of 2e-4 here
    instance = generate_instance("random", d=15, n=1000, seed=5)
    design = h_clb_design(instance, at_least_set(instance), solver="fw")
    assert design.gap <= 1e-6 and design.value == pytest.approx(19.58403, rel=1e-6)
