"""Statistical checks of random generators (MXNet's ``test_utils`` names and behaviour).

A *generator* is a function ``generator(n)`` returning ``n`` i.i.d. samples
(a numpy array, or anything ``np.asarray`` takes).  :func:`verify_generator`
repeats a chi-square goodness-of-fit test and fails when too few repeats pass::

    import scipy.stats as ss
    buckets, probs = gen_buckets_probs_with_ppf(lambda q: ss.norm.ppf(q, 0, 1), 5)
    verify_generator(lambda n: np.random.normal(0, 1, size=n), buckets, probs)

The chi-square test needs scipy, imported only when it runs; the other checks
need only numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "gen_buckets_probs_with_ppf",
    "mean_check",
    "var_check",
    "chi_square_check",
    "verify_generator",
]

Generator = Callable[[int], Any]


def _chi2_survival() -> Callable[..., Any]:
    try:
        from scipy.stats import chi2
    except ImportError as error:
        raise ImportError(
            "chi_square_check and verify_generator need scipy, which is not installed: "
            "pip install scipy (or dagnet's 'test' extra)") from error
    return chi2.sf


def _samples(generator: Generator, n: int) -> np.ndarray:
    samples = generator(n)
    return samples.asnumpy() if hasattr(samples, "asnumpy") else np.asarray(samples)


def gen_buckets_probs_with_ppf(ppf: Callable[[float], float],
                               nbuckets: int) -> tuple[list[tuple[float, float]], list[float]]:
    """``nbuckets`` equally likely buckets of a continuous distribution from its
    quantile function ``ppf``: bucket ``i`` is ``(ppf(i/n), ppf((i+1)/n))`` with
    probability ``1/n``.  Returns ``(buckets, probs)``."""
    assert nbuckets > 0
    probs = [1.0 / nbuckets for _ in range(nbuckets)]
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets)))
               for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator: Generator, mu: float, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the mean of ``nsamples`` samples lies within ``mu +- 3 sigma / sqrt(n)``."""
    samples = _samples(generator, nsamples)
    sample_mean = samples.mean()
    bound = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - bound < sample_mean < mu + bound)


def var_check(generator: Generator, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the unbiased variance of ``nsamples`` samples lies within
    ``sigma**2 +- 3 sqrt(2 sigma**4 / (n - 1))``."""
    samples = _samples(generator, nsamples)
    sample_var = samples.var(ddof=1)
    bound = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - bound < sample_var < sigma ** 2 + bound)


def chi_square_check(generator: Generator, buckets: list[Any], probs: Sequence[float],
                     nsamples: int = 1000000) -> tuple[float, np.ndarray, np.ndarray]:
    """Chi-square test of ``nsamples`` samples of ``generator`` against ``probs``.

    ``buckets`` is a list: of ``(low, high)`` pairs, ascending and disjoint, for a
    continuous distribution (a sample counts in the pair whose range holds it), or
    of the possible values of a discrete one.  ``probs`` gives each bucket's
    probability.  Returns ``(p, obs_freq, expected_freq)``: the p-value (higher is
    better), the observed counts and the expected counts.  Malformed buckets raise
    AssertionError.
    """
    survival = _chi2_survival()
    assert isinstance(buckets, list), "buckets must be a list"
    samples = _samples(generator, nsamples)
    assert len(probs) == len(buckets), "one probability per bucket"
    continuous = isinstance(buckets[0], (list, tuple))
    if continuous:
        edges = np.zeros((len(buckets) * 2,), dtype=np.float32)
        for i, (low, high) in enumerate(buckets):
            assert low <= high, f"bucket {i} has low {low} > high {high}"
            if i < len(buckets) - 1:
                assert high <= buckets[i + 1][0], f"buckets {i} and {i + 1} overlap"
            edges[2 * i], edges[2 * i + 1] = low, high
    expected_freq = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    if continuous:
        # a sample in bucket i lands between edges 2i and 2i+1: searchsorted gives 2i+1
        bucket_ids = np.searchsorted(edges, samples.reshape(-1), side="right") // 2
    else:
        bucket_ids = samples
    obs_freq = np.zeros(shape=len(buckets), dtype=np.int64)
    for i, bucket in enumerate(buckets):
        obs_freq[i] = (bucket_ids == (i if continuous else bucket)).sum()
    # Pearson's statistic with len(buckets) - 1 degrees of freedom, as
    # scipy.stats.chisquare computes it; called directly because recent scipy
    # refuses counts whose totals differ, and the expected counts here are
    # truncated to integers (as MXNet's) so their total may fall short by a few.
    stat = float(np.sum((obs_freq - expected_freq) ** 2 / expected_freq.astype(np.float64)))
    p = float(survival(stat, len(buckets) - 1))
    return p, obs_freq, expected_freq


def verify_generator(generator: Generator, buckets: list[Any], probs: Sequence[float],
                     nsamples: int = 1000000, nrepeat: int = 5, success_rate: float = 0.2,
                     alpha: float = 0.05) -> list[float]:
    """Run :func:`chi_square_check` ``nrepeat`` times; raise AssertionError (with the
    p-values, counts, buckets and probabilities) unless at least
    ``nrepeat * success_rate`` of the p-values exceed ``alpha``.  Returns the p-values."""
    p_values, observed, expected = [], [], []
    for _ in range(nrepeat):
        p, obs_freq, expected_freq = chi_square_check(generator=generator, buckets=buckets,
                                                      probs=probs, nsamples=nsamples)
        p_values.append(p)
        observed.append(obs_freq)
        expected.append(expected_freq)
    success_num = (np.array(p_values) > alpha).sum()
    if success_num < nrepeat * success_rate:
        raise AssertionError(
            f"Generator test fails, Chi-square p={p_values}, obs_freq={observed}, "
            f"expected_freq={expected}.\nbuckets={buckets}, probs={probs}")
    return p_values
