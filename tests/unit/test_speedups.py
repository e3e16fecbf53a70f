"""The optional C record iterator (``zkconsumer._speedups``): selection and its own checks.

Its behaviour inside the stream is tested with every stream test (``test_stream.py`` runs
each of them on both record builders).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, Message

from zkconsumer import chunks
from zkconsumer.chunks import MessageAndMetadata


def msgs(topic: str, partition: int, offsets: range) -> list[Message]:
    return [Message(topic=topic, partition=partition, offset=o, value=b"v%d" % o,
                    timestamp=(TIMESTAMP_CREATE_TIME, 1)) for o in offsets]


def test_the_c_builder_is_used_when_built_and_can_be_switched_off() -> None:
    probe = "from zkconsumer.chunks import speedups_enabled; print(speedups_enabled())"
    pure = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={**os.environ, "ZKCONSUMER_PURE_PYTHON": "1"}, check=True)
    assert pure.stdout.strip() == "False"
    default = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             env={k: v for k, v in os.environ.items()
                                  if k != "ZKCONSUMER_PURE_PYTHON"}, check=True)
    assert default.stdout.strip() == str(chunks._speedups is not None)


@pytest.mark.skipif(chunks._speedups is None,
                    reason="zkconsumer._speedups was not built (no C compiler at install time)")
def test_the_c_iterator_checks_its_arguments_and_clamps_its_position() -> None:
    make = chunks._speedups.records
    raw = msgs("t", 0, range(5))
    accessors = (chunks.OFFSET_OF, chunks._KEY, chunks._VALUE)
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
