"""Names never escape their znode subtree; paths follow Kafka 0.10's layout."""

import pytest

from zkconsumer.errors import InvalidName
from zkconsumer.zk import paths


def test_legacy_layout_of_group_paths():
    assert paths.consumer_registration("g1", "g1_host-1-abc") == "/consumers/g1/ids/g1_host-1-abc"
    assert paths.owner("g1", "orders", 3) == "/consumers/g1/owners/orders/3"
    assert paths.offset("g1", "orders", 0) == "/consumers/g1/offsets/orders/0"
    assert paths.partition_state("orders", 2) == "/brokers/topics/orders/partitions/2/state"
    assert paths.broker(7) == "/brokers/ids/7"


@pytest.mark.parametrize(
    "bad", ["", ".", "..", "/x", "a/b", "../../brokers", "g h", "caf\u00e9", "x\x00", "a" * 250]
)
def test_illegal_group_and_topic_names_are_refused_before_a_path_exists(bad):
    with pytest.raises(InvalidName) as err:
        paths.owner(bad, "t", 0)
    assert "group" in str(err.value)
    with pytest.raises(InvalidName) as err:
        paths.topic(bad)
    assert "topic" in str(err.value)


def test_error_names_the_bad_value():
    with pytest.raises(InvalidName, match=r"'a/b'"):
        paths.validate_topic("a/b")


def test_longest_legal_name_is_accepted():
    name = "a" * paths.MAX_NAME_LENGTH
    assert paths.topic(name).endswith(name)


@pytest.mark.parametrize("bad", [-1, True, "3", 1.5])
def test_partition_must_be_a_non_negative_int(bad):
    with pytest.raises(InvalidName, match="partition"):
        paths.owner("g", "t", bad)


@pytest.mark.parametrize("bad", ["a/b", "..", ""])
def test_consumer_ids_cannot_escape_the_ids_folder(bad):
    with pytest.raises(InvalidName):
        paths.consumer_registration("g", bad)


def test_children_listed_by_zookeeper_join_without_validation_and_runs_are_validated():
    # A corrupt member id must still be reported at its real path.
    assert paths.child(paths.consumer_ids("g"), "bad/../id") == "/consumers/g/ids/bad/../id"
    assert paths.child("/", "consumers") == "/consumers"
    assert paths.spark_run("zk-range-n4-s1") == "/zkconsumer-spark/zk-range-n4-s1"
    with pytest.raises(ValueError):
        paths.spark_run("../brokers")
