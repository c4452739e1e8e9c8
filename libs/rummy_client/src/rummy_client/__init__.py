"""Client SDK for the meldstream game engine (grpc.aio), and bots that play through it."""

from rummy_client.client import GameClient, RpcFailure

__all__ = ["GameClient", "RpcFailure"]
