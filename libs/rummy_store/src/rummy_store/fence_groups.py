"""Fence groups: partitions of a topic owned and written whole, under one transactional id.

A writer that fences each partition separately (one transactional producer per partition) commits one
Kafka transaction per partition per batch. With the 64 partitions a topic has for room to scale, a busy
engine's appends hardly ever meet in one partition, so each action was its own transaction: three
round trips, commit markers, and 7 ms of engine CPU an action instead of 2. A fence group is the unit
instead: G groups, partition p in group p mod G, one producer (`transactional.id` named after the
group) and one transaction per batch over every partition of the group. Kafka transactions span
partitions, and the fence is the same: whoever takes a group next calls `init_transactions` with its
id and the broker fences the previous owner for all of its partitions at once.

The groups are owned through a consumer group on a control topic, `<topic>.fence-groups`, whose
partitions are the groups (nothing is written to it): Kafka's group coordinator hands each instance
whole groups, and a claim takes one producer per group. Every writer of the topic must agree on G, or
two writers would hold different ids for one partition and fence nothing, so G is the control topic's
partition count: created once with the configured count, then read back by every writer. A topic
without a control topic is fenced per partition (matchmaking's journal, tools). Changing G means
stopping every writer first; an old writer's transactions time out before a new one may write.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from rummy_store.kafka_clients import Backend
from rummy_store.kafka_topic import Replication, ensure_topic

log = logging.getLogger("rummy_store")
CONTROL_SUFFIX = ".fence-groups"
DEFAULT_FENCE_GROUPS = 8
"""Groups of a game topic created without a count: up to 8 engines share it, and an engine's appends
meet in 8 transactions at most instead of one per partition."""
METADATA_WAIT_S = 30.0


def control_topic(topic: str) -> str:
    return topic + CONTROL_SUFFIX


@dataclass(frozen=True, slots=True)
class FenceGroups:
    """How a topic's `partitions` fall into fence groups (`groups` None: one per partition)."""

    topic: str
    partitions: int
    groups: int | None = None

    @property
    def count(self) -> int:
        return self.groups or self.partitions

    @property
    def ownership_topic(self) -> str:
        """The topic whose partitions the writers' consumer group shares out: one per fence group."""
        return self.topic if self.groups is None else control_topic(self.topic)

    def group_of(self, partition: int) -> int:
        return partition % self.count

    def partitions_of(self, group: int) -> tuple[int, ...]:
        return tuple(range(group, self.partitions, self.count))

    def transactional_id(self, group: int) -> str:
        """Per partition `meldstream.<topic>.<p>`, as before groups, so such writers fence each other."""
        if self.groups is None:
            return f"meldstream.{self.topic}.{group}"
        return f"meldstream.{self.topic}.fence-{group}-of-{self.groups}"


def resolve(
    bootstrap: str,
    topic: str,
    partitions: int,
    wanted: int | None,
    replication: Replication,
    *,
    client: Backend,
) -> FenceGroups:
    """The topic's fence groups: its control topic's partition count when one exists (whatever
    `wanted` says: every writer follows the one count), else `wanted` groups (at most one per
    partition), creating the control topic; with neither, one group per partition."""
    admin = client.admin(bootstrap)
    try:
        existing = admin.partition_count(control_topic(topic))
        if existing is None and wanted is not None:
            count = max(1, min(wanted, partitions))
            ensure_topic(bootstrap, control_topic(topic), count, replication, client=client)
            deadline = time.monotonic() + METADATA_WAIT_S
            while (existing := admin.partition_count(control_topic(topic))) is None:
                if time.monotonic() > deadline:
                    return FenceGroups(topic, partitions, count)  # created: its count is the one asked
                time.sleep(0.1)
    finally:
        admin.close()
    if existing is None:
        return FenceGroups(topic, partitions)
    if wanted is not None and existing != min(wanted, partitions):
        log.warning(
            "topic %s has %d fence groups (%s), not the %d configured: using its %d (every writer must "
            "agree; changing the count means stopping every engine first)",
            *(topic, existing, control_topic(topic), wanted, existing),
        )
    return FenceGroups(topic, partitions, existing)
