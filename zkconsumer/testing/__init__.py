"""Real servers the project starts itself: ZooKeeper (standalone or quorum) and a broker
(the embedded Tansu, or Apache Kafka from a Kafka directory: ZooKeeper mode or KRaft)."""

from zkconsumer.extras import require

require("embedded", "zkconsumer.testing")  # before anything that needs it


from zkconsumer.testing.broker import EmbeddedBroker
from zkconsumer.testing.kafka import KafkaBroker, shared_kafka_home
from zkconsumer.testing.kraft import KraftBroker
from zkconsumer.testing.zookeeper import EmbeddedEnsemble, EmbeddedZooKeeper, find_java

__all__ = ["EmbeddedBroker", "EmbeddedEnsemble", "EmbeddedZooKeeper", "KafkaBroker", "KraftBroker",
           "find_java", "shared_kafka_home"]
