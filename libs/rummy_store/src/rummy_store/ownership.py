"""Which partitions of a topic this instance owns: the instances' consumer group decides.

Every instance of a service (the engines on the game topic) joins one consumer group on the topic's
ownership topic, whose partitions are its fence groups (`fence_groups`: the topic itself when each
partition is its own group). The group's assignment gives each instance whole fence groups, and an
instance writes, times and streams only what lives in their partitions. A thread keeps the membership
(the member reads nothing: its partitions are paused; the client heartbeats in its own thread). On
assignment it claims each fence group (`KafkaEventLog.claim`: the broker fences the previous writer,
the tails are read from checkpoints) and only then tells the app which partitions it now has; a claim
that fails (broker down) is retried every second. On revocation the writers are dropped first, so
nothing more is written to a partition that is moving, then the app is told (timers stop, streams
end, clients reconnect).

Each claim is published in an `OwnerDirectory` (partition -> the claiming instance's address), which
every instance re-reads every few seconds: an engine asked about a game it does not own names the owner
in its refusal, and the SDK goes there. A hint only: the broker's fence decides who writes. Without a
directory (None: a service run with no Redis) the instances own their shares alone and name no owner.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

import redis

from rummy_store.kafka_clients import Rebalance
from rummy_store.kafka_log import KafkaEventLog

log = logging.getLogger("rummy_store")
Notify = Callable[[set[int]], None]
REFRESH_S = 2.0  # how often an instance re-reads where the other partitions are


class OwnerDirectory:
    """partition -> address of the instance that last claimed it: one Redis hash per topic."""

    def __init__(self, client: redis.Redis, prefix: str, topic: str) -> None:
        self._redis = client
        self._key = f"{prefix}owners:{topic}"

    def publish(self, partitions: Iterable[int], address: str) -> None:
        self._redis.hset(self._key, mapping={str(p): address for p in partitions})

    def read(self) -> dict[int, str]:
        raw: dict[bytes, bytes] = self._redis.hgetall(self._key)  # type: ignore[assignment]
        return {int(p): address.decode() for p, address in raw.items()}


class PartitionOwnership:
    """This instance's share of `kafka`'s fence groups, through a consumer group on the log's own
    Kafka backend (`kafka_clients.Membership`); `assigned`/`revoked` get the topic's partitions."""

    def __init__(
        self,
        bootstrap: str,
        kafka: KafkaEventLog,
        group: str,
        directory: OwnerDirectory | None,
        *,
        assigned: Notify,
        revoked: Notify,
        joined: Callable[[int], None] = lambda generation: None,
    ) -> None:
        self._kafka = kafka
        self._group = group
        self._directory = directory
        self._address = ""  # where clients reach this instance, set by `start`
        self._owners: dict[int, str] = {}
        self._read_at = 0.0
        self._assigned = assigned
        self._revoked = revoked
        self._joined = joined
        # Fence groups (the ownership topic's partitions), not the topic's partitions:
        self._pending: set[int] = set()  # assigned, not claimed yet
        self._revoking: set[int] = set()  # taken back by a rebalance in progress
        self._stop = threading.Event()
        self.settled = threading.Event()  # set once the first assignment is claimed in full
        self._assigned_once = False  # until then nothing pending does not mean settled
        self._assigned_at = 0.0  # when the last assignment came (monotonic): claims are timed from it
        topic = kafka.fences.ownership_topic
        rebalance = Rebalance(revoked=self._on_revoked, assigned=self._on_assigned)
        self._member = kafka.backend.membership(bootstrap, group, topic, rebalance)
        self._thread = threading.Thread(target=self._run, name=f"ownership-{topic}", daemon=True)

    def _partitions(self, groups: Iterable[int]) -> set[int]:
        return {p for group in groups for p in self._kafka.fences.partitions_of(group)}

    def start(self, address: str) -> None:
        self._address = address
        self._thread.start()

    def owner_of(self, partition: int) -> str | None:
        """The address of the instance that last claimed `partition` (as of the last re-read), if known."""
        address = self._owners.get(partition)
        return address if address != self._address else None

    def claiming(self, partition: int) -> bool:
        """Whether `partition` is assigned here and not claimed yet (its previous owner is dead, or is
        being fenced): a call about it can wait for the claim instead of going to that owner."""
        return self._kafka.fences.group_of(partition) in self._pending

    def generation(self) -> int | None:
        """The group generation this instance is a member of now, or None when in doubt: joining, or no
        sign of the group for MEMBERSHIP_LEASE_S (a pause or a cut-off: the group may have moved on).
        tests/e2e/test_split_brain.py pins the behaviour."""
        return self._member.generation()

    def claimed_elsewhere(self, partition: int) -> bool:
        """Whether the directory, read now, names another instance as `partition`'s last claimer. An
        instance whose share the group has moved on from (its session lapsed under load; the news
        comes at its next poll) asks this before it answers that something of `partition` does not
        exist: the thing may be at the new owner. False when the directory cannot say."""
        if self._directory is None:
            return False
        try:
            address = self._directory.read().get(partition)
        except redis.RedisError:
            return False
        return address is not None and address != self._address

    def stop(self) -> None:
        """Leave the group (its partitions go to the other instances at once) and stop writing them."""
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    self._member.poll(0.5)
                except Exception as exc:  # the broker is away: membership resumes when it is back
                    log.warning("group %s poll failed: %s", self._group, exc)
                    self._stop.wait(1.0)
                self._claim_pending()
                self._rejoin_if_fenced()
                self._kafka.recover(self._kafka.owned - self._revoking)  # e.g. after a broker restart
                if time.monotonic() - self._read_at > REFRESH_S:
                    self._read_at = time.monotonic()
                    try:
                        if self._directory is None:
                            continue
                        mine = self._partitions(self._kafka.owned - self._revoking)
                        if mine and any(self._owners.get(p) != self._address for p in mine):
                            self._directory.publish(mine, self._address)  # e.g. Redis came back empty
                        self._owners = self._directory.read()
                    except redis.RedisError as exc:  # a hint: clients retry without it
                        log.warning("reading partition owners failed: %s", exc)
        finally:
            owned = self._kafka.owned
            self._kafka.drop(owned)
            self._member.close()
            if owned:
                self._revoked(self._partitions(owned))

    # --- rebalance callbacks (called inside the membership's poll, on this thread) -----------------

    def _on_revoked(self, groups: set[int]) -> None:
        """The classic protocol takes every partition back at each rebalance (and kafka-python
        rebalances once more right after a first join); the writers stay until the new assignment
        says which partitions really moved, so a rebalance moves only those. Safe while it lasts: a
        partition given to another instance is fenced at the broker the moment that instance claims it."""
        self._revoking |= groups

    def _on_assigned(self, groups: set[int]) -> None:
        self._assigned_once = True
        moved, self._revoking = self._revoking - groups, set()
        if self._member.lapsed():  # another instance may have claimed and written what this one holds
            held = self._kafka.owned & groups
            log.warning("group membership lapsed: claiming what it held again", extra={"group": self._group})
            moved |= held
        if moved:
            self._kafka.drop(moved)
        # Groups still held (the classic protocol hands them back at every rebalance) need no claim;
        # fenced or dropped ones are claimed (a new writer, a fresh read of their tails).
        self._pending = (self._pending & groups) | (groups - self._kafka.owned)
        self._assigned_at = time.monotonic()
        log.info(
            "fence groups assigned",
            extra={"group": self._group, "fence_groups": sorted(groups), "to_claim": sorted(self._pending)},
        )
        if moved:
            moved_away = {"group": self._group, "partitions": sorted(self._partitions(moved))}
            log.info("partitions moved, or held after a lapse", extra=moved_away)
            self._revoked(self._partitions(moved))
        # Claimed by `_run` once poll returns, not here: a listener blocks the consumer's IO loop and
        # its heartbeats, and 64 claims on a busy cluster outlasted the session (a needless rebalance).
        self._joined(self._member.joined_generation())  # after `_revoked` above
        if not groups:
            self.settled.set()

    def _rejoin_if_fenced(self) -> None:
        """Another writer fenced a group this instance holds: the group has moved on without telling
        this member (its session lapsed in a pause, unnoticed). Rejoining is how it learns which
        partitions are still its own (claimed again) and which moved (dropped, the owner named);
        waiting for the next rebalance left it refusing calls for a minute with no owner to name."""
        fenced = self._kafka.fenced - self._pending - self._revoking
        if fenced and self._member.rejoin():
            log.warning("fence groups %s fenced by another writer: rejoining the group", sorted(fenced))

    def _claim_pending(self) -> None:
        failed = self._kafka.claim_each(self._pending)
        claimed = self._pending - failed.keys()
        for group, exc in sorted(failed.items()):
            log.warning("claiming partitions %s failed (%s); retrying", self._partitions([group]), exc)
        if failed:
            self._stop.wait(1.0)
        if claimed:
            partitions = self._partitions(claimed)
            took = round(time.monotonic() - self._assigned_at, 3)
            claimed_facts = {"group": self._group, "partitions": sorted(partitions), "seconds": took}
            log.info("partitions claimed", extra=claimed_facts)
            try:
                if self._directory is not None:
                    self._directory.publish(partitions, self._address)
                self._read_at = 0.0
            except redis.RedisError as exc:
                log.warning("publishing partitions %s failed: %s", sorted(partitions), exc)
            self._assigned(partitions)
        self._pending -= claimed  # after the app is told: until then calls about them wait (`claiming`)
        if not self._pending and self._assigned_once:
            self.settled.set()
