"""The project's exception types: one root, messages that name the property, path or value."""

from __future__ import annotations


class ZkConsumerError(Exception):
    """Root of every exception this package raises on purpose."""

    retriable: bool = False


class InvalidConfig(ZkConsumerError, ValueError):
    """A configuration property has a bad value; the message names the property and the value."""


class InvalidName(ZkConsumerError, ValueError):
    """A group or topic name that Kafka would reject; raised before any znode path is built."""


class CorruptZnode(ZkConsumerError, ValueError):
    """A znode holds data that cannot be decoded; the message names the path and the value."""


class UnreadableRegistration(CorruptZnode):
    """A member registration this member cannot plan with (the original's rebalance throws).

    The attempt fails and is retried; after ``rebalance.max.retries`` attempts the rebalance
    ends in :class:`ConsumerRebalanceFailedException`, as a JVM member's does.
    """

    retriable = True


class ServerError(ZkConsumerError, RuntimeError):
    """An embedded server (ZooKeeper or broker) could not be started or did not become ready."""


class JavaNotFound(ServerError):
    """No ``java`` executable: the embedded ZooKeeper needs a Java 17+ runtime."""


class ZooKeeperUnavailable(ZkConsumerError, ConnectionError):
    """ZooKeeper could not be reached within the connection timeout."""

    retriable = True


class BrokerUnavailable(ZkConsumerError, ConnectionError):
    """No Kafka-protocol broker answered."""

    retriable = True


class TopicError(ZkConsumerError):
    """Creating, describing or changing a topic failed."""


class ConsumerTimeoutException(ZkConsumerError):
    """No message arrived within ``consumer.timeout.ms``; the iterator stays usable."""

    retriable = True


class ConsumerRebalanceFailedException(ZkConsumerError):
    """Every rebalance attempt failed (``rebalance.max.retries`` in total), as in the original."""


class MessageSizeTooLargeException(ZkConsumerError):
    """A message larger than ``fetch.message.max.bytes``: the stream's iterator cannot return it.

    As the original's ``ConsumerIterator``, raised (naming topic, partition and offset) each
    time the stream reaches that message, until the fetch size is raised.
    """


class MessageStreamsExistException(ZkConsumerError):
    """``create_message_streams`` may be called once per connector, as in the original."""
