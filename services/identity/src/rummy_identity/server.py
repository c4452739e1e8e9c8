"""The gRPC face of identity: checks lengths, authenticates, routes to the owning partition, delegates.

Every request's string fields are bounded before anything else (`LIMITS`). A call about one account
runs on the instance that owns its partition (`PartitionRouter`: here, or forwarded); GetJwks and a
service credential's exchange are answered by any instance.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, TypeVar

import grpc
from limits import parse_many
from rummy.identity.v1 import identity_pb2 as pb
from rummy.identity.v1 import identity_pb2_grpc as pb_grpc
from rummy_service import auth, logs
from rummy_service.auth import Principal, TokenVerifier, authenticate, require, service_scope
from rummy_service.errors import InvalidArgument, Unavailable, unary_errors
from rummy_service.forwarding import NOT_OWNER, PartitionRouter, metadata
from rummy_service.limits import check_lengths
from rummy_service.rate_limits import RateLimited, peer_address

from rummy_identity import credentials, keys
from rummy_identity.accounts import DEVICE_CHARS, DISPLAY_NAME_CHARS, LABEL_CHARS, REASON_CHARS, Accounts
from rummy_identity.keeper import KeyKeeper
from rummy_identity.names import MAX_INPUT_CHARS
from rummy_identity.passwords import MAX_CHARS as PASSWORD_CHARS
from rummy_identity.provider import Provider

Context = grpc.aio.ServicerContext[Any, Any]
Resp = TypeVar("Resp")
LIMITS: Final[Mapping[str, int]] = {
    "name": MAX_INPUT_CHARS,
    "display_name": DISPLAY_NAME_CHARS,
    "password": PASSWORD_CHARS,
    "current_password": PASSWORD_CHARS,
    "new_password": PASSWORD_CHARS,
    "device": DEVICE_CHARS,
    "id_token": 8192,
    "nonce": 128,
    "access_token": 4096,
    "refresh_token": credentials.MAX_CHARS,
    "api_token": credentials.MAX_CHARS,
    "reset_token": credentials.MAX_CHARS,
    "account_id": 64,
    "token_id": 64,
    "scopes": 32,
    "label": LABEL_CHARS,
    "reason": REASON_CHARS,
}
"""The length limit of every string field of the requests (identity.proto), by name."""
HUMANS: Final = (auth.PLAY,)
CLIENT_ADDRESS: Final = "meldstream-client-address"  # of a forwarded sign-in, vouched for by its marker
SIGN_INS_FROM_ONE_ADDRESS: Final = parse_many("30/minute")
"""Sign-ins from one address, to any accounts (a guesser trying many names)."""
LOOKUPS: Final = parse_many("60/minute")
"""LookupAccount calls of one account: enough to challenge, slow for listing who has which name."""


class IdentityServicer(pb_grpc.IdentityServiceServicer):
    def __init__(
        self,
        accounts: Accounts,
        keeper: KeyKeeper,
        router: PartitionRouter,
        verifier: TokenVerifier,
        provider: Provider | None = None,
    ) -> None:
        self._accounts = accounts
        self._keeper = keeper
        self._router = router
        self._verifier = verifier
        self._provider = provider

    def _caller(self, context: Context, *scopes: str) -> Principal:
        principal = authenticate(self._verifier, context.invocation_metadata())
        logs.caller.set(principal.subject)
        require(principal, *scopes)
        return principal

    async def _at(
        self,
        partition: int,
        method: str,
        request: Any,
        context: Context,
        local: Callable[[], Awaitable[Resp]],
        *,
        extra: tuple[tuple[str, str], ...] = (),
    ) -> Resp:
        return await self._router.unary(partition, method, request, context, local, extra=extra)

    # --- signing in ---------------------------------------------------------------------------------

    @unary_errors
    async def SignUp(self, request: pb.SignUpRequest, context: Context) -> pb.SignUpResponse:
        check_lengths(request, LIMITS)

        async def here() -> pb.SignUpResponse:
            session = await self._accounts.sign_up(
                request.name, request.display_name, request.password, request.device
            )
            return pb.SignUpResponse(session=session)

        return await self._at(self._accounts.name_partition(request.name), "SignUp", request, context, here)

    @unary_errors
    async def SignIn(self, request: pb.SignInRequest, context: Context) -> pb.SignInResponse:
        check_lengths(request, LIMITS)

        # A peer's forwarded call (its marker verifies) carries the address it was counted under;
        # any other call's CLIENT_ADDRESS is the caller's own say, ignored.
        address = metadata(context, CLIENT_ADDRESS)[:64] if self._router.forwarded(context, "SignIn") else ""
        if not address:  # the first instance the call reached: the caller's own address
            address = peer_address(context)
            wait = await self._accounts.limiter.retry_after(SIGN_INS_FROM_ONE_ADDRESS, "sign-in", address)
            if wait is not None:
                raise RateLimited(wait, "address's sign-ins")

        async def here() -> pb.SignInResponse:
            session = await self._accounts.sign_in(request.name, request.password, request.device, address)
            return pb.SignInResponse(session=session)

        partition = self._accounts.name_partition(request.name)
        extra = ((CLIENT_ADDRESS, address),)
        return await self._at(partition, "SignIn", request, context, here, extra=extra)

    @unary_errors
    async def SignInAsGuest(
        self, request: pb.SignInAsGuestRequest, context: Context
    ) -> pb.SignInAsGuestResponse:
        check_lengths(request, LIMITS)
        if not self._accounts.store.owned:
            raise Unavailable(NOT_OWNER, "this instance serves no partition yet: retry")
        return pb.SignInAsGuestResponse(session=await self._accounts.guest(request.display_name))

    @unary_errors
    async def Refresh(self, request: pb.RefreshRequest, context: Context) -> pb.RefreshResponse:
        check_lengths(request, LIMITS)
        partition = self._accounts.secret_partition(request.refresh_token, credentials.REFRESH)
        if partition is None:
            return await self._accounts.refresh(request.refresh_token)  # refused without a hop
        return await self._at(
            partition, "Refresh", request, context, lambda: self._accounts.refresh(request.refresh_token)
        )

    @unary_errors
    async def ExchangeApiToken(
        self, request: pb.ExchangeApiTokenRequest, context: Context
    ) -> pb.ExchangeApiTokenResponse:
        check_lengths(request, LIMITS)
        partition = self._accounts.secret_partition(request.api_token, credentials.PERSONAL)
        if partition is None:  # a service's credential (checked here) or no token of ours
            return await self._accounts.exchange(request.api_token)
        return await self._at(
            partition,
            "ExchangeApiToken",
            request,
            context,
            lambda: self._accounts.exchange(request.api_token),
        )

    @unary_errors
    async def SignOut(self, request: pb.SignOutRequest, context: Context) -> pb.SignOutResponse:
        check_lengths(request, LIMITS)
        partition = self._accounts.secret_partition(request.refresh_token, credentials.REFRESH)
        if partition is None:
            return pb.SignOutResponse(ended=0)

        async def here() -> pb.SignOutResponse:
            return pb.SignOutResponse(ended=await self._accounts.sign_out(request.refresh_token))

        return await self._at(partition, "SignOut", request, context, here)

    # --- the caller's own account -------------------------------------------------------------------

    async def _own(
        self,
        method: str,
        request: Any,
        context: Context,
        local: Callable[[Principal], Awaitable[Resp]],
        *scopes: str,
    ) -> Resp:
        caller = self._caller(context, *(scopes or HUMANS))
        partition = self._accounts.account_partition(caller.subject)
        return await self._at(partition, method, request, context, lambda: local(caller))

    @unary_errors
    async def SignOutEverywhere(
        self, request: pb.SignOutEverywhereRequest, context: Context
    ) -> pb.SignOutEverywhereResponse:
        async def here(caller: Principal) -> pb.SignOutEverywhereResponse:
            return pb.SignOutEverywhereResponse(ended=await self._accounts.sign_out_everywhere(caller))

        return await self._own("SignOutEverywhere", request, context, here, auth.PLAY, auth.OPERATE)

    @unary_errors
    async def ChangePassword(
        self, request: pb.ChangePasswordRequest, context: Context
    ) -> pb.ChangePasswordResponse:
        check_lengths(request, LIMITS)

        async def here(caller: Principal) -> pb.ChangePasswordResponse:
            session = await self._accounts.change_password(
                caller, request.current_password, request.new_password
            )
            return pb.ChangePasswordResponse(session=session)

        return await self._own("ChangePassword", request, context, here, auth.PLAY, auth.OPERATE)

    @unary_errors
    async def DeleteAccount(
        self, request: pb.DeleteAccountRequest, context: Context
    ) -> pb.DeleteAccountResponse:
        check_lengths(request, LIMITS)

        async def here(caller: Principal) -> pb.DeleteAccountResponse:
            until = await self._accounts.delete(caller, request.password)
            return pb.DeleteAccountResponse(name_reserved_until=until)

        return await self._own("DeleteAccount", request, context, here, auth.PLAY)

    @unary_errors
    async def GetAccount(self, request: pb.GetAccountRequest, context: Context) -> pb.GetAccountResponse:
        check_lengths(request, LIMITS)
        if request.name:
            self._caller(context, auth.OPERATE)

            async def by_name() -> pb.GetAccountResponse:
                return pb.GetAccountResponse(account=self._accounts.get_by_name(request.name))

            return await self._at(
                self._accounts.name_partition(request.name), "GetAccount", request, context, by_name
            )

        async def here(caller: Principal) -> pb.GetAccountResponse:
            return pb.GetAccountResponse(account=self._accounts.get(caller.subject))

        return await self._own("GetAccount", request, context, here, auth.PLAY, auth.BOT_PLAY, auth.OPERATE)

    @unary_errors
    async def LookupAccount(
        self, request: pb.LookupAccountRequest, context: Context
    ) -> pb.LookupAccountResponse:
        """Any signed-in account (a person or a bot) asks, at most `LOOKUPS` a minute (a lister of names
        is slowed; the gateway's own limits come first), on the partition of the name or the id."""
        check_lengths(request, LIMITS)
        if bool(request.name) == bool(request.account_id):
            raise InvalidArgument("malformed_request", "a lookup names exactly one of name and account_id")
        caller = self._caller(context, auth.PLAY, auth.BOT_PLAY, auth.OPERATE)

        async def here() -> pb.LookupAccountResponse:  # on the partition's owner: counted once
            wait = await self._accounts.limiter.retry_after(LOOKUPS, "lookup", caller.subject)
            if wait is not None:
                raise RateLimited(wait, "account's lookups")
            found = self._accounts.lookup(name=request.name, account_id=request.account_id)
            return pb.LookupAccountResponse(account=found)

        if request.name:
            partition = self._accounts.name_partition(request.name)
        else:
            partition = self._accounts.account_partition(request.account_id)
        return await self._at(partition, "LookupAccount", request, context, here)

    @unary_errors
    async def SetDisplayName(
        self, request: pb.SetDisplayNameRequest, context: Context
    ) -> pb.SetDisplayNameResponse:
        check_lengths(request, LIMITS)

        async def here(caller: Principal) -> pb.SetDisplayNameResponse:
            return pb.SetDisplayNameResponse(
                account=await self._accounts.set_display_name(caller, request.display_name)
            )

        return await self._own("SetDisplayName", request, context, here, auth.PLAY, auth.OPERATE)

    # --- bots and personal tokens ---------------------------------------------------------------------

    @unary_errors
    async def CreateBotAccount(
        self, request: pb.CreateBotAccountRequest, context: Context
    ) -> pb.CreateBotAccountResponse:
        check_lengths(request, LIMITS)
        caller = self._caller(context, *HUMANS)

        async def here() -> pb.CreateBotAccountResponse:
            account = await self._accounts.create_bot(caller, request.name, request.display_name)
            return pb.CreateBotAccountResponse(account=account)

        return await self._at(
            self._accounts.name_partition(request.name), "CreateBotAccount", request, context, here
        )

    def _holder_partition(self, caller: Principal, account_id: str) -> int:
        return self._accounts.account_partition(account_id or caller.subject)

    @unary_errors
    async def CreateApiToken(
        self, request: pb.CreateApiTokenRequest, context: Context
    ) -> pb.CreateApiTokenResponse:
        check_lengths(request, LIMITS)
        caller = self._caller(context, *HUMANS)
        return await self._at(
            self._holder_partition(caller, request.account_id),
            "CreateApiToken",
            request,
            context,
            lambda: self._accounts.create_api_token(
                caller, request.account_id, request.scopes, request.label
            ),
        )

    @unary_errors
    async def ListApiTokens(
        self, request: pb.ListApiTokensRequest, context: Context
    ) -> pb.ListApiTokensResponse:
        check_lengths(request, LIMITS)
        caller = self._caller(context, *HUMANS)

        async def here() -> pb.ListApiTokensResponse:
            return pb.ListApiTokensResponse(tokens=self._accounts.list_api_tokens(caller, request.account_id))

        return await self._at(
            self._holder_partition(caller, request.account_id), "ListApiTokens", request, context, here
        )

    @unary_errors
    async def RevokeApiToken(
        self, request: pb.RevokeApiTokenRequest, context: Context
    ) -> pb.RevokeApiTokenResponse:
        check_lengths(request, LIMITS)
        caller = self._caller(context, *HUMANS)

        async def here() -> pb.RevokeApiTokenResponse:
            await self._accounts.revoke_api_token(caller, request.account_id, request.token_id)
            return pb.RevokeApiTokenResponse()

        return await self._at(
            self._holder_partition(caller, request.account_id), "RevokeApiToken", request, context, here
        )

    # --- operators ------------------------------------------------------------------------------------

    @unary_errors
    async def IssueResetLink(
        self, request: pb.IssueResetLinkRequest, context: Context
    ) -> pb.IssueResetLinkResponse:
        check_lengths(request, LIMITS)
        self._caller(context, auth.OPERATE)
        return await self._at(
            self._accounts.name_partition(request.name),
            "IssueResetLink",
            request,
            context,
            lambda: self._accounts.issue_reset(request.name),
        )

    @unary_errors
    async def ResetPassword(
        self, request: pb.ResetPasswordRequest, context: Context
    ) -> pb.ResetPasswordResponse:
        check_lengths(request, LIMITS)

        async def here() -> pb.ResetPasswordResponse:
            return pb.ResetPasswordResponse(
                name=await self._accounts.reset_password(request.reset_token, request.new_password)
            )

        partition = self._accounts.secret_partition(request.reset_token, credentials.RESET)
        if partition is None:
            return await here()  # refused without a hop
        return await self._at(partition, "ResetPassword", request, context, here)

    @unary_errors
    async def SetAccountStatus(
        self, request: pb.SetAccountStatusRequest, context: Context
    ) -> pb.SetAccountStatusResponse:
        check_lengths(request, LIMITS)
        self._caller(context, auth.OPERATE)

        async def here() -> pb.SetAccountStatusResponse:
            account = await self._accounts.set_status(request.name, request.status, request.reason)
            return pb.SetAccountStatusResponse(account=account)

        return await self._at(
            self._accounts.name_partition(request.name), "SetAccountStatus", request, context, here
        )

    @unary_errors
    async def CreateOperator(
        self, request: pb.CreateOperatorRequest, context: Context
    ) -> pb.CreateOperatorResponse:
        check_lengths(request, LIMITS)
        self._caller(context, service_scope("admin"))

        async def here() -> pb.CreateOperatorResponse:
            return pb.CreateOperatorResponse(link=await self._accounts.create_operator(request.name))

        return await self._at(
            self._accounts.name_partition(request.name), "CreateOperator", request, context, here
        )

    # --- keys -----------------------------------------------------------------------------------------

    @unary_errors
    async def RotateSigningKey(
        self, request: pb.RotateSigningKeyRequest, context: Context
    ) -> pb.RotateSigningKeyResponse:
        self._caller(context, auth.OPERATE, service_scope("admin"))

        async def here() -> pb.RotateSigningKeyResponse:
            added = await self._keeper.rotate(force=True)
            assert added is not None
            return pb.RotateSigningKeyResponse(kid=added.kid, signs_from=added.signs_from)

        return await self._at(self._accounts.keyring_partition(), "RotateSigningKey", request, context, here)

    @unary_errors
    async def GetJwks(self, request: pb.GetJwksRequest, context: Context) -> pb.GetJwksResponse:
        ring = self._accounts.keyring
        if not ring.keys:
            raise Unavailable("no_keys_yet", "identity has no signing key yet: retry in a moment")
        return pb.GetJwksResponse(jwks=keys.jwks(ring), max_age_s=self._accounts.mint.policy.max_age_s)

    @unary_errors
    async def SignInWithProvider(
        self, request: pb.SignInWithProviderRequest, context: Context
    ) -> pb.SignInWithProviderResponse:
        check_lengths(request, LIMITS)
        self._caller(context, service_scope("web"))
        provider = self._provider
        if provider is None:
            raise Unavailable("no_provider", "no OpenID provider is configured (IDENTITY_OIDC_ISSUER)")
        # Checked at every instance the call reaches: the owner of the account's partition trusts no
        # other instance's word, and the subject must be known to find that owner.
        verified = await provider.verify(request.id_token, request.nonce)

        async def here() -> pb.SignInWithProviderResponse:
            session = await self._accounts.sign_in_with_provider(
                verified, request.device, lambda: provider.profile_name(verified, request.access_token)
            )
            return pb.SignInWithProviderResponse(session=session)

        partition = self._accounts.provider_partition(verified)
        return await self._at(partition, "SignInWithProvider", request, context, here)


def local_jwks(accounts: Accounts) -> Callable[[], tuple[str, float]]:
    """Identity verifies the tokens it issued with its own keyring, read in memory."""
    return lambda: (keys.jwks(accounts.keyring), 1.0)
