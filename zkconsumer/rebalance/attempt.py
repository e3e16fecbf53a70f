"""The ZooKeeper side of a rebalance: registration, one attempt's reads and writes, rollback.

:class:`RebalanceExecutor` is what the rebalancer thread drives. One :meth:`attempt` follows the
original's ``ZKRebalancerListener.rebalance`` step by step (spec detailed §3.6):

1. re-read this member's registration (missing -> the attempt fails) and the broker list; with no
   broker, watch ``/brokers/ids`` and succeed owning nothing (KAFKA-969);
2. close fetchers: stop them, clear the queues and the iterators' current chunks, and commit if
   ``auto.commit.enable`` (the partitions are still ours, so the next owner starts there);
3. ``before_releasing_partitions``, then delete every owner znode we hold (eager release);
4. read the group (every member's registration), the partitions of every subscribed topic, and
   plan with the legacy assignor (``rebalance/plan.py``);
5. read the committed offsets of our new partitions;
6. create the owner znodes in partition order, none skipped; an existing znode holding our own
   thread id is adopted if this session created it; any other is a conflict, and then every
   znode created in this attempt is deleted and the attempt fails;
7. install the new generation, ``before_starting_fetchers``, start the fetchers.

Owner claims run in the session the attempt started in: if it expires, the attempt aborts
instead of claiming in a new session next to claims that died with the old one.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable

from kazoo.exceptions import NodeExistsError, NoNodeError, SessionExpiredError
from kazoo.security import Permissions

from zkconsumer.config import ConsumerConfig
from zkconsumer.datapath.position import PartitionTopicInfo
from zkconsumer.errors import CorruptZnode, InvalidConfig, InvalidName
from zkconsumer.events import EventBus
from zkconsumer.membership.mode import Fetchers
from zkconsumer.membership.ownership import Ownership, assignment_by_topic
from zkconsumer.membership.rebalance_listener import ConsumerRebalanceListener
from zkconsumer.membership.triggers import CHILDREN, DATA, Trigger, WatchSet
from zkconsumer.metrics import RebalanceMetrics
from zkconsumer.offsets.store import OffsetStore
from zkconsumer.rebalance.ordered_claims import OwnerClaims
from zkconsumer.rebalance.plan import (
    Assignor,
    GroupView,
    ReleasePlan,
    consumers_per_topic,
    decision_fields,
    plan_rebalance,
    plan_release,
)
from zkconsumer.rebalance.unreadable import handle_unreadable
from zkconsumer.subscription import Subscription
from zkconsumer.topic_filter import needs_topic_list, topic_count_from_registration
from zkconsumer.zk import codec, paths
from zkconsumer.zk.corrupt import CorruptionReporter
from zkconsumer.zk.session import ZkSession

log = logging.getLogger(__name__)


class RebalanceExecutor:
    """Carries out rebalances for one connector; every method runs on the rebalancer thread."""

    def __init__(self, *, consumer_id: str, config: ConsumerConfig, session: ZkSession,
                 subscription: Subscription, ownership: Ownership, offsets: OffsetStore,
                 fetchers: Fetchers, watches: WatchSet, assignor: Assignor, events: EventBus,
                 metrics: RebalanceMetrics, listener: ConsumerRebalanceListener | None,
                 is_shutting_down: Callable[[], bool]) -> None:
        self.consumer_id = consumer_id
        self.group = config.group_id
        self.config = config
        self.session = session
        self.subscription = subscription
        self.ownership = ownership
        self.offsets = offsets
        self.fetchers = fetchers
        self.watches = watches
        self.assignor = assignor
        self.events = events
        self.metrics = metrics
        self.listener = listener
        self._is_shutting_down = is_shutting_down
        self.corrupt = CorruptionReporter(consumer_id, events.emit)
        self.claims = OwnerClaims(consumer_id=consumer_id, group=self.group, session=session,
                                  corrupt=self.corrupt, metrics=metrics, events=events)
        self._acl_checked = False
        self._namespace_checked = False

    def is_shutting_down(self) -> bool:
        return self._is_shutting_down()

    # --- registration and watches --------------------------------------------------------------

    def register(self) -> None:
        """``registerConsumerInZK``: the ephemeral registration, session-checked (0.9+).

        Its ``ZKCheckedEphemeral.createRecursive`` created each ancestor first, every time (one
        ``create`` each, answered NodeExists once the group exists): part of what a join costs.
        """
        path = paths.consumer_registration(self.group, self.consumer_id)
        data = codec.encode_registration(
            self.subscription.topic_count.registration(int(time.time() * 1000)))
        for ancestor in (paths.CONSUMERS, paths.group(self.group), paths.consumer_ids(self.group)):
            with contextlib.suppress(NodeExistsError):
                self.session.create(ancestor, b"")
        self.session.create_checked_ephemeral(path, data)
        log.info("[%s] registered %s", self.consumer_id, path)
        if self.config.zookeeper_acl != "open" and not self._acl_checked:
            self._acl_checked = True
            self._warn_if_group_unprotected()
        self.events.emit("registered", path=path, session_id=self.session.session_id)

    def _warn_if_group_unprotected(self) -> None:
        """A group created before ACLs were configured keeps open parents: say so once.

        ZooKeeper checks deletes and creates against the parent's ACL, so this member's own
        secured znodes are still deletable by anyone until the group is secured.
        """
        for path in (paths.group(self.group), paths.consumer_ids(self.group)):
            open_to_world = [a for a in self.session.get_acls(path)
                             if a.id.scheme == "world" and a.perms & ~Permissions.READ]
            if open_to_world:
                log.warning("[%s] %s was created without ACLs: anyone may still delete or add "
                            "znodes in group %s; secure it with `zkconsumer groups secure "
                            "--group %s` (see docs/reliability.md)", self.consumer_id, path,
                            self.group, self.group)
                self.events.emit("group_unprotected", path=path)
                return

    def subscribe(self) -> None:
        """The original's listeners: group children, each topic's data, wildcard topic list."""
        self.watches.watch(paths.consumer_ids(self.group), CHILDREN, Trigger.MEMBERSHIP)
        if self.subscription.is_wildcard:
            if self.session.exists(paths.BROKER_TOPICS) is None:
                try:
                    self.session.create(paths.BROKER_TOPICS, b"")
                except NodeExistsError:
                    pass
            self.watches.watch(paths.BROKER_TOPICS, CHILDREN, Trigger.TOPICS)
        for topic in self.subscription.topics:
            self.watches.watch(paths.topic(topic), DATA, Trigger.TOPIC_DATA)

    def prepare(self, reasons: set[Trigger]) -> set[Trigger]:
        """Work before a rebalance; returns the reasons that call for one (empty: none)."""
        need = reasons - {Trigger.REARM, Trigger.TOPICS}
        if Trigger.NEW_SESSION in reasons:
            # handleNewSession: forget ownership without committing, register again.
            self.ownership.clear()
            self.register()
            self.watches.invalidate()
        # SESSION_LOST: stop_delivery() ran already; a rebalance owns the partitions again.
        need |= self.watches.arm() - {Trigger.TOPICS}
        if self.subscription.is_wildcard and self._refresh_wildcard_topics():
            need.add(Trigger.TOPICS)
        return need

    def stop_delivery(self) -> None:
        """``stop-fetchers`` policy, on a session presumed lost (any thread but kazoo's).

        Curator's LOST: cut off for a whole session timeout, others may own our partitions now.
        Stop fetching and drop buffered chunks (no zombie window); no ZooKeeper call here, so it
        works while the rebalancer thread is blocked waiting for ZooKeeper.
        """
        log.warning("[%s] session presumed lost: stopping fetchers "
                    "(zkconsumer.session.lost.policy=stop-fetchers)", self.consumer_id)
        self._stop_fetchers_and_clear()
        self.events.emit("fetchers_stopped_on_session_loss")

    def _refresh_wildcard_topics(self) -> bool:
        """``handleTopicEvent``: rebalance when the set of matching topics changed."""
        all_topics = self._legal_topics(self.watches.last_value(paths.BROKER_TOPICS) or ())
        added, deleted = self.subscription.update_topics(all_topics)
        if added:
            log.info("[%s] Topic event: added topics = %s", self.consumer_id, added)
        if deleted:
            log.info("[%s] Topic event: deleted topics = %s", self.consumer_id, deleted)
        for topic in self.subscription.topics:
            self.watches.watch(paths.topic(topic), DATA, Trigger.TOPIC_DATA)
        self.watches.arm()
        return bool(added or deleted)

    # --- one attempt -----------------------------------------------------------------------------

    def attempt(self, number: int) -> bool:
        session_id = self.session.session_id
        if session_id is None:
            raise SessionExpiredError("no ZooKeeper session at the start of the attempt")
        # syncedRebalance reads the Cluster (every broker) before each attempt, then rebalance()
        # reads the registration (constructTopicCount) and getAllBrokersInCluster again: the
        # herd's reads are the original's, each of them.
        self._read_brokers()
        my_reg = self._own_registration()
        if not self._read_brokers():
            log.warning("[%s] no brokers found when trying to rebalance.", self.consumer_id)
            self.watches.watch(paths.BROKER_IDS, CHILDREN, Trigger.BROKERS)
            self.watches.arm()
            return True
        self.close_fetchers()
        release = plan_release(self.ownership.current.infos)
        if self.listener is not None:
            self.listener.before_releasing_partitions(release.listener_map)
        self._release(release)
        # AssignmentContext reads the registration once more (its own constructTopicCount).
        my_reg = self._own_registration()
        view = self._read_view(my_reg)
        my_count = topic_count_from_registration(self.consumer_id, my_reg,
                                                 self.config.exclude_internal_topics)
        my_threads = my_count.thread_ids_per_topic(view.all_topics)
        plan = plan_rebalance(view, my_threads, self.assignor,
                              self.config.partition_assignment_strategy)
        self.events.emit("assignment_decided", **decision_fields(plan, view))
        offsets = self.offsets.read(plan.offsets_to_read)
        if self.is_shutting_down():
            return False
        infos = {
            tp: PartitionTopicInfo(tp.topic, tp.partition,
                                   self.subscription.queue_for(tp.topic, tid),
                                   offsets[tp], offsets[tp], tid)
            for tp, tid in plan.claims.items()
        }
        self.offsets.checkpoint(offsets)
        if plan.claims and not self._namespace_checked:
            # Kafka's ZkPath.checkNamespace: one exists("/") before its first owner claim.
            self._namespace_checked = self.session.exists("/") is not None
        if not self.claims.claim(plan.claims, session_id):
            return False
        self.ownership.install(infos, session_id)
        if self.listener is not None:
            self.listener.before_starting_fetchers(self.consumer_id, plan.listener_assignment)
        if self.is_shutting_down():
            return False
        self.fetchers.start_connections(list(infos.values()))
        log.info("[%s] Consumer %s selected partitions : %s", self.consumer_id,
                 self.consumer_id, sorted(infos.values(), key=lambda i: (i.partition, i.topic)))
        return True

    def _own_registration(self) -> codec.ConsumerRegistration:
        """Re-read this member's registration; a corrupted one is written back as it was.

        The znode is this member's own ephemeral: whoever overwrote it, the subscription it
        must describe is known here, so repairing it is safe (a missing one still fails).
        """
        path = paths.consumer_registration(self.group, self.consumer_id)
        data, _ = self.session.get(path)
        try:
            return codec.decode_registration(path, data)
        except CorruptZnode as exc:
            self.corrupt.report(path, data, exc, "writing this member's registration again")
            reg = self.subscription.topic_count.registration(int(time.time() * 1000))
            self.session.set(path, codec.encode_registration(reg))
            return reg

    def _legal_topics(self, names: Iterable[str]) -> list[str]:
        """Topic names that can become paths; a foreign child of /brokers/topics is skipped."""
        legal = []
        for name in names:
            try:
                legal.append(paths.validate_topic(name))
            except InvalidName as exc:
                self.corrupt.report(paths.child(paths.BROKER_TOPICS, name), None, exc,
                                    "ignoring the topic")
        return sorted(legal)

    def after_failed_attempt(self) -> None:
        """``closeFetchersForQueues`` over every queue after a failed attempt."""
        self.close_fetchers()

    def describe_assignment(self) -> dict[str, dict[int, str]]:
        return assignment_by_topic(self.ownership.current.assignment())

    def close_fetchers(self) -> None:
        self._stop_fetchers_and_clear()
        if self.config.auto_commit_enable:
            log.debug("[%s] Committing all offsets after clearing the fetcher queues",
                      self.consumer_id)
            self.offsets.commit(self.ownership.current.infos.values())

    def _stop_fetchers_and_clear(self) -> None:
        self.fetchers.stop_connections()
        for queue in self.subscription.queues():
            queue.clear()
        for stream in self.subscription.streams():
            stream.clear()

    def _read_brokers(self) -> list[codec.BrokerRegistration]:
        """``getAllBrokersInCluster``: sorted ids, then each broker; vanished ones skipped."""
        try:
            ids = self.session.get_children(paths.BROKER_IDS)
        except NoNodeError:
            return []
        brokers = []
        for bid in sorted(ids, key=lambda b: int(b) if b.isdigit() else -1):
            if not bid.isdigit():
                continue
            path = paths.broker(int(bid))
            try:
                data, _ = self.session.get(path)
                brokers.append(codec.decode_broker(path, int(bid), data))
            except NoNodeError:
                continue
            except CorruptZnode as exc:
                self.corrupt.report(path, data, exc, "ignoring the broker")
        return brokers

    def _release(self, release: ReleasePlan) -> None:
        """``releasePartitionOwnership``: delete every owner znode we hold.

        Deviation: each delete runs in the session that claimed the znode, never in a later
        one. Once that session has expired its znodes died with it, and a delete by path
        (even one already waiting for a reconnection) would remove whatever claim another
        member has made there since, leaving that member fetching an unowned partition.
        """
        gen = self.ownership.clear()
        self.offsets.barrier()  # no commit of the released partitions after this point
        if gen.session_id is None or not release.partitions:
            return
        owners = (paths.owner(self.group, tp.topic, tp.partition) for tp in release.partitions)
        if not self.session.delete_all_in_session(owners, gen.session_id):
            log.info("[%s] not deleting %d owner znode(s) of expired session 0x%x",
                     self.consumer_id, len(release.partitions), gen.session_id)

    def _unreadable(self, path: str, data: bytes | None, problem: Exception) -> None:
        handle_unreadable(self.corrupt, self.config.unreadable_registration_policy,
                          path, data, problem)

    def _read_view(self, my_reg: codec.ConsumerRegistration) -> GroupView:
        """``AssignmentContext``: every member's registration and every topic's partitions.

        Reads of a path the connector watches leave a watch, as ZkClient's reads of a path with
        listeners did (the server keeps one per session and path, so nothing fires twice).
        ``getConsumersInGroup`` lists the group a second time after ``getConsumersPerTopic``;
        its list only fed the original's roundrobin check, which the first list serves here,
        but the read is part of what every member costs the server per attempt.
        """
        ids_path = paths.consumer_ids(self.group)
        members = self.session.get_children(ids_path, watch=self.watches.callback(ids_path))
        regs: dict[str, codec.ConsumerRegistration] = {}
        for member in sorted(members):
            try:
                path = paths.consumer_registration(self.group, member)
            except InvalidName as exc:
                self._unreadable(paths.child(ids_path, member), None, exc)
                continue
            data, _ = self.session.get(path)  # a member vanishing mid-read fails the attempt
            try:
                reg = codec.decode_registration(path, data)
                for topic, count in reg.subscription:
                    if count < 1:  # the original's assignment fails on a thread-less member
                        raise CorruptZnode(
                            f"{path}: stream count for {topic!r} is {count}: no consumer thread")
                # A wildcard regex this reader cannot compile is as unusable as bad JSON.
                topic_count_from_registration(member, reg, self.config.exclude_internal_topics)
            except (CorruptZnode, InvalidConfig) as exc:
                self._unreadable(path, data, exc)
                continue
            regs[member] = reg
        self.session.get_children(ids_path, watch=self.watches.callback(ids_path))
        all_topics = None
        if needs_topic_list([*regs.values(), my_reg]):
            try:
                all_topics = self._legal_topics(self.session.get_children(paths.BROKER_TOPICS))
            except NoNodeError:
                all_topics = []
        excl = self.config.exclude_internal_topics
        partitions: dict[str, list[int]] = {}
        for topic in consumers_per_topic(regs, all_topics, excl):
            path = paths.topic(topic)
            try:
                data, _ = self.session.get(path, watch=self.watches.callback(path))
            except NoNodeError:
                partitions[topic] = []
                continue
            try:
                partitions[topic] = sorted(codec.decode_topic_assignment(path, data))
            except CorruptZnode as exc:
                self.corrupt.report(path, data, exc, "ignoring the topic")
                partitions[topic] = []
        return GroupView(regs, partitions, all_topics, excl)
