"""Real servers the project starts itself: ZooKeeper (standalone or quorum) and a broker."""

from zkconsumer.testing.broker import EmbeddedBroker
from zkconsumer.testing.zookeeper import EmbeddedEnsemble, EmbeddedZooKeeper, find_java

__all__ = ["EmbeddedBroker", "EmbeddedEnsemble", "EmbeddedZooKeeper", "find_java"]
