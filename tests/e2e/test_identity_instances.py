"""Identity as several processes on real Kafka and Redis: a name is claimed once across instances (a
provider user's account too, whichever instance their first sign-ins reach), accounts outlive Redis and
every process, a new signing key reaches every verifier before it signs, and a sign-in forwarded to
the instance owning its name is counted once, by its caller's address, which a client's own forwarding
metadata cannot change.
"""

from __future__ import annotations

import concurrent.futures
import time
import uuid
from collections.abc import Iterator

import grpc
import pytest
import redis
from joserfc import jwt
from joserfc.jwk import ECKey
from rummy.identity.v1 import identity_pb2 as pb
from rummy.identity.v1 import identity_pb2_grpc as pb_grpc
from rummy_client.identity import IdentityClient
from rummy_identity import names
from rummy_identity.accounts import provider_name
from rummy_identity.loopback_provider import LoopbackProvider, serving
from rummy_identity.server import CLIENT_ADDRESS, SIGN_INS_FROM_ONE_ADDRESS
from rummy_identity.store import name_key
from rummy_identity.testing import PASSWORD, IdentityProcess
from rummy_service.auth import Jwks, TokenVerifier
from rummy_service.forwarding import FORWARDED
from rummy_service.public_keys import IdentityKeys
from rummy_store.partitioning import partition_for

pytestmark = pytest.mark.integration
CLIENT = "meldstream-web"
NONCE = "n-instances"
PARTITIONS = 4


@pytest.fixture(scope="module")
def provider() -> Iterator[tuple[LoopbackProvider, ECKey]]:
    """An OpenID provider on loopback (its key set) and the key it signs ID tokens with."""
    key = ECKey.generate_key("P-256")
    with serving() as served:
        served.keys = [{**key.as_dict(private=False), "kid": "ec-1", "use": "sig", "alg": "ES256"}]
        yield served, key


@pytest.fixture
def instances(
    kafka_bootstrap: str, redis_url: str, unique_prefix: str, provider: tuple[LoopbackProvider, ECKey]
) -> Iterator[list[IdentityProcess]]:
    """Two identity processes sharing one compacted topic's partitions (and one set of credentials),
    both trusting the loopback provider."""
    env = {
        "IDENTITY_OIDC_ISSUER": provider[0].issuer,
        "IDENTITY_OIDC_CLIENT_ID": CLIENT,
        "KAFKA_BOOTSTRAP": kafka_bootstrap,
        "REDIS_URL": redis_url,
        "IDENTITY_TOPIC": f"{unique_prefix}.rummy.identity.accounts.v1",
        "IDENTITY_GROUP": unique_prefix,
        "IDENTITY_KEY_PREFIX": f"{unique_prefix}:",
        "IDENTITY_PARTITIONS": str(PARTITIONS),
    }
    first = IdentityProcess(env)
    second = IdentityProcess(
        {**env, "IDENTITY_SERVICE_CREDENTIALS": first.env["IDENTITY_SERVICE_CREDENTIALS"]}
    )
    second.credentials = first.credentials
    started: list[IdentityProcess] = []
    try:
        for instance in (first, second):
            started.append(instance.start())
        yield started
    finally:
        for instance in started:
            instance.stop()


def settle(instances: list[IdentityProcess]) -> None:
    """Until every instance answers sign-ups of every partition (the group has spread them)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            for instance in instances:
                for _ in range(8):
                    instance.client.guest()
            return
        except grpc.RpcError:
            time.sleep(0.5)
    raise AssertionError("the identity instances never shared the partitions")


def test_a_name_is_claimed_once_across_instances_and_survives_redis_and_restarts(
    instances: list[IdentityProcess], redis_url: str, unique_prefix: str
) -> None:
    settle(instances)
    base = f"k{uuid.uuid4().hex[:8]}"
    forms = [base, base.upper(), base.replace("k", "\u043a", 1), base.capitalize()]  # Cyrillic ka

    def sign_up(index: int) -> str:
        client = instances[index % 2].client
        try:
            return client.sign_up(forms[index], PASSWORD).account.account_id
        except grpc.RpcError as error:
            return (error.details() or "").split(":", 1)[0]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(sign_up, range(4)))
    winners = [a for a in answers if a.startswith("u")]
    assert len(winners) == 1 and answers.count("name_taken") == 3, answers
    # Any instance signs the account in, whichever owns its partition.
    for instance in instances:
        assert instance.client.sign_in(base, PASSWORD).account.account_id == winners[0]

    # Everything identity keeps in Redis goes (the session's Redis is shared with other tests' keys,
    # so this is FLUSHALL for identity's keys: its prefix, and any key naming its topic).
    client = redis.Redis.from_url(redis_url)
    kept = [k for k in client.scan_iter("*") if unique_prefix.encode() in k]
    assert kept and client.delete(*kept) == len(kept)
    for instance in instances:
        instance.stop()
    for instance in instances:
        instance.start()  # the same address and topic: nothing of identity's is left in Redis
    settle(instances)
    for instance in instances:
        assert instance.client.sign_in(base.upper(), PASSWORD).account.account_id == winners[0]
    with pytest.raises(grpc.RpcError) as taken:
        instances[1].client.sign_up(base, PASSWORD)
    assert taken.value.code() == grpc.StatusCode.ALREADY_EXISTS


def test_a_provider_users_first_sign_ins_on_both_instances_at_once_make_one_account(
    instances: list[IdentityProcess], provider: tuple[LoopbackProvider, ECKey]
) -> None:
    """The account of a provider's user is named after its subject, so it is claimed like any name:
    once, by the owner of the name's partition, wherever the gateway's calls land."""
    settle(instances)
    served, key = provider
    subject = f"s-{uuid.uuid4().hex}"
    now = int(time.time())
    claims = {"iss": served.issuer, "sub": subject, "aud": [CLIENT], "exp": now + 300, "iat": now}
    id_token = jwt.encode(
        {"alg": "ES256", "kid": "ec-1"}, {**claims, "nonce": NONCE}, key, algorithms=["ES256"]
    )
    request = pb.SignInWithProviderRequest(id_token=id_token, nonce=NONCE, device="instances")
    tokens = [instance.service_token("web") for instance in instances]

    def sign_in(index: int) -> str:
        response = instances[index % 2].client.call("SignInWithProvider", request, tokens[index % 2])
        account_id: str = response.session.account.account_id
        return account_id

    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(sign_in, range(6)))
    assert len(set(answers)) == 1, answers
    ops = instances[1].operator()
    lookup = pb.GetAccountRequest(name=provider_name(served.issuer, subject))
    account = instances[1].client.call("GetAccount", lookup, ops.token).account
    assert (account.account_id, account.sessions) == (answers[0], 6)


def test_a_rotated_key_is_known_everywhere_before_it_signs_and_old_tokens_stay_good(
    instances: list[IdentityProcess],
) -> None:
    settle(instances)
    client = instances[0].client
    session = client.sign_up(f"r{uuid.uuid4().hex[:8]}", PASSWORD)
    keys = IdentityKeys(instances[1].address)
    verifier = TokenVerifier(Jwks(keys.fetch, min_interval_s=0.2))
    verifier.jwks.refresh()
    before = verifier.verify(session.access_token, time.time())
    ops = instances[0].operator()
    rotated = client.call("RotateSigningKey", pb.RotateSigningKeyRequest(), ops.token)
    assert rotated.signs_from > time.time()  # published ahead of signing (IDENTITY_KEY_LEAD_S=4)
    deadline = time.monotonic() + 30
    while rotated.kid not in keys.fetch()[0]:
        assert time.monotonic() < deadline, "the other instance never published the new key"
        time.sleep(0.2)
    verifier.jwks.refresh()
    while time.time() < rotated.signs_from + 1:
        time.sleep(0.2)
    fresh = IdentityClient(instances[1].address).refresh(session.refresh_token)
    assert verifier.verify(fresh.token, time.time()).subject == before.subject
    assert verifier.verify(session.access_token, time.time()) == before  # signed by the old key
    keys.close()


def test_a_forwarded_sign_in_counts_once_and_forged_forwarding_counts_like_any_call(
    instances: list[IdentityProcess],
) -> None:
    """Sign-ins through one instance to names of every partition (the other instance owns some, so
    those are forwarded there): each counts once against the caller's address, so exactly the limit
    goes through; a client's own `meldstream-forwarded` naming other addresses is counted the same."""
    settle(instances)
    allowed = SIGN_INS_FROM_ONE_ADDRESS[0].amount
    accounts: list[str] = []
    while len(accounts) < allowed + 1:  # names spread evenly over the partitions
        name = f"n{uuid.uuid4().hex[:10]}"
        partition = partition_for(name_key(names.canonical(names.normalized(name))), PARTITIONS)
        if partition == len(accounts) % PARTITIONS:
            accounts.append(name)

    def sign_in(stub: pb_grpc.IdentityServiceStub, name: str, *metadata: tuple[str, str]) -> grpc.StatusCode:
        request = pb.SignInRequest(name=name, password=PASSWORD, device="instances")
        with pytest.raises(grpc.RpcError) as refused:  # no such account
            stub.SignIn(request, metadata=metadata)
        code: grpc.StatusCode = refused.value.code()
        return code

    with grpc.insecure_channel(instances[0].address) as channel:
        stub = pb_grpc.IdentityServiceStub(channel)
        codes = [sign_in(stub, name) for name in accounts[: allowed - 1]]
        assert set(codes) == {grpc.StatusCode.UNAUTHENTICATED}, codes  # not double counted
        forged = ((FORWARDED, "1"), (CLIENT_ADDRESS, "203.0.113.7"))
        assert sign_in(stub, accounts[-2], *forged) == grpc.StatusCode.UNAUTHENTICATED  # the last one
        assert sign_in(stub, accounts[-1], *forged) == grpc.StatusCode.RESOURCE_EXHAUSTED
