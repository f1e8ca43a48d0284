"""The FastAPI app of ``bgnet serve``: the JSON API over ``bgnet.serve.engine`` and the board page.

Every answer is JSON; every refusal is a 4xx with ``{"error": "one sentence"}``
(a ``BgnetError``, validation errors, unknown paths and oversized bodies), and
any other exception is a bug: a 500 with one sentence, the traceback only in
the server's log. The page and
the API docs (``/docs``, drawn by the app's own script from ``/openapi.json``)
are static files inside the package: nothing a page loads comes from outside
the app.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import fields
from pathlib import Path
from typing import Annotated, Any, Awaitable, Callable, MutableMapping, cast

from fastapi import FastAPI, File, Form, Query, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field, create_model
from starlette.exceptions import HTTPException as StarletteHTTPException


from bgnet.core.errors import BgnetError
from bgnet.cube.match import DECISION_SKIPS, DEFAULT_MONEY_RULES, CubeRules
from bgnet.serve.engine import ApiError, Engine, ServeConfig

STATIC = Path(__file__).with_name("static")
CONFIG_ENV = "BGNET_SERVE_CONFIG"
"""Environment variable carrying a JSON ``ServeConfig`` to each worker process (``--workers N``)."""

log = logging.getLogger("bgnet.serve")


def _version() -> str:
    """The installed package's version, for the API's OpenAPI page."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bgnet")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0.1.0"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class BodyLimit:
    """ASGI middleware: a request body over the limit gets 413 (from Content-Length, or while it streams in)."""

    def __init__(self, app: ASGIApp, limit: int, upload_limit: int, upload_paths: tuple[str, ...]) -> None:
        self.app = app
        self.limit = limit
        self.upload_limit = upload_limit
        self.upload_paths = upload_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.upload_limit + 64 * 1024 if scope["path"] in self.upload_paths else self.limit
        too_big = _error(413, f"the request body is larger than this server's limit of {limit} bytes")
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _error(400, "the Content-Length header is not a number")(scope, receive, send)
                    return
                if declared > limit:
                    await too_big(scope, receive, send)
                    return
        # Read the body here, up to the limit, and hand it on whole: a framework reading it later
        # would turn an exception from receive() into its own 400.
        chunks: list[bytes] = []
        seen = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body = message.get("body", b"")
            seen += len(body)
            if seen > limit:
                await too_big(scope, receive, send)
                return
            chunks.append(body)
            more = bool(message.get("more_body", False))
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class Lanes:
    """Worker threads by cost: quick 0-ply requests never wait behind a queue of 1-ply or deeper ones.

    Each lane is an anyio capacity limiter over the shared thread pool. The engine
    releases the GIL in its kernels and matrix products, so a few threads per lane
    keep both cores busy; more would only take turns at the GIL.
    """

    def __init__(self, quick: int = 4, search: int = 1, deep: int = 2) -> None:
        import anyio

        self.limiters = (anyio.CapacityLimiter(quick), anyio.CapacityLimiter(search), anyio.CapacityLimiter(deep))

    async def run(self, ply: int, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in a worker thread of the lane for a ``ply``-deep request."""
        from anyio import to_thread

        return await to_thread.run_sync(fn, *args, limiter=self.limiters[min(max(ply, 0), 2)])


def rule_fields(skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """One optional field per ``CubeRules`` field (``jacoby``, ..., ``max_cube``): the API's twin of the command
    line's rule flags (``bgnet.cli.parser.add_cube_rule_arguments``); None: the ID's rule or the money default."""
    out: dict[str, Any] = {}
    for f in fields(CubeRules):
        if f.name in skip:
            continue
        if f.type in ("bool", bool):
            default = "on" if getattr(DEFAULT_MONEY_RULES, f.name) else "off"
            out[f.name] = (bool | None, Field(None, description=f"{f.metadata['help']} (default for money: {default})"))
        else:
            out[f.name] = (int | None, Field(None, ge=0, description=f.metadata["help"]))
    return out


DecisionRules = create_model("DecisionRules", **rule_fields(DECISION_SKIPS))
"""The cube rules a hint, a cube decision or a rollout takes, as query or JSON fields."""
GameRules = create_model("GameRules", **rule_fields())
"""The cube rules of a game against bgnet (with ``new``)."""


def chosen_rules(model: BaseModel | None) -> dict[str, Any]:
    """The rules a request chose, by name (those left out: the ID's or the money defaults)."""
    return {} if model is None else model.model_dump(exclude_none=True)


class _RolloutRequest(BaseModel):
    """A small rollout: of the position (cube decision) or, with dice, of each play."""

    position: str = Field(description="Position ID, PositionID:MatchID or XGID")
    dice: str | None = Field(None, description="the roll, e.g. 31; omit to roll out the position itself")
    plays: list[str] | None = Field(None, max_length=10, description="the plays to roll out (default: those the hint's filter keeps)")
    trials: int = Field(144, ge=1, description="games to play out per play (the server caps this)")
    truncate: int | None = Field(None, ge=1, description="stop each trial after this many plies and use the net")
    ply: int = Field(0, ge=0, le=1, description="search depth of the plays inside the trials")
    cubeful: bool = False
    seed: int = Field(0, ge=0, description="the same seed gives the same result")


RolloutRequest = create_model("RolloutRequest", __base__=_RolloutRequest, __doc__=_RolloutRequest.__doc__,
                              **rule_fields(DECISION_SKIPS))


class _PlayRequest(BaseModel):
    """One action in a game against bgnet; send back the ``state`` of the previous answer."""

    action: str = Field(description="new, roll, double, take, pass, move or next")
    state: dict[str, Any] | None = Field(None, description="the state returned by the previous call (not for 'new')")
    move: str | None = Field(None, description="for 'move': the play's text (24/18 13/11) or its afterstate Position ID")
    length: int = Field(0, ge=0, description="for 'new': match length, 0 for a money game")
    seed: int | None = Field(None, ge=0, description="for 'new': dice seed (default random); the same seed replays the same dice")


PlayRequest = create_model("PlayRequest", __base__=_PlayRequest, __doc__=_PlayRequest.__doc__, **rule_fields())


def create_app(config: ServeConfig = ServeConfig(), engine: Engine | None = None, warm: bool = True) -> FastAPI:
    """The app with its own Engine (the net loaded once, here) and request limits from ``config``."""
    engine = engine or Engine(config)
    if warm:
        engine.warm()
    config = engine.config
    app = FastAPI(title="bgnet", version=_version(),
                  description="Backgammon hints, cube decisions and games against the bgnet net. "
                              "Positions are gnubg Position IDs, PositionID:MatchID or XGIDs.",
                  docs_url=None, redoc_url=None)
    app.state.engine = engine
    lanes = Lanes()

    # -- errors: one sentence, never a traceback ------------------------------------------
    @app.exception_handler(ApiError)
    async def api_error(request: Request, err: ApiError) -> JSONResponse:
        return _error(err.status, str(err), {"Retry-After": "1"} if err.status == 429 else None)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, err: RequestValidationError) -> JSONResponse:
        first = err.errors()[0] if err.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("query", "body", "form"))
        what = str(first.get("msg", "invalid input")).rstrip(".")
        return _error(422, f"{where or 'the request'}: {what[0].lower() + what[1:] if what else what}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, err: StarletteHTTPException) -> JSONResponse:
        text = {404: f"there is nothing at {request.url.path}", 405: f"{request.method} is not allowed on {request.url.path}"}
        return _error(err.status_code, text.get(err.status_code, str(err.detail)))

    @app.exception_handler(BgnetError)
    async def bgnet_error(request: Request, err: BgnetError) -> JSONResponse:
        return _error(400, " ".join(str(err).split()) or type(err).__name__)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, err: Exception) -> JSONResponse:
        log.exception("internal error on %s", request.url.path)
        return _error(500, f"internal error ({type(err).__name__}); the server's log has the details")

    # -- the page and the docs ---------------------------------------------------------------
    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/docs", include_in_schema=False)
    def docs() -> FileResponse:
        return FileResponse(STATIC / "docs.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # -- the API ------------------------------------------------------------------------------
    pos_q = Query(..., description="Position ID, PositionID:MatchID or XGID", max_length=200)
    ply_q = Query(0, ge=0, description=f"search depth, 0 to {config.max_ply} on this server")

    @app.get("/api/health", tags=["server"])
    def health() -> dict[str, Any]:
        """Whether the server is up, which net it serves and its limits."""
        return {"status": "ok", "model": engine.model_path, "max_ply": config.max_ply, "deep_jobs": config.deep_jobs,
                "play_ply": config.play_ply, "rollout_max_trials": config.rollout_max_trials,
                "analyze_max_ply": config.analyze_max_ply, "pid": os.getpid()}

    @app.get("/api/position", tags=["positions"])
    async def position(position: str = pos_q) -> JSONResponse:
        """The board (26 slots from the side on roll), IDs, pips, match state and dice of a position."""
        return JSONResponse(await lanes.run(0, engine.position, position))

    @app.get("/api/moves", tags=["positions"])
    async def moves(position: str = pos_q, dice: str = Query(..., description="the roll, e.g. 31 or 3-1", max_length=8)) -> JSONResponse:
        """Every legal play of the roll with its afterstate, as ``bgnet moves --json``."""
        return JSONResponse(await lanes.run(0, engine.moves, position, dice))

    @app.get("/api/hint", tags=["hints"])
    async def hint(position: str = pos_q,
             dice: str | None = Query(None, description="the roll; without it (and no dice in the ID) the cube hint", max_length=8),
             ply: int = ply_q, cubeful: bool = Query(False, description="rank plays by cubeful equity"),
             top: int | None = Query(None, ge=1, description="only the best N plays"),
             rules: Annotated[DecisionRules, Query()] = None) -> JSONResponse:  # type: ignore[valid-type,assignment]
        """Ranked plays with equities and chances, as ``bgnet hint --json`` (plus each play's steps)."""
        return JSONResponse(await lanes.run(ply, engine.hint, position, dice, ply, cubeful, top, chosen_rules(rules)))

    @app.get("/api/cube", tags=["hints"])
    async def cube(position: str = pos_q, ply: int = ply_q,
                   rules: Annotated[DecisionRules, Query()] = None) -> JSONResponse:  # type: ignore[valid-type,assignment]
        """The cube decision of the side on roll, as ``bgnet cube --json``."""
        return JSONResponse(await lanes.run(ply, engine.cube, position, ply, chosen_rules(rules)))

    @app.post("/api/play", tags=["play"])
    async def play(request: PlayRequest) -> JSONResponse:  # type: ignore[valid-type]
        """One action of the player in a game against bgnet; bgnet answers and acts until it is the player's turn."""
        body = cast(BaseModel, request).model_dump()
        body["rules"] = chosen_rules(GameRules(**{k: body.pop(k) for k in GameRules.model_fields}))
        return JSONResponse(await lanes.run(config.play_ply, engine.play, body))

    @app.post("/api/rollout", tags=["hints"])
    async def rollout(request: RolloutRequest) -> JSONResponse:  # type: ignore[valid-type]
        """A small rollout (the server caps the trials); refused with 429 while other deep work runs."""
        r = cast(_RolloutRequest, request)
        rules = chosen_rules(DecisionRules(**{k: getattr(request, k) for k in DecisionRules.model_fields}))
        return JSONResponse(await lanes.run(2, engine.rollout, r.position, r.dice, r.trials, r.truncate, r.ply,
                                            r.cubeful, r.seed, r.plays, rules))

    @app.post("/api/analyze", tags=["analysis"])
    async def analyze(file: UploadFile = File(..., description="a .mat or .sgf match file"),
                      ply: int = Form(0, ge=0), lenient: bool = Form(False)) -> JSONResponse:
        """Every decision of an uploaded match rated (size-limited upload)."""
        data = await file.read(config.max_upload_bytes + 1)
        return JSONResponse(await lanes.run(2, engine.analyze, file.filename or "upload", data, ply, lenient))

    app.add_middleware(BodyLimit, limit=config.max_body_bytes, upload_limit=config.max_upload_bytes,  # type: ignore[arg-type]
                       upload_paths=("/api/analyze",))
    return app


def app_from_env() -> Any:
    """The app for one worker process, configured by ``$BGNET_SERVE_CONFIG`` (uvicorn's factory for ``--workers``)."""
    raw = os.environ.get(CONFIG_ENV, "{}")
    return create_app(ServeConfig(**json.loads(raw)))

