"""The static-membership probe's decision rule, and what it costs to be wrong."""

from __future__ import annotations

import pytest

from zkconsumer.lab.probe import BOUNCES, honours_static_membership


def test_one_revoke_means_not_honoured_wherever_it_falls() -> None:
    assert honours_static_membership([True]) is False
    assert honours_static_membership([False] * (BOUNCES - 1) + [True]) is False


def test_honoured_needs_every_bounce_quiet() -> None:
    assert honours_static_membership([False] * BOUNCES) is True


def test_fewer_quiet_bounces_than_the_rule_needs_is_an_error_naming_the_count() -> None:
    with pytest.raises(ValueError, match=f"3 quiet bounces decide nothing: the rule needs "
                                         f"{BOUNCES} in a row"):
        honours_static_membership([False] * 3)


def test_a_broker_revoking_half_the_time_is_misjudged_below_four_in_a_thousand() -> None:
    # The probe stops at the first revoke, so it says "honoured" only after BOUNCES quiet ones.
    assert 0.5 ** BOUNCES < 0.004
