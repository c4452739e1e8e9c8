"""Starting and stopping one identity instance: its log, partition ownership, the keyring, the server.

Embedded (no Kafka): one instance owns every partition of its sqlite log. On Kafka the instances of
one consumer group share the topic's partitions the way matchmaking's do (`rummy_store.ownership`): a
partition is claimed (the broker fences its previous writer) before it is folded and served, and
dropped before it is served elsewhere, so a name is claimed by one writer only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from rummy.identity.v1 import identity_pb2, identity_pb2_grpc
from rummy_service.auth import Jwks, TokenVerifier
from rummy_service.forwarding import ForwardMarks, PartitionRouter, forwarding_key
from rummy_service.rate_limits import Limiter, RateLimiting
from rummy_service.server import ServiceHost
from rummy_store import EventLog
from rummy_store.kafka_log import KafkaEventLog
from rummy_store.ownership import OwnerDirectory, PartitionOwnership

from rummy_identity.accounts import Accounts
from rummy_identity.config import IdentityConfig
from rummy_identity.keeper import KeyKeeper
from rummy_identity.keys import Sealer
from rummy_identity.passwords import Passwords
from rummy_identity.provider import Provider
from rummy_identity.server import IdentityServicer, local_jwks
from rummy_identity.store import FILE, AccountStore
from rummy_identity.tokens import TokenMint

log = logging.getLogger("rummy_identity")
SERVICE_NAME: Final = identity_pb2.DESCRIPTOR.services_by_name["IdentityService"].full_name
SETTLE_S: Final = 60.0
DIRECTORY_TIMEOUT_S: Final = 5.0


@dataclass(slots=True)
class RunningIdentity:
    config: IdentityConfig
    accounts: Accounts
    keeper: KeyKeeper
    host: ServiceHost
    log: EventLog
    router: PartitionRouter
    ownership: PartitionOwnership | None = None
    provider: Provider | None = None
    moves: asyncio.Lock = field(default_factory=asyncio.Lock)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def address(self) -> str:
        return self.host.address

    async def stop(self) -> None:
        await self.host.stop()
        await self.keeper.stop()
        await self.router.close()
        if self.provider is not None:
            await self.provider.close()
        if self.ownership is not None:
            await asyncio.to_thread(self.ownership.stop)
        self.log.close()

    async def move(self, taken: Iterable[int], lost: Iterable[int]) -> None:
        """Fold and serve claimed partitions, forget lost ones, one move at a time."""
        taken, lost = set(taken), set(lost)
        store = self.accounts.store
        try:
            async with self.moves:
                store.drop(lost | (taken & store.owned))  # a partition claimed again is folded anew
                if self.accounts.keyring_partition() in lost:
                    self.keeper.reset()
                if taken:
                    store.adopt(await asyncio.to_thread(store.fold, taken))
                    log.info("serving partitions %s", sorted(taken))
                    if self.keeper.owner:
                        await self.keeper.refresh()
        except Exception:
            log.exception("taking partitions %s failed", sorted(taken))


def open_log(config: IdentityConfig) -> EventLog:
    return config.store.open().log(
        config.topic,
        FILE,
        config.partitions,
        replication=config.replication,
        writer=True,
        claim_on_demand=False,
        compacted=True,
    )


async def start_identity(config: IdentityConfig) -> RunningIdentity:
    """Own a share of the partitions (all of them embedded), know the keyring, and serve; health is
    SERVING once a key signs."""
    account_log = await asyncio.to_thread(open_log, config)
    store = AccountStore(account_log)
    sealer = Sealer(config.key_secret)
    mint = TokenMint(sealer, config.keys)
    limiter = Limiter(config.redis, config.key_prefix)
    accounts = Accounts(
        store,
        mint,
        Passwords(config.argon2),
        services=dict(config.services),
        lifetimes=config.lifetimes,
        limiter=limiter,
    )
    keeper = KeyKeeper(accounts, sealer, config.keys)
    ownership: PartitionOwnership | None = None
    loop = asyncio.get_running_loop()
    if isinstance(account_log, KafkaEventLog):
        client = config.store.open(redis_timeout_s=DIRECTORY_TIMEOUT_S).redis
        directory = None if client is None else OwnerDirectory(client, config.key_prefix, config.topic)
        ownership = PartitionOwnership(
            config.kafka,
            account_log,
            config.group_id,
            directory,
            assigned=lambda parts: _from_thread(loop, running, parts, set()),
            revoked=lambda parts: _from_thread(loop, running, set(), parts),
        )
    owners = ownership.owner_of if ownership is not None else lambda partition: None
    marks = ForwardMarks(forwarding_key(config.key_secret, SERVICE_NAME))  # identity's secret alone
    router = PartitionRouter(
        lambda: store.owned, owners, identity_pb2_grpc.IdentityServiceStub, marks=marks, tls=config.tls
    )

    async def ready() -> bool:
        return bool(store.owned) and bool(accounts.keyring.keys)

    verifier = TokenVerifier(Jwks(local_jwks(accounts), background=False, min_interval_s=0.0))
    limits = RateLimiting(limiter, config.limits, verifier, services=[SERVICE_NAME], forwards=marks)
    host = ServiceHost(config.address, [SERVICE_NAME], ready, tls=config.tls, limits=limits)
    provider = Provider(config.provider) if config.provider.configured else None
    identity_pb2_grpc.add_IdentityServiceServicer_to_server(
        IdentityServicer(accounts, keeper, router, verifier, provider), host.server
    )
    running = RunningIdentity(config, accounts, keeper, host, account_log, router, ownership, provider)
    if ownership is None:
        everything = set(range(store.partitions))
        store.adopt(await asyncio.to_thread(store.fold, everything))
    await keeper.refresh()
    keeper.start()
    await host.start()
    if ownership is not None:
        ownership.start(config.advertised or host.address)
    await _settled(running, SETTLE_S)
    return running


async def _settled(running: RunningIdentity, timeout_s: float) -> None:
    """Wait until this instance serves partitions and knows a signing key (health says so then)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not (running.accounts.store.owned and running.accounts.keyring.keys):
        if asyncio.get_running_loop().time() > deadline:
            return
        await asyncio.sleep(0.05)
        if not running.accounts.keyring.keys:
            await running.keeper.refresh()


def _from_thread(
    loop: asyncio.AbstractEventLoop, running: RunningIdentity, taken: set[int], lost: set[int]
) -> None:
    loop.call_soon_threadsafe(_schedule, running, taken, lost)


def _schedule(running: RunningIdentity, taken: set[int], lost: set[int]) -> None:
    task = asyncio.get_running_loop().create_task(running.move(taken, lost))
    running.tasks.add(task)
    task.add_done_callback(running.tasks.discard)
