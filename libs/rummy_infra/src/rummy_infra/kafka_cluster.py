"""A local KRaft cluster of combined broker+controller nodes (deploy/local/kafka.sh, one process a node),
for the tests that kill a broker while play goes on. Always local processes: a node must be killable.

Every node is a controller voter, so the quorum survives one node down out of three, and internal
topics (consumer offsets, transaction state) have min(3, nodes) replicas with min ISR 2 from 3.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

from rummy_infra.local import RestartableKafka, free_port, state_dir


class KafkaCluster:
    """The nodes of one cluster; `bootstrap` names them all, so a client finds the cluster while any
    one node is down."""

    def __init__(self, states: list[Path]) -> None:
        controller_ports = [free_port() for _ in states]
        voters = ",".join(f"{i + 1}@127.0.0.1:{p}" for i, p in enumerate(controller_ports))
        cluster_id = _cluster_id()
        self.nodes = [
            RestartableKafka(
                state,
                controller_port=controller_ports[i],
                cluster={
                    "MELDSTREAM_KAFKA_NODE_ID": str(i + 1),
                    "MELDSTREAM_KAFKA_VOTERS": voters,
                    "MELDSTREAM_KAFKA_CLUSTER_ID": cluster_id,
                },
            )
            for i, state in enumerate(states)
        ]
        self.bootstrap = ",".join(node.address for node in self.nodes)
        self.down: set[int] = set()  # nodes killed and not restarted

    def start(self) -> None:
        """Start every node together: a voter alone waits for a majority of the quorum."""
        _each(self.nodes, RestartableKafka.start)

    def kill(self, node: int) -> None:
        """SIGKILL one node (0-based): no controlled shutdown, its leaderships move when its session ends."""
        self.nodes[node].kill()
        self.down.add(node)

    def restart(self, node: int) -> None:
        """Start a killed node again with its log; returns once it answers and sees every node."""
        self.nodes[node].start()
        self.down.discard(node)

    def heal(self) -> None:
        """Restart every node a test killed and left down."""
        for node in sorted(self.down):
            self.restart(node)

    def stop(self) -> None:
        _each(self.nodes, RestartableKafka.stop)


def _each(nodes: list[RestartableKafka], action: Callable[[RestartableKafka], None]) -> None:
    with ThreadPoolExecutor(len(nodes)) as pool:
        for done in [pool.submit(action, node) for node in nodes]:
            done.result()


def _cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes in URL-safe base64 without padding (what StorageTool makes)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


@contextmanager
def provide_kafka_cluster(nodes: int = 3) -> Iterator[KafkaCluster]:
    """Start a private cluster of `nodes` nodes on free ports; every node is stopped on exit."""
    with ExitStack() as stack:
        states = [stack.enter_context(state_dir(f"kafka{i + 1}")) for i in range(nodes)]
        cluster = KafkaCluster(states)
        try:
            cluster.start()
            yield cluster
        finally:
            cluster.stop()
