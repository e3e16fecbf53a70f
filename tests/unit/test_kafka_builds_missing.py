"""A run where a test's Kafka build is missing: set aside and summed up once for a user's clone,
a failure in CI. Runs the project's own tests/conftest.py in a pytest of its own, with tests
that ask for builds no machine has (``0.8.1``, ``0.8.2``) and for the member driver of a
release that ZKCONSUMER_KAFKA_HOME names but which has none."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
TESTS = """
import pytest

@pytest.fixture(scope="module")
def old_broker(kafka_build):
    return kafka_build("0.8.1")

def test_one(old_broker):
    pass

def test_two(old_broker):
    pass

def test_three(kafka_build):
    kafka_build("0.8.2")

def test_four(kafka_build):
    kafka_build("0.9.0.2", member_driver=True)

def test_without_kafka():
    pass
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for name in ("CI", "ZKCONSUMER_REQUIRE_SPEEDUPS"):
        monkeypatch.delenv(name, raising=False)
    release = pytester.path / "kafka_2.11-0.9.0.2"  # an Apache release: no member driver
    for name in ("bin/kafka-server-start.sh", "bin/kafka-run-class.sh",
                 "config/server.properties", "libs/kafka_2.11-0.9.0.2.jar"):
        (release / name).parent.mkdir(parents=True, exist_ok=True)
        (release / name).write_bytes(b"")
    monkeypatch.setenv("ZKCONSUMER_KAFKA_HOME", str(release))
    pytester.makeconftest(CONFTEST.read_text("utf-8"))
    pytester.makepyfile(test_needs_kafka=TESTS)
    return pytester


def test_a_clone_without_the_builds_passes_and_names_what_they_need_once(suite):
    result = suite.runpytest("-ra", "-p", "no:cacheprovider")
    assert result.ret == 0
    out = result.stdout.lines
    block = out.index(next(line for line in out if "Apache Kafka builds" in line))
    assert out[block + 1:block + 5] == [
        "3 tests could not run: they need Apache Kafka 0.8.1 / 0.8.2 beside the checkout "
        "(../shared/kafka-0.8.1, ../shared/kafka-0.8.2) or in ZKCONSUMER_KAFKA_HOME.",
        "1 test could not run: original consumer members start through "
        "bin/zk-consumer-member.sh, which only the project's own 0.9.0.2 build has.",
        "How to get them: docs/brokers.md (with CI=true these tests fail instead).",
        ""]  # then the counts
    assert "1 passed, 4 need Kafka" in out[-1]
    # Nothing per test: no error, no traceback, no skip line.
    assert not [line for line in out if "SKIPPED" in line or "ERROR" in line
                or "Traceback" in line or "KafkaBuildMissing" in line]


def test_in_ci_each_test_without_its_build_fails_naming_it(suite, monkeypatch):
    release = suite.path / "kafka_2.11-0.9.0.2"
    monkeypatch.setenv("CI", "true")
    result = suite.runpytest("-ra", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, errors=2, failed=2)  # a fixture's failure is an error
    reason = ("Failed: Apache Kafka {0} not found: no shared/kafka-{0} beside this checkout and "
              "ZKCONSUMER_KAFKA_HOME does not name one; CI=true requires the Kafka builds (see "
              "docs/brokers.md)")
    summary = [line for line in result.stdout.lines if line.startswith(("ERROR ", "FAILED "))]
    assert summary == [f"ERROR test_needs_kafka.py::test_one - {reason.format('0.8.1')}",
                       f"ERROR test_needs_kafka.py::test_two - {reason.format('0.8.1')}",
                       f"FAILED test_needs_kafka.py::test_three - {reason.format('0.8.2')}",
                       f"FAILED test_needs_kafka.py::test_four - Failed: {release} has no "
                       "bin/zk-consumer-member.sh, the original consumer's member driver of the "
                       "project's 0.9.0.2 build; CI=true requires it (see docs/brokers.md)"]
    assert "Traceback" not in result.stdout.str()
    assert not [line for line in result.stdout.lines if "Apache Kafka builds" in line]
