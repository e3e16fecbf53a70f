"""KafkaStream / ConsumerIterator / ChunkQueue semantics, without servers.

Chunks are built by hand exactly as a fetcher thread builds them: a list of the client's
``confluent_kafka.Message`` objects of one partition and the fetch offset the chunk started at.
"""

from __future__ import annotations

import logging
import pickle
import threading
import time

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, Message

import zkconsumer.datapath.stream as stream_module
from zkconsumer.datapath import records as records_module
from zkconsumer.datapath.chunks import ChunkQueue, FetchedDataChunk
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.datapath.records import MessageAndMetadata
from zkconsumer.datapath.stream import IteratorState, KafkaStream
from zkconsumer.errors import ConsumerTimeoutException

WAIT_S = 5.0


@pytest.fixture(autouse=True, params=["python", "c"])
def records_implementation(request: pytest.FixtureRequest,
                           monkeypatch: pytest.MonkeyPatch) -> str:
    """Every stream test runs on both record builders: they must be indistinguishable."""
    if request.param == "c":
        if records_module.speedups is None:
            pytest.skip("zkconsumer.datapath._speedups was not built (no C compiler at "
                        "install time)")
        monkeypatch.setattr(stream_module, "records", records_module.c_records)
    else:
        monkeypatch.setattr(stream_module, "records", records_module.py_records)
    return str(request.param)


def msgs(topic: str, partition: int, offsets: range | list[int]) -> list[Message]:
    return [Message(topic=topic, partition=partition, offset=o,
                    value=f"{topic}-{partition}-{o}".encode(), timestamp=(TIMESTAMP_CREATE_TIME, 1))
            for o in offsets]


def chunk(info: PartitionTopicInfo, offsets: range | list[int],
          fetch_offset: int | None = None) -> FetchedDataChunk:
    offsets = list(offsets)
    return FetchedDataChunk(msgs(info.topic, info.partition, offsets), info,
                            offsets[0] if fetch_offset is None else fetch_offset)


def setup(capacity: int = 10, timeout_ms: int = -1, consumed: int = 0
          ) -> tuple[ChunkQueue, PartitionTopicInfo, KafkaStream]:
    queue = ChunkQueue(capacity, "t-0")
    info = PartitionTopicInfo("t", 0, queue, consumed, consumed, "c-0")
    return queue, info, KafkaStream(queue, timeout_ms)


def test_messages_come_out_in_order_and_each_next_commits_its_offset() -> None:
    queue, info, stream = setup()
    queue.put(chunk(info, range(0, 3)))
    queue.put(chunk(info, range(3, 5)))
    it = iter(stream)
    seen = []
    for _ in range(5):
        m = next(it)
        seen.append(m.offset)
        assert info.consumed_offset == m.offset + 1  # what a commit would write right now
    assert seen == [0, 1, 2, 3, 4]
    assert m.message == b"t-0-4" and m.topic == "t" and m.partition == 0


def test_offsets_below_the_consumed_offset_are_skipped() -> None:
    queue, info, stream = setup(consumed=5)
    queue.put(chunk(info, range(2, 8), fetch_offset=2))  # a redelivery overlapping the past
    queue.put(chunk(info, range(3, 6), fetch_offset=3))  # entirely consumed already
    queue.put(chunk(info, range(8, 10), fetch_offset=8))
    queue.put_shutdown()
    assert [m.offset for m in stream] == [5, 6, 7, 8, 9]
    assert info.consumed_offset == 10


def test_a_chunk_past_the_consumed_offset_moves_it_and_logs_possible_loss(
        caplog: pytest.LogCaptureFixture) -> None:
    queue, info, stream = setup(consumed=3)
    queue.put(chunk(info, range(7, 9), fetch_offset=7))
    it = iter(stream)
    with caplog.at_level(logging.ERROR, logger="zkconsumer.datapath.stream"):
        assert next(it).offset == 7
    assert "consumed offset: 3 doesn't match fetch offset: 7" in caplog.text
    assert "Consumer may lose data" in caplog.text


def test_has_next_does_not_advance_the_consumed_offset_next_does() -> None:
    queue, info, stream = setup(consumed=10)
    queue.put(chunk(info, range(10, 12)))
    it = stream.iterator()
    assert it.state is IteratorState.NOT_READY
    assert it.has_next()
    assert it.state is IteratorState.READY
    assert info.consumed_offset == 10
    assert next(it).offset == 10
    assert info.consumed_offset == 11
    assert it.has_next() and info.consumed_offset == 11
    assert next(it).offset == 11 and info.consumed_offset == 12


def test_timeout_raises_and_the_iterator_keeps_working() -> None:
    queue, info, stream = setup(timeout_ms=100)
    it = iter(stream)
    started = time.monotonic()
    with pytest.raises(ConsumerTimeoutException, match="consumer.timeout.ms=100"):
        next(it)
    assert time.monotonic() - started >= 0.09
    with pytest.raises(ConsumerTimeoutException):  # again: still usable, still empty
        next(it)
    queue.put(chunk(info, range(0, 2)))
    assert [next(it).offset, next(it).offset] == [0, 1]
    with pytest.raises(ConsumerTimeoutException):  # a timeout after a chunk ran out
        next(it)
    queue.put(chunk(info, [2]))
    assert next(iter(stream)).offset == 2  # iter(stream) is the same iterator
    assert iter(stream) is it


def test_timeout_in_a_for_loop_then_resume() -> None:
    queue, info, stream = setup(timeout_ms=50)
    queue.put(chunk(info, range(0, 3)))
    got = []
    with pytest.raises(ConsumerTimeoutException):
        for m in stream:
            got.append(m.offset)
    queue.put(chunk(info, range(3, 4)))
    queue.put_shutdown()
    got += [m.offset for m in stream]
    assert got == [0, 1, 2, 3]


def test_shutdown_ends_iteration_for_good() -> None:
    queue, info, stream = setup(timeout_ms=50)
    queue.put(chunk(info, range(0, 2)))
    queue.put_shutdown()
    assert [m.offset for m in stream] == [0, 1]
    it = iter(stream)
    assert it.state is IteratorState.DONE
    queue.put(chunk(info, range(2, 4)))  # nothing after the end is ever returned
    with pytest.raises(StopIteration):
        next(it)
    assert list(stream) == []
    assert not it.has_next()


def test_shutdown_wakes_a_blocked_iterator() -> None:
    queue, _info, stream = setup(timeout_ms=-1)
    result: list[object] = []
    reader = threading.Thread(target=lambda: result.append(list(stream)))
    reader.start()
    queue.put_shutdown()
    reader.join(WAIT_S)
    assert not reader.is_alive() and result == [[]]


def test_clear_drops_the_rest_of_the_current_chunk() -> None:
    queue, info, stream = setup()
    queue.put(chunk(info, range(0, 5)))
    queue.put(chunk(info, range(5, 7)))
    it = iter(stream)
    assert [next(it).offset, next(it).offset] == [0, 1]
    stream.clear()
    assert info.consumed_offset == 2  # what was returned stays consumed, nothing more
    assert next(it).offset == 5  # 2..4 were dropped: the next chunk follows
    assert info.consumed_offset == 6


def test_clear_before_the_first_message_keeps_the_offset() -> None:
    queue, info, stream = setup(consumed=4)
    queue.put(chunk(info, range(4, 8)))
    it = stream.iterator()
    assert it.has_next()
    stream.clear()
    assert info.consumed_offset == 4
    queue.put(chunk(info, range(4, 6)))
    assert next(it).offset == 4


def test_counters_are_exact_mid_chunk_and_after() -> None:
    queue, info, stream = setup(consumed=1)
    queue.put(chunk(info, range(0, 4), fetch_offset=0))  # offset 0 is skipped
    it = iter(stream)
    next(it)
    assert (info.messages_consumed, info.bytes_consumed) == (1, len(b"t-0-1"))
    next(it)
    next(it)
    assert info.messages_consumed == 3
    assert info.bytes_consumed == 3 * len(b"t-0-1")
    queue.put(chunk(info, [4]))
    next(it)
    assert info.messages_consumed == 4


def test_lag_is_high_watermark_minus_consumed_offset() -> None:
    queue, info, stream = setup()
    assert info.lag is None
    info.high_watermark = 5
    queue.put(chunk(info, range(0, 5)))
    it = iter(stream)
    next(it)
    next(it)
    assert info.lag == 3


def test_reset_consume_offset_wins_over_the_chunk_in_progress() -> None:
    queue, info, stream = setup()
    queue.put(chunk(info, range(0, 4)))
    it = iter(stream)
    next(it)
    info.reset_consume_offset(100)  # e.g. an out-of-range reset to "largest"
    assert info.consumed_offset == 100
    next(it)
    assert info.consumed_offset == 100
    queue.put(chunk(info, range(100, 101), fetch_offset=100))
    # The rest of the chunk is still returned (the reset takes effect at the next chunk)...
    assert [next(it).offset, next(it).offset] == [2, 3]
    assert info.consumed_offset == 100  # ...without moving the offset back
    assert next(it).offset == 100
    assert info.consumed_offset == 101


def test_one_queue_can_carry_several_partitions() -> None:
    queue = ChunkQueue(4, "t-0")
    p0 = PartitionTopicInfo("t", 0, queue, 0, 0, "c-0")
    p1 = PartitionTopicInfo("u", 1, queue, 7, 7, "c-0")
    stream = KafkaStream(queue, -1)
    queue.put(chunk(p0, range(0, 2)))
    queue.put(chunk(p1, range(7, 9)))
    queue.put(chunk(p0, range(2, 3)))
    queue.put_shutdown()
    assert [(m.topic, m.partition, m.offset) for m in stream] == [
        ("t", 0, 0), ("t", 0, 1), ("u", 1, 7), ("u", 1, 8), ("t", 0, 2)]
    assert (p0.consumed_offset, p1.consumed_offset) == (3, 9)


def test_a_full_queue_blocks_the_putter_until_there_is_room() -> None:
    queue, info, _stream = setup(capacity=1)
    assert queue.put(chunk(info, [0]))
    done = threading.Event()

    def put_second() -> None:
        queue.put(chunk(info, [1]))
        done.set()

    putter = threading.Thread(target=put_second)
    putter.start()
    assert not done.wait(0.2)  # blocked: back-pressure
    assert len(queue) == 1
    assert queue.get(1.0) is not None
    assert done.wait(WAIT_S)
    putter.join(WAIT_S)
    assert len(queue) == 1


def test_a_blocked_put_gives_up_when_its_stop_event_is_set() -> None:
    queue, info, _stream = setup(capacity=1)
    queue.put(chunk(info, [0]))
    stop = threading.Event()
    results: list[bool] = []
    putter = threading.Thread(target=lambda: results.append(queue.put(chunk(info, [1]), stop)))
    putter.start()
    stop.set()
    queue.wake_putters()
    putter.join(WAIT_S)
    assert results == [False]
    assert len(queue) == 1  # nothing was added
    queue.clear()
    assert queue.put(chunk(info, [2]), stop) is False  # a set event refuses at once
    assert len(queue) == 0


def test_clear_empties_the_queue_and_shutdown_ignores_the_bound() -> None:
    queue, info, stream = setup(capacity=1)
    queue.put(chunk(info, [0]))
    queue.put_shutdown()  # must never block a shutdown
    assert len(queue) == 2
    assert queue.clear() == 2
    queue.put_shutdown()
    assert list(stream) == []


def test_message_and_metadata_is_an_immutable_record() -> None:
    m = MessageAndMetadata("t", 1, 5, b"k", b"v", 123)
    assert m == MessageAndMetadata(topic="t", partition=1, offset=5, key=b"k", message=b"v",
                                   timestamp_ms=123)
    assert MessageAndMetadata("t", 1, 5, None, None).timestamp_ms is None
    with pytest.raises(AttributeError):
        m.offset = 6  # type: ignore[misc]
    assert "offset=5" in repr(m)


def test_records_are_built_from_the_client_messages_as_they_are_taken() -> None:
    # A redelivered prefix (offsets 3, 4 were consumed), a compaction gap, a key, a tombstone
    # and a message without a timestamp, as librdkafka hands them over.
    queue, info, stream = setup(consumed=5)
    raw = [Message(topic="t", partition=0, offset=o, key=b"k%d" % o, value=b"v" * o,
                   timestamp=(TIMESTAMP_CREATE_TIME, 1000 + o)) for o in (3, 4, 5, 8)]
    raw.append(Message(topic="t", partition=0, offset=9, key=b"gone", value=None))
    queue.put(FetchedDataChunk(raw, info, 3))
    it = stream.iterator()
    assert it.has_next()
    assert info.consumed_offset == 5 and info.messages_consumed == 0  # nothing handed out yet
    handed = []
    for _ in range(3):
        m = next(it)
        handed.append(m)
        # The offset a commit would write is always right after the last record handed out.
        assert info.consumed_offset == m.offset + 1
        assert info.messages_consumed == len(handed)
        assert info.bytes_consumed == sum(len(h.message or b"") for h in handed)
    assert [(m.offset, m.key, m.message, m.timestamp_ms) for m in handed] == [
        (5, b"k5", b"v" * 5, 1005), (8, b"k8", b"v" * 8, 1008), (9, b"gone", None, None)]
    assert all((m.topic, m.partition) == ("t", 0) for m in handed)
    queue.put_shutdown()
    assert list(stream) == []
    assert (info.consumed_offset, info.messages_consumed, info.bytes_consumed) == (10, 3, 13)


def test_a_rebalance_clear_mid_chunk_hands_out_nothing_stale() -> None:
    queue, info, stream = setup()
    queue.put(chunk(info, range(0, 1000)))
    it = iter(stream)
    assert [next(it).offset for _ in range(10)] == list(range(10))
    stream.clear()  # what the rebalance does after stopping the fetchers
    queue.clear()
    assert info.consumed_offset == 10  # the commit covers exactly what was handed out
    queue.put_shutdown()
    assert list(it) == []  # not one message of the dropped chunk
    assert info.consumed_offset == 10 and info.messages_consumed == 10


def test_a_record_behaves_as_the_tuple_of_its_six_values() -> None:
    queue, info, stream = setup()
    queue.put(chunk(info, [7]))
    queue.put_shutdown()
    [m] = list(stream)  # built from a client Message
    same = MessageAndMetadata("t", 0, 7, None, b"t-0-7", 1)
    assert m == same and hash(m) == hash(same) and not (m != same)
    assert m == ("t", 0, 7, None, b"t-0-7", 1)
    assert m != same._replace(offset=8) and m < same._replace(offset=8)
    assert repr(m) == repr(same) == ("MessageAndMetadata(topic='t', partition=0, offset=7, "
                                     "key=None, message=b't-0-7', timestamp_ms=1)")
    topic, partition, offset, key, value, timestamp_ms = m
    assert (topic, partition, offset, key, value, timestamp_ms) == tuple(same)
    assert m[2] == 7 and m[-1] == 1 and m[:2] == ("t", 0) and len(m) == 6
    match m:
        case MessageAndMetadata(_, _, matched_offset, _, _, matched_timestamp):
            assert (matched_offset, matched_timestamp) == (7, 1)
    assert m._asdict()["timestamp_ms"] == 1 and m._fields[-1] == "timestamp_ms"
    copy = pickle.loads(pickle.dumps(m))  # the client's Message itself is not picklable
    assert copy == m and type(copy) is MessageAndMetadata and copy.timestamp_ms == 1
    with pytest.raises(AttributeError):
        m.message = b"x"  # type: ignore[misc]


