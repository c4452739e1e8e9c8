"""The OpenAPI 3.1 document of the bot API (bot_api.py), served at `/api/openapi.json` and
`/api/v1/openapi.json`, so a bot writer's tools generate a client from it. Written by hand next to the
routes (services/web/tests/test_bot_api.py checks each documented path against the app's routes and each
/api/v1 route against the document); the JSON bodies of the game are protobuf's JSON mapping of the
protos' messages, referred to by name rather than restated."""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from meldstream_web.challenges import REASONS

NDJSON: Final = "application/x-ndjson"
ERROR: Final = {"$ref": "#/components/responses/Error"}
LIMITED: Final = {"$ref": "#/components/responses/Limited"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _stream(description: str) -> dict[str, Any]:
    line = {"type": "object", "description": "one JSON object a line; empty lines keep the stream alive"}
    return {"description": description, "content": {NDJSON: {"schema": line}}}


def _body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": required}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _operation(summary: str, ok: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"summary": summary, "responses": {"200": ok, "429": LIMITED, "default": ERROR}, **more}


GAME: Final = {"name": "game", "in": "path", "required": True, "schema": {"type": "string", "maxLength": 64}}
OBJECT: Final = {"type": "object"}
CHALLENGE_ID: Final = {
    "name": "challenge",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "maxLength": 25},
}
CHALLENGE: Final = {"$ref": "#/components/schemas/Challenge"}
PUBLIC: Final[list[dict[str, list[str]]]] = [{}]  # no token needed

DOCUMENT: Final[dict[str, Any]] = {
    "openapi": "3.1.0",
    "info": {
        "title": "meldstream bot and board API",
        "version": "1",
        "description": "Bots and boards over HTTP: docs/clients/http-api.md. Game messages are the protos' "
        "(protos/rummy in the repository) in protobuf's JSON mapping, field names as in the .proto.",
    },
    "servers": [{"url": "/"}],
    "security": [{"bearer": []}],
    "paths": {
        "/api/v1/token": {
            "post": _operation(
                "Exchange a personal API token (a bot's) for an access token (identity's ExchangeApiToken)",
                _json(
                    {
                        "type": "object",
                        "properties": {"access_token": {"type": "string"}, "expires_at": {"type": "number"}},
                    },
                    "a bearer access token and its expiry (Unix seconds); exchange again before it",
                ),
                security=PUBLIC,
                requestBody=_body({"api_token": {"type": "string", "maxLength": 512}}, ["api_token"]),
            )
        },
        "/api/v1/account": {
            "get": _operation(
                "Who the token names",
                _json(
                    {
                        "type": "object",
                        "properties": {
                            "player": {"type": "string"},
                            "display_name": {"type": "string"},
                            "kind": {"type": "string"},
                            "scopes": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                    "the account",
                ),
            )
        },
        "/api/v1/variants": {
            "get": _operation(
                "The playable variants, what a short match of each is, their facts, the out-of-turn actions",
                _json(OBJECT, "`{variants, short, facts, out_of_turn}`"),
                security=PUBLIC,
            )
        },
        "/api/v1/seek": {
            "post": _operation(
                "A table of the caller and the platform's bots (the web app's quick play)",
                _json(
                    {
                        "type": "object",
                        "properties": {"game_id": {"type": "string"}, "seat": {"type": "integer"}},
                    },
                    "the game, which also starts on the account's event stream",
                ),
                requestBody=_body(
                    {
                        "variant": {"type": "string", "maxLength": 32},
                        "players": {"type": "integer", "minimum": 2, "default": 2},
                        "length": {"enum": ["short", "full"], "default": "short"},
                    },
                    ["variant"],
                ),
            )
        },
        "/api/v1/stream/event": {
            "get": _operation(
                "The account's games starting (`gameStart`) and ending (`gameFinish`, with scoring's "
                "result), and its challenges (`challenge`, `challengeDeclined`, `challengeCanceled`)",
                _stream(
                    "NDJSON: `{type, game, result?}` or `{type, challenge}` a line, the games in play and "
                    "the open challenges first"
                ),
            )
        },
        "/api/v1/accounts/{name}": {
            "get": _operation(
                "Another account by its name, to challenge it (404 `no_account` alike for a name never "
                "used and an account that may not play)",
                _json(
                    {
                        "type": "object",
                        "properties": {
                            "player": {"type": "string", "description": "the account id: challenge this"},
                            "name": {"type": "string"},
                            "display_name": {
                                "type": "string",
                                "description": "text: never show it as markup",
                            },
                            "kind": {"type": "string", "description": "human, bot, guest or operator"},
                        },
                    },
                    "the account's public face",
                ),
                parameters=[
                    {
                        "name": "name",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "maxLength": 64},
                    }
                ],
            )
        },
        "/api/v1/challenge": {
            "get": _operation(
                "The caller's challenges of the last 10 minutes, made to it (`in`) and by it (`out`)",
                _json(
                    {
                        "type": "object",
                        "properties": {
                            "in": {"type": "array", "items": CHALLENGE},
                            "out": {"type": "array", "items": CHALLENGE},
                        },
                    },
                    "each challenge with its status (`created`: not answered yet), the newest last",
                ),
            )
        },
        "/api/v1/challenge/{account}": {
            "post": _operation(
                "Challenge another account (its player id) to a game of two (a private table only it may "
                "join); 404 `no_account` when no such account may play",
                _json(CHALLENGE, "the challenge, `status` created; it expires at `expires_at` undecided"),
                parameters=[
                    {
                        "name": "account",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "maxLength": 64},
                    }
                ],
                requestBody=_body(
                    {
                        "variant": {"type": "string", "maxLength": 32},
                        "length": {"enum": ["short", "full"], "default": "short"},
                        "options": {"type": "object", "maxProperties": 16, "description": "house rules"},
                        "turn_timeout_ms": {"type": "integer", "description": "0 (default) or 5000-600000"},
                        "time_bank_ms": {
                            "type": ["integer", "null"],
                            "description": "each seat's time bank: absent or null (default), 0 (none) or "
                            "5000-600000; 400 `bad_clock` outside",
                        },
                    },
                    ["variant"],
                ),
            )
        },
        "/api/v1/challenge/{challenge}/accept": {
            "post": _operation(
                "Accept a challenge made to the caller: the game starts on both accounts' event streams",
                _json(CHALLENGE, "the challenge, `status` accepted, with its `game_id`"),
                parameters=[CHALLENGE_ID],
            )
        },
        "/api/v1/challenge/{challenge}/decline": {
            "post": _operation(
                "Decline a challenge made to the caller; the challenger's stream gets `challengeDeclined`",
                _json(CHALLENGE, "the challenge, `status` declined"),
                parameters=[CHALLENGE_ID],
                requestBody={
                    "required": False,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"reason": {"enum": sorted(REASONS), "default": "generic"}},
                            }
                        }
                    },
                },
            )
        },
        "/api/v1/challenge/{challenge}/cancel": {
            "post": _operation(
                "Cancel a challenge the caller made; the challenged's stream gets `challengeCanceled`",
                _json(CHALLENGE, "the challenge, `status` canceled"),
                parameters=[CHALLENGE_ID],
            )
        },
        "/api/v1/games/{game}/stream": {
            "get": _operation(
                "One game's updates (GameUpdate): the view, the event, and the seat's legal actions",
                _stream(
                    "NDJSON: `{type: gameState, seat, seq, event_type, view, legal_actions}` a line, and "
                    "chat lines as `{type: chatLine, id, room, channel, author, name, text, at, offset}`"
                ),
                parameters=[
                    GAME,
                    {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0}},
                ],
            )
        },
        "/api/v1/games/{game}/move": {
            "post": _operation(
                "Send one of the seat's listed legal actions (SubmitAction)",
                _json(OBJECT, "SubmitActionResponse: the seqs appended (`duplicate`: a repeated command)"),
                parameters=[GAME],
                requestBody=_body(
                    {
                        "action": {"type": "object", "description": "an Action as legal_actions listed it"},
                        "command_id": {"type": "string", "maxLength": 128},
                        "seat": {"type": "integer", "minimum": 0},
                    },
                    ["action"],
                ),
            )
        },
        "/api/v1/games/{game}/seed": {
            "post": _operation(
                "Send the seat's own random seed before the first deal (ContributeSeed), so that no one "
                "chooses the deals; `bad_seed_length`, `seed_already_sent` (one per seat), "
                "`seed_window_closed` (dealt already)",
                _json(OBJECT, "ContributeSeedResponse: the seq of its SeedContributed event"),
                parameters=[GAME],
                requestBody=_body(
                    {
                        "seed": {
                            "type": "string",
                            "pattern": "^([0-9a-fA-F]{2}){16,64}$",
                            "maxLength": 128,
                            "description": "16-64 random bytes as hex",
                        },
                        "seat": {"type": "integer", "minimum": 0},
                    },
                    ["seed"],
                ),
            )
        },
        "/api/v1/games/{game}/chat": {
            "post": _operation(
                "Say a line in the game's chat (players' channel when seated, else spectators'); "
                "`too_long` past 300 characters, 429 `rate_limited` past the chat limit",
                _json(OBJECT, "the line as written (`text` masked for the operators' blocked words)"),
                parameters=[GAME],
                requestBody=_body({"text": {"type": "string", "maxLength": 300}}, ["text"]),
            )
        },
        "/api/v1/openapi.json": {
            "get": _operation("This document", _json(OBJECT, "OpenAPI 3.1"), security=PUBLIC)
        },
        "/api/openapi.json": {
            "get": _operation("This document", _json(OBJECT, "OpenAPI 3.1"), security=PUBLIC)
        },
    },
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
        "schemas": {
            "Challenge": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "status": {"enum": ["created", "accepted", "declined", "canceled"]},
                    "challenger": {"type": "string"},
                    "challenger_name": {"type": "string", "description": "text: never show it as markup"},
                    "challenger_bot": {"type": "boolean"},
                    "challenged": {"type": "string"},
                    "challenged_name": {"type": "string", "description": "text: never show it as markup"},
                    "variant": {"type": "string"},
                    "options": {"type": "object"},
                    "turn_timeout_ms": {"type": "integer"},
                    "time_bank_ms": {
                        "type": ["integer", "null"],
                        "description": "null: the engine's default",
                    },
                    "expires_at": {"type": "number", "description": "Unix seconds"},
                    "reason": {"type": "string", "description": "a decline's reason, else empty"},
                    "game_id": {"type": "string", "description": "an accepted challenge's game, else empty"},
                },
            },
            "Error": {
                "type": "object",
                "properties": {
                    "status": {"type": "string", "description": "the gRPC status name"},
                    "code": {"type": "string", "description": "the reason code (docs/clients/errors.md)"},
                    "message": {"type": "string"},
                },
                "required": ["status", "code", "message"],
            },
        },
        "responses": {
            "Error": _json({"$ref": "#/components/schemas/Error"}, "a refusal"),
            "Limited": {
                **_json({"$ref": "#/components/schemas/Error"}, "too many calls: `rate_limited`"),
                "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "seconds"}},
            },
        },
    },
}


async def document(_request: Request) -> Response:
    return JSONResponse(DOCUMENT)
