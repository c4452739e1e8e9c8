"""Timeouts both Kafka backends use, so instances on either behave alike in one group."""

from typing import Final

# A consumer that joins a group with the 45 s default can stall when members join together
# (shared/notes/infra.md section 3); 10 s keeps rebalances short.
CONSUMER_SESSION_MS: Final = 10_000
HEARTBEAT_MS: Final = 1_000
# A killed instance's partitions move once its session expires: 6 s (the broker's default minimum,
# group.min.session.timeout.ms) instead of other consumers' 10 s, so a killed engine's games play again
# within the 15 s target (bench-scale). Safe when a live member misses it (a long stall): its partitions
# move needlessly, but the broker fences its writers, so nothing it writes after that counts.
MEMBERSHIP_SESSION_MS: Final = 6_000
MEMBERSHIP_HEARTBEAT_MS: Final = 500
# A member is sure of its membership while its last heartbeat answer is younger than this: the broker
# counts the session from when it received that heartbeat (a little earlier), and another instance
# still has to rejoin and claim before it writes, so this leaves the network a second and a half.
MEMBERSHIP_LEASE_S: Final = MEMBERSHIP_SESSION_MS / 1000 - 1.5
# How long a client waits for a just-created topic's partitions to show in its metadata.
METADATA_WAIT_S: Final = 30.0
# A read's poll returns as soon as records come, but a fetch that brings only a transaction's commit
# marker (a read from a checkpoint, which ends where the writer's last records did) returns none, and
# the poll then waits out its whole timeout: 1 s per partition made a takeover's tail reads take 3 s.
# The position has moved past the marker by then, so a short poll, looped, is enough.
READ_POLL_MS: Final = 20
