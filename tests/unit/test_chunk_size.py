"""fetch.message.max.bytes: chunks cut at that many value bytes; an oversized message raises."""

from __future__ import annotations

import threading

import pytest

from zkconsumer.datapath.chunks import ChunkQueue, FetchedDataChunk
from zkconsumer.datapath.fetcher_thread import split_chunks
from zkconsumer.errors import MessageSizeTooLargeException


class Msg:
    """The two things the fetcher reads of a client message: its offset and value size."""

    def __init__(self, offset: int, size: int) -> None:
        self._offset, self._size = offset, size

    def offset(self) -> int:
        return self._offset

    def __len__(self) -> int:
        return self._size


def test_pieces_hold_at_most_the_fetch_size_and_an_oversized_message_stands_alone():
    msgs = [Msg(i, s) for i, s in enumerate([4, 4, 4, 9, 30, 1, 1, 10])]
    pieces = split_chunks(msgs, 10)
    assert [([m.offset() for m in p], size) for p, size in pieces] == [
        ([0, 1], 8), ([2], 4), ([3], 9), ([4], 30), ([5, 6], 2), ([7], 10)]


def test_queued_bytes_count_what_waits_and_keep_the_peak():
    q = ChunkQueue(2)
    q.put(FetchedDataChunk([], None, 0, 300))
    q.put(FetchedDataChunk([], None, 0, 200))
    assert (q.queued_bytes, q.peak_bytes) == (500, 500)
    q.get(0)
    q.put(FetchedDataChunk([], None, 0, 100))
    assert (q.queued_bytes, q.peak_bytes) == (300, 500)
    q.clear()
    assert q.queued_bytes == 0


def test_an_oversized_chunk_makes_the_stream_raise_with_topic_partition_and_offset():
    from zkconsumer.datapath.position import PartitionTopicInfo
    from zkconsumer.datapath.stream import KafkaStream

    q = ChunkQueue(4)
    info = PartitionTopicInfo("orders", 3, q, 41, 41, "c-0")
    for _ in range(2):
        q.put(FetchedDataChunk([], info, 41, 0, oversized=True), threading.Event())
    it = iter(KafkaStream(q, 100, "c"))
    for _ in range(2):  # every time the stream reaches it, as the original's iterator
        with pytest.raises(MessageSizeTooLargeException,
                           match="on topic orders partition 3 at fetch offset 41"):
            next(it)
