"""Broker, topic and partition-state znode values: Kafka 0.10's JSON, and clear errors."""

import pytest

from zkconsumer.errors import CorruptZnode
from zkconsumer.zk import codec


def test_broker_registration_round_trip_uses_legacy_fields():
    reg = codec.BrokerRegistration(0, "127.0.0.1", 9092, ("PLAINTEXT://127.0.0.1:9092",),
                                   timestamp_ms=1497000000000)
    raw = codec.encode_broker(reg)
    assert raw == (b'{"version":2,"host":"127.0.0.1","port":9092,'
                   b'"endpoints":["PLAINTEXT://127.0.0.1:9092"],"jmx_port":-1,'
                   b'"timestamp":"1497000000000"}')
    assert codec.decode_broker("/brokers/ids/0", 0, raw) == reg


def test_v1_registration_without_endpoints_uses_host_and_port():
    raw = b'{"version":1,"host":"h","port":9092,"jmx_port":9999,"timestamp":"2233345666"}'
    assert codec.decode_broker("/brokers/ids/1", 1, raw).bootstrap == "h:9092"


def test_first_plaintext_endpoint_wins():
    raw = (b'{"version":4,"host":"h","port":1,"endpoints":["SSL://s:9093","PLAINTEXT://p:9092"],'
           b'"jmx_port":-1,"timestamp":"1"}')
    assert codec.decode_broker("/brokers/ids/1", 1, raw).bootstrap == "p:9092"


@pytest.mark.parametrize("raw", [b"", b"not json", b"[]", b'{"version":0}',
                                 b'{"version":2,"endpoints":"x"}', b"\xff\xfe"])
def test_corrupt_broker_registration_names_the_path(raw):
    with pytest.raises(CorruptZnode, match="/brokers/ids/3"):
        codec.decode_broker("/brokers/ids/3", 3, raw)


def test_topic_assignment_round_trip_sorts_partitions_numerically():
    raw = codec.encode_topic_assignment({10: [0], 2: [0], 0: [1, 0]})
    assert raw == b'{"version":1,"partitions":{"0":[1,0],"2":[0],"10":[0]}}'
    assert list(codec.decode_topic_assignment("/brokers/topics/t", raw)) == [0, 2, 10]


@pytest.mark.parametrize("raw", [b'{"version":1}', b'{"partitions":{"x":[0]}}',
                                 b'{"partitions":[]}', b"garbage"])
def test_corrupt_topic_znode_names_the_path(raw):
    with pytest.raises(CorruptZnode, match="/brokers/topics/t"):
        codec.decode_topic_assignment("/brokers/topics/t", raw)


def test_partition_state_round_trip():
    state = codec.PartitionState(leader=2, isr=(2, 1), leader_epoch=4, controller_epoch=3)
    raw = codec.encode_partition_state(state)
    assert raw == b'{"controller_epoch":3,"leader":2,"version":1,"leader_epoch":4,"isr":[2,1]}'
    assert codec.decode_partition_state("/s", raw) == state


def test_partition_state_without_leader_is_corrupt():
    with pytest.raises(CorruptZnode, match="leader"):
        codec.decode_partition_state("/brokers/topics/t/partitions/0/state", b'{"isr":[1]}')
