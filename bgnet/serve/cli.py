"""``bgnet serve``: its arguments and runner (the web packages are imported only when it runs)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``bgnet serve``."""
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 opens it to the network)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    parser.add_argument("--model", metavar="SPEC", default=None,
                        help="the net: default (the released net) or a checkpoint file (default: default)")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="server processes, each with its own copy of the net (default 1)")
    parser.add_argument("--max-ply", type=int, default=2, metavar="N",
                        help="deepest search a request may ask for (default 2)")
    parser.add_argument("--deep-jobs", type=int, default=1, metavar="N",
                        help="2-ply searches, rollouts and analyses run at once per process; more get HTTP 429 (default 1)")
    parser.add_argument("--play-ply", type=int, default=0, metavar="N",
                        help="the bot's search depth in games on the page (default 0)")
    parser.add_argument("--engine-lock", action="store_true",
                        help="run one engine call at a time in each process (a safety switch; slower)")


def run_serve(args: argparse.Namespace) -> int:
    """Load the net once, then serve the page and the API until interrupted."""
    from bgnet.serve.engine import ServeConfig, ServeConfigError

    if not 0 < args.port < 65536:
        raise ServeConfigError(f"--port must be from 1 to 65535, got {args.port}")
    if args.workers < 1:
        raise ServeConfigError(f"--workers must be at least 1, got {args.workers}")
    try:
        import fastapi  # noqa: F401
        import uvicorn
    except ImportError:
        raise ServeConfigError("bgnet serve needs the optional web packages: pip install 'bgnet[web]'") from None
    from bgnet.serve.app import CONFIG_ENV, create_app

    config = ServeConfig(model=args.model, max_ply=args.max_ply, deep_jobs=args.deep_jobs, play_ply=args.play_ply,
                         engine_lock=args.engine_lock)
    if args.host not in LOCAL_HOSTS:
        print(f"bgnet serve: listening on {args.host}, which other machines may reach; the API has no authentication",
              file=sys.stderr)
    started = time.perf_counter()
    url = f"http://{'[' + args.host + ']' if ':' in args.host else args.host}:{args.port}/"
    if args.workers == 1:
        from bgnet.core.first_run import compile_notice

        with compile_notice("bgnet serve"):  # a cold start says that numba is compiling, on stderr
            app = create_app(config)
        print(f"bgnet serve: net loaded in {time.perf_counter() - started:.2f} s; open {url} (Ctrl-C stops)",
              file=sys.stderr, flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    else:
        os.environ[CONFIG_ENV] = json.dumps({k: getattr(config, k) for k in config.__dataclass_fields__})
        print(f"bgnet serve: {args.workers} workers, each loading the net; open {url} (Ctrl-C stops)",
              file=sys.stderr, flush=True)
        uvicorn.run("bgnet.serve.app:app_from_env", factory=True, host=args.host, port=args.port,
                    workers=args.workers, log_level="warning")
    return 0
