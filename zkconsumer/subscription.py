"""A connector's subscription: its TopicCount plus the queues and streams it feeds.

Mirrors the original's ``topicThreadIdAndQueues`` (spec detailed §3.3): a static subscription
has one bounded queue and one ``KafkaStream`` per (topic, thread); a wildcard subscription has
``num_streams`` queues shared by every matching topic, thread ``k`` of each topic feeding queue
``k``. The wildcard's topic set is refreshed by the rebalancer when ``/brokers/topics`` changes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

from zkconsumer.config import ConsumerConfig
from zkconsumer.datapath.chunks import ChunkQueue
from zkconsumer.datapath.stream import KafkaStream
from zkconsumer.identity import thread_number
from zkconsumer.topic_filter import (
    StaticTopicCount,
    TopicCount,
    TopicFilter,
    WildcardTopicCount,
)

log = logging.getLogger(__name__)


class Subscription:
    """Queues and streams of one connector, keyed as the original keyed them."""

    def __init__(self, topic_count: TopicCount, config: ConsumerConfig) -> None:
        self.topic_count = topic_count
        self._lock = threading.Lock()
        self._topics: tuple[str, ...] = tuple(topic_count.topics())
        capacity = config.queued_max_message_chunks
        timeout, client = config.consumer_timeout_ms, config.client_id
        self._queues: dict[tuple[str, str], ChunkQueue] = {}
        self.streams_by_topic: dict[str, list[KafkaStream]] = {}
        self.wildcard_queues: list[ChunkQueue] = []
        self.wildcard_streams: list[KafkaStream] = []
        if isinstance(topic_count, StaticTopicCount):
            for topic, threads in topic_count.thread_ids_per_topic().items():
                streams = []
                for tid in sorted(threads, key=thread_number):
                    queue = ChunkQueue(capacity, name=f"{topic}/{tid}")
                    self._queues[(topic, tid)] = queue
                    streams.append(KafkaStream(queue, timeout, client))
                self.streams_by_topic[topic] = streams
        else:
            for k in range(topic_count.num_streams):
                queue = ChunkQueue(capacity, name=f"{topic_count.topic_filter.regex}/{k}")
                self.wildcard_queues.append(queue)
                self.wildcard_streams.append(KafkaStream(queue, timeout, client))

    @classmethod
    def static(cls, consumer_id: str, topic_count_map: dict[str, int],
               config: ConsumerConfig) -> Subscription:
        return cls(StaticTopicCount.of(consumer_id, topic_count_map), config)

    @classmethod
    def wildcard(cls, consumer_id: str, topic_filter: TopicFilter, num_streams: int,
                 config: ConsumerConfig) -> Subscription:
        return cls(WildcardTopicCount(consumer_id, topic_filter, num_streams,
                                      config.exclude_internal_topics), config)

    @property
    def is_wildcard(self) -> bool:
        return isinstance(self.topic_count, WildcardTopicCount)

    @property
    def topics(self) -> tuple[str, ...]:
        """Static: the subscribed topics; wildcard: the matching topics last seen."""
        return self._topics

    def update_topics(self, all_topics: Iterable[str]) -> tuple[list[str], list[str]]:
        """Wildcard ``handleTopicEvent``: returns (added, deleted) matching topics."""
        updated = self.topic_count.topics(all_topics)
        with self._lock:
            added = sorted(set(updated) - set(self._topics))
            deleted = sorted(set(self._topics) - set(updated))
            self._topics = tuple(updated)
        return added, deleted

    def queue_for(self, topic: str, tid: str) -> ChunkQueue:
        if self.is_wildcard:
            return self.wildcard_queues[thread_number(tid)]
        return self._queues[(topic, tid)]

    def queues(self) -> list[ChunkQueue]:
        """Every distinct queue (KAFKA-1764: one shutdown marker per queue)."""
        return list(self._queues.values()) if not self.is_wildcard else list(self.wildcard_queues)

    def streams(self) -> list[KafkaStream]:
        if self.is_wildcard:
            return list(self.wildcard_streams)
        return [s for streams in self.streams_by_topic.values() for s in streams]
