"""The optional C record iterator (``zkconsumer.datapath._speedups``): selection and its own checks.

Its behaviour inside the stream is tested with every stream test (``test_stream.py`` runs
each of them on both record builders).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, KafkaError, Message

from zkconsumer.datapath import records as records_module
from zkconsumer.datapath.records import MessageAndMetadata

# The C parts are optional: without a compiler at install time there is nothing to test here
# (the pure-Python paths are tested everywhere else).
needs_c = pytest.mark.skipif(records_module.speedups is None,
                             reason="zkconsumer.datapath._speedups was not built (no C compiler at "
                                    "install time)")


def msgs(topic: str, partition: int, offsets: range) -> list[Message]:
    return [Message(topic=topic, partition=partition, offset=o, value=b"v%d" % o,
                    timestamp=(TIMESTAMP_CREATE_TIME, 1)) for o in offsets]


def test_the_c_builder_is_used_when_built_and_can_be_switched_off() -> None:
    probe = "from zkconsumer.datapath.records import speedups_enabled; print(speedups_enabled())"
    pure = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={**os.environ, "ZKCONSUMER_PURE_PYTHON": "1"}, check=True)
    assert pure.stdout.strip() == "False"
    default = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             env={k: v for k, v in os.environ.items()
                                  if k != "ZKCONSUMER_PURE_PYTHON"}, check=True)
    assert default.stdout.strip() == str(records_module.speedups is not None)


@needs_c
def test_the_c_iterator_checks_its_arguments_and_clamps_its_position() -> None:
    make = records_module.speedups.records
    raw = msgs("t", 0, range(5))
    accessors = (records_module.OFFSET_OF, records_module.KEY_OF, records_module.VALUE_OF)
    with pytest.raises(TypeError, match="tuple subclass"):
        make(dict, "t", 0, raw, 0, *accessors)
    with pytest.raises(TypeError, match="list"):
        make(MessageAndMetadata, "t", 0, tuple(raw), 0, *accessors)
    with pytest.raises(TypeError, match="8 arguments"):
        make(MessageAndMetadata, "t", 0, raw)
    it = make(MessageAndMetadata, "t", 0, raw, 99, *accessors)
    assert it.__length_hint__() == 0 and list(it) == []
    it.__setstate__(-3)
    assert it.__length_hint__() == 5
    assert [m.offset for m in it] == [0, 1, 2, 3, 4]
    assert next(it, None) is None and it.__length_hint__() == 0


def python_runs(messages: list[Message]) -> list[tuple[int, int, int, int]] | None:
    """What ``_speedups.runs`` must return, written plainly."""
    if any(m.error() is not None for m in messages):
        return None
    runs: list[tuple[int, int, int, int]] = []
    for i, m in enumerate(messages):
        if runs and runs[-1][0] == m.partition():
            part, start, _, nbytes = runs[-1]
            runs[-1] = (part, start, i + 1, nbytes + len(m))
        else:
            runs.append((m.partition(), i, i + 1, len(m)))
    return runs


@needs_c
@pytest.mark.parametrize("layout", [[], [0], [0] * 50, [0, 0, 1, 1, 1, 0, 2, 2], [3, 1, 3, 1],
                                    [7] * 10 + [300] * 5, "error"])
def test_the_c_sort_of_a_batch_matches_the_plain_one(layout: list[int] | str) -> None:
    sort = records_module.speedups.runs
    if layout == "error":
        batch = msgs("t", 0, range(3))
        batch.insert(2, Message(topic="t", partition=0, offset=3,
                                error=KafkaError(KafkaError._PARTITION_EOF)))
    else:
        batch = [Message(topic="t", partition=p, offset=i, value=b"x" * (i % 7) if i % 5 else None)
                 for i, p in enumerate(layout)]
    expected = python_runs(batch)
    assert sort(batch, Message.error, Message.partition) == expected
    if expected is not None:
        assert sum(n for *_, n in expected) == sum(map(len, batch))


@needs_c
def test_the_fetcher_sorts_a_batch_the_same_with_or_without_the_c_sort(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from zkconsumer.config import ConsumerConfig
    from zkconsumer.datapath import fetcher_thread
    from zkconsumer.datapath.chunks import ChunkQueue
    from zkconsumer.datapath.partition_leaders import Leader
    from zkconsumer.datapath.position import PartitionTopicInfo

    config = ConsumerConfig({"zookeeper.connect": "127.0.0.1:1", "group.id": "g"})
    batch = [Message(topic="t", partition=p, offset=o, value=b"v" * o)
             for p, o in [(0, 5), (0, 6), (1, 9), (2, 1), (2, 2), (0, 7), (9, 1)]]
    outcomes = []
    for sort in (fetcher_thread.runs_in_c, None):
        monkeypatch.setattr(fetcher_thread, "runs_in_c", sort)
        thread = fetcher_thread.FetcherThread("f", 0, Leader(1, "127.0.0.1:1"), config,
                                              lambda *a: None, lambda *a: None)
        thread._topics.add("t")
        for p, start in ((0, 5), (1, 0), (2, 1)):  # partition 9 is not ours (any more)
            info = PartitionTopicInfo("t", p, ChunkQueue(2), start, start, "g-0")
            thread._assigned[("t", p)] = fetcher_thread._Assigned(info)
        errors: list[Message] = []
        thread._convert(None, batch, errors)  # type: ignore[arg-type]
        outcomes.append({tp: ([m.offset() for m in a.converted], a.nbytes, a.next_offset)
                         for tp, a in thread._assigned.items()})
        assert not errors
    assert outcomes[0] == outcomes[1] == {("t", 0): ([5, 6, 7], 18, 8), ("t", 1): ([9], 9, 10),
                                          ("t", 2): ([1, 2], 3, 3)}


# A child interpreter where the extension cannot be imported (as if it had not been built).
_HIDDEN = ("import sys; sys.modules['zkconsumer.datapath._speedups'] = None; "
           "import zkconsumer.datapath.stream, zkconsumer.datapath.records as r; "
           "print(r.speedups_enabled())")


def test_a_missing_extension_fails_the_import_when_it_is_required() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ZKCONSUMER_PURE_PYTHON"}
    required = subprocess.run([sys.executable, "-c", _HIDDEN], capture_output=True, text=True,
                              env={**env, "ZKCONSUMER_REQUIRE_SPEEDUPS": "1"})
    assert required.returncode == 1
    assert ("ImportError: ZKCONSUMER_REQUIRE_SPEEDUPS=1 but the C extension "
            "zkconsumer.datapath._speedups is not built") in required.stderr
    optional = subprocess.run([sys.executable, "-c", _HIDDEN], capture_output=True, text=True,
                              env={**env, "ZKCONSUMER_REQUIRE_SPEEDUPS": "0"}, check=True)
    assert optional.stdout.strip() == "False", "without the requirement: pure Python"


def test_the_test_command_requires_the_extension_where_a_compiler_exists() -> None:
    import shutil

    out = subprocess.run(["make", "-n", "test"], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    line = next(x for x in out.stdout.splitlines() if "pytest" in x)
    assert "ZKCONSUMER_REQUIRE_SPEEDUPS=$(command -v cc" in line
    if shutil.which("cc"):
        # this machine has a compiler, so the extension must be here and in use
        assert records_module.speedups is not None and records_module.speedups_enabled()
