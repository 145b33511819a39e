"""The kernels' on-disk cache is invalidated by an edit of any kernel source, not only of
the function's own file (a compiled function inlines the kernels it calls)."""

from __future__ import annotations

from cbai_cli.kernels import advance, design, jit, ols, threads


def test_every_kernel_cache_is_stamped_with_all_kernel_sources():
    for kernel in (advance.advance, design.absorb, threads.absorb_pass, threads._absorb_blocks_threaded,
                   ols.rank_one_step, ols.mixture_bounds):
        assert kernel._cache._impl.locator.get_source_stamp() == jit.sources_digest()

