"""The log-log fit that turns requests-per-event against group size into one slope."""

from __future__ import annotations

import math

import pytest

from zkconsumer.lab.herd.fits import loglog_fit


def test_exact_power_laws_give_their_exponent() -> None:
    ns = [4, 8, 16, 32, 64]
    quad = loglog_fit([(n, 3.0 * n ** 2) for n in ns])
    assert quad is not None
    assert quad.slope == pytest.approx(2.0)
    assert math.exp(quad.intercept) == pytest.approx(3.0)
    assert quad.r2 == pytest.approx(1.0)
    assert quad.predict(10) == pytest.approx(300.0)
    lin = loglog_fit([(n, 7 * n) for n in ns])
    assert lin is not None and lin.slope == pytest.approx(1.0)


def test_the_herd_cost_model_is_steeper_than_linear() -> None:
    """N² + 10N + 3P with P = 8 over the default sweep: the quadratic term dominates."""
    fit = loglog_fit([(n, n * n + 10 * n + 24) for n in (4, 8, 16, 32, 64)])
    assert fit is not None and 1.3 < fit.slope < 2.0
    assert fit.to_json()["points"][0] == [4, 80]


def test_unusable_points_are_dropped_and_too_few_give_none() -> None:
    fit = loglog_fit([(4, 16), (0, 5), (8, None), (16, 256), (32, -1)])
    assert fit is not None and fit.slope == pytest.approx(2.0)
    assert [p[0] for p in fit.points] == [4, 16]
    assert loglog_fit([(4, 10)]) is None
    assert loglog_fit([(4, 10), (4, 20)]) is None
    flat = loglog_fit([(4, 10), (8, 10)])
    assert flat is not None and flat.slope == pytest.approx(0.0) and flat.r2 is None
