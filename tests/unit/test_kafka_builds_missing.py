"""A run where a test's Kafka build is missing: set aside and summed up once for a user's clone,
a failure in CI. Runs the project's own tests/conftest.py in a pytest of its own, with tests
that ask for a build no machine has (``0.9.0``)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
TESTS = """
import pytest

@pytest.fixture(scope="module")
def old_broker(kafka_build):
    return kafka_build("0.9.0")

def test_one(old_broker):
    pass

def test_two(old_broker):
    pass

def test_three(kafka_build):
    kafka_build("0.9.0.1")

def test_without_kafka():
    pass
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for name in ("CI", "ZKCONSUMER_KAFKA_HOME", "ZKCONSUMER_REQUIRE_SPEEDUPS"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(CONFTEST.read_text("utf-8"))
    pytester.makepyfile(test_needs_kafka=TESTS)
    return pytester


def test_a_clone_without_the_builds_passes_and_names_what_they_need_once(suite):
    result = suite.runpytest("-ra", "-p", "no:cacheprovider")
    assert result.ret == 0
    out = result.stdout.lines
    block = out.index(next(line for line in out if "Apache Kafka builds" in line))
    assert out[block + 1:block + 3] == [
        "3 tests could not run: they need Apache Kafka 0.9.0 / 0.9.0.1 beside the checkout "
        "(../shared/kafka-0.9.0, ../shared/kafka-0.9.0.1) or in ZKCONSUMER_KAFKA_HOME.",
        "Get the official release archives and point the tests at them: see docs/brokers.md "
        "(CI=true makes these tests fail instead)."]
    assert "1 passed, 3 need Kafka" in out[-1]
    # Nothing per test: no error, no traceback, no skip line.
    assert not [line for line in out if "SKIPPED" in line or "ERROR" in line
                or "Traceback" in line or "KafkaBuildMissing" in line]


def test_in_ci_each_test_without_its_build_fails_naming_it(suite, monkeypatch):
    monkeypatch.setenv("CI", "true")
    result = suite.runpytest("-ra", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, errors=2, failed=1)  # a fixture's failure is an error
    reason = ("Failed: Apache Kafka {0} not found: no shared/kafka-{0} beside this checkout and "
              "ZKCONSUMER_KAFKA_HOME does not name one; CI=true requires the Kafka builds (see "
              "docs/brokers.md)")
    summary = [line for line in result.stdout.lines if line.startswith(("ERROR ", "FAILED "))]
    assert summary == [f"ERROR test_needs_kafka.py::test_one - {reason.format('0.9.0')}",
                       f"ERROR test_needs_kafka.py::test_two - {reason.format('0.9.0')}",
                       f"FAILED test_needs_kafka.py::test_three - {reason.format('0.9.0.1')}"]
    assert "Traceback" not in result.stdout.str()
    assert not [line for line in result.stdout.lines if "Apache Kafka builds" in line]
