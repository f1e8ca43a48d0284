"""Self-play on Ray actors: N actors play ``SelfPlay`` batches, the learner on the driver fits and broadcasts weights.

One ``RaySelfPlay.step`` is one round: the driver puts the net's current weights in
the object store once, and each actor i gets (its self-play state, the weights, its
share of ``sync_games``), plays its own batch of ``batch_games`` games with its own
seed stream until that many games have finished, and returns its new state and the
finished games as numpy arrays. The driver hands the games to the trainer's loop in
actor order, so the run is reproducible for a given worker count; the learner then
fits on them where it is (CPU or GPU) and the next round broadcasts the new weights.

A round is a pure function of its inputs (state, weights, quota): the new state is
returned, not kept, and stays in the object store as a reference for the next round.
So when an actor raises or its process dies, Ray restarts it and runs the round
again from the same inputs: no game is lost and none is counted twice.

Resuming with the same worker count continues every actor's games exactly; with a
different count the games in progress are dropped and each actor starts a fresh
seed stream derived from the run's seed and the checkpoint (said in one line).
"""

from __future__ import annotations

import sys
import weakref
from typing import Any, Protocol

import numpy as np

from bgnet.sim.backends import BackendError, ensure_ray, import_ray
from bgnet.sim.selfplay import ProbsFn, SelfPlay, Trajectory

RETRIES = 3
"""Restarts of a dead actor, and retries of its round, before the run fails."""


class GameSource(Protocol):
    """Where the trainer gets finished self-play games: this process or Ray actors."""

    def step(self, probs_fn: ProbsFn, exploration: float = 0.0) -> list[Trajectory]:
        """Play on; return the games that finished."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue the same games (numpy arrays and plain types)."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state_dict()`` output (of either backend)."""
        ...

    def close(self) -> None:
        """Release any workers."""
        ...


def actor_seed(seed: int, index: int, salt: int = 0) -> int:
    """The seed of actor ``index``'s game stream (``salt`` != 0: a fresh stream after a resume)."""
    return int(np.random.SeedSequence([int(seed), 0xAC7, int(index), int(salt)]).generate_state(1)[0])


def _state_salt(state: dict[str, Any]) -> int:
    """A number drawn from a saved self-play state, so fresh streams after a resume differ from the old ones."""
    streams = state.get("actors") or [state]
    text = "".join(str(s["rng"]["state"]) for s in streams)
    return int(np.random.SeedSequence([int(c) for c in text.encode()]).generate_state(1)[0]) | 1


def _notice(text: str) -> None:
    """One line on stderr."""
    print(f"train: {text}", file=sys.stderr)


class LocalSelfPlay(SelfPlay):
    """``SelfPlay`` in this process that can also resume from a Ray run's checkpoint."""

    def __init__(self, n_games: int, seed: int, max_plies: int = 600, threads: int = 1, bearoff: bool = True) -> None:
        super().__init__(n_games, seed=seed, max_plies=max_plies, threads=threads, bearoff=bearoff)
        self.seed = seed

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue a local state; a Ray state continues its single actor, or starts a fresh stream."""
        if "actors" not in state:
            super().load_state_dict(state)
            return
        actors = state["actors"]
        if len(actors) == 1 and np.asarray(actors[0]["boards"]).shape[0] == self.n_games:
            super().load_state_dict(actors[0])
            return
        _notice(f"resuming locally from {len(actors)} Ray actors: the games in progress are dropped "
                "and a fresh seed stream starts")
        fresh = SelfPlay(self.n_games, seed=actor_seed(self.seed, 0, _state_salt(state)), max_plies=self.max_plies)
        super().load_state_dict(fresh.state_dict())

    def close(self) -> None:
        """Nothing to release."""


def pack(done: list[Trajectory]) -> dict[str, np.ndarray]:
    """Finished games as four flat arrays (boards, values, lengths, results) for the trip to the driver."""
    if not done:
        return {"boards": np.zeros((0, 26), np.int8), "values": np.zeros((0, 5), np.float32),
                "lengths": np.zeros(0, np.int64), "results": np.zeros(0, np.int64)}
    return {"boards": np.concatenate([t.boards for t in done]), "values": np.concatenate([t.values for t in done]),
            "lengths": np.array([len(t.boards) for t in done], np.int64),
            "results": np.array([t.result for t in done], np.int64)}


def unpack(games: dict[str, np.ndarray]) -> list[Trajectory]:
    """The games ``pack`` flattened, back as Trajectory objects."""
    cuts = np.cumsum(games["lengths"])[:-1]
    boards = np.split(np.asarray(games["boards"]), cuts)
    values = np.split(np.asarray(games["values"]), cuts)
    return [Trajectory(b, v, int(r)) for b, v, r in zip(boards, values, games["results"])]


class SelfPlayActor:
    """One self-play worker (a Ray actor): a net and a ``SelfPlay`` batch, used round by round."""

    def __init__(self, model_config: dict[str, Any], batch_games: int, max_plies: int, kernel_threads: int,
                 bearoff: bool = True) -> None:
        import torch

        from bgnet.nets.model import BgNet, ModelConfig

        torch.set_num_threads(1)
        self.net = BgNet(ModelConfig.from_dict(model_config)).eval()
        self.play = SelfPlay(batch_games, seed=0, max_plies=max_plies, threads=kernel_threads, bearoff=bearoff)

    def play_round(self, state: dict[str, Any], weights: dict[str, np.ndarray], quota: int,
                   exploration: float) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """From ``state`` with ``weights``, play until ``quota`` games finish; (the new state, the games packed)."""
        import torch

        from bgnet.trainer.inference import make_probs_fn

        self.net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in weights.items()})
        self.play.load_state_dict(state)
        probs_fn = make_probs_fn(self.net, torch.device("cpu"), self.play.threads)
        done: list[Trajectory] = []
        while len(done) < quota:
            done.extend(self.play.step(probs_fn, exploration))
        return self.play.state_dict(), pack(done)


def quotas(sync_games: int, workers: int) -> list[int]:
    """Games each actor finishes per round: ``sync_games`` split as evenly as possible, at least 1 each."""
    return [max(1, sync_games // workers + (i < sync_games % workers)) for i in range(workers)]


def _kill(ray: Any, actors: list[Any], shutdown: bool) -> None:
    """Stop the actors (and Ray, when this run started it)."""
    if not ray.is_initialized():
        return
    for a in actors:
        try:
            ray.kill(a)
        except Exception:  # already gone
            pass
    if shutdown:
        ray.shutdown()


class RaySelfPlay:
    """``workers`` Ray actors playing self-play rounds with the weights of ``net`` (the learner's, on the driver)."""

    def __init__(self, net: Any, seed: int, workers: int, batch_games: int, sync_games: int, max_plies: int = 600,
                 kernel_threads: int = 1, address: str | None = None, actor_class: type = SelfPlayActor,
                 bearoff: bool = True) -> None:
        from dataclasses import asdict

        self.ray = ray = import_ray()
        self.started = ensure_ray(address or None, num_cpus=None if address else max(workers, _cpus()))
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus < workers:
            _kill(ray, [], self.started)
            raise BackendError(f"the Ray cluster has {cpus} CPUs; {workers} self-play workers need one each")
        self.net = net
        self.seed = seed
        self.workers = workers
        self.batch_games = batch_games
        self.sync_games = sync_games
        self.max_plies = max_plies
        config = {**asdict(net.config), "hidden": list(net.config.hidden)}
        remote = ray.remote(num_cpus=1, max_restarts=RETRIES, max_task_retries=RETRIES)(actor_class)
        self.actors = [remote.remote(config, batch_games, max_plies, kernel_threads, bearoff) for _ in range(workers)]
        self.states = [ray.put(self._fresh_state(i)) for i in range(workers)]
        self._finalizer = weakref.finalize(self, _kill, ray, list(self.actors), self.started)

    def _fresh_state(self, index: int, salt: int = 0) -> dict[str, Any]:
        """A new game stream for actor ``index``."""
        return SelfPlay(self.batch_games, seed=actor_seed(self.seed, index, salt), max_plies=self.max_plies).state_dict()

    def step(self, probs_fn: ProbsFn | None = None, exploration: float = 0.0) -> list[Trajectory]:
        """One round on every actor with the learner's current weights (``probs_fn`` is not used: weights travel)."""
        ray = self.ray
        weights = ray.put({k: v.detach().cpu().numpy() for k, v in self.net.state_dict().items()})
        calls = [actor.play_round.options(num_returns=2, retry_exceptions=True)
                 .remote(state, weights, quota, exploration)
                 for actor, state, quota in zip(self.actors, self.states, quotas(self.sync_games, self.workers))]
        try:
            games = ray.get([games_ref for _state, games_ref in calls])
        except KeyboardInterrupt:  # stop the actors (their round is lost, the last checkpoint is not)
            self.close()
            raise
        self.states = [state_ref for state_ref, _games in calls]
        return [t for g in games for t in unpack(g)]

    def state_dict(self) -> dict[str, Any]:
        """Every actor's games in progress, with the backend and worker count."""
        return {"backend": "ray", "workers": self.workers, "batch_games": self.batch_games,
                "actors": [{k: _plain(v) for k, v in a.items()} for a in self.ray.get(list(self.states))]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue a checkpoint's games: exactly with the same worker count (and batch), else fresh streams."""
        actors = state.get("actors")
        if actors is None:  # a local run's single stream
            actors = [state]
        same = len(actors) == self.workers and all(
            np.asarray(a["boards"]).shape[0] == self.batch_games for a in actors)
        if same:
            self.states = [self.ray.put({k: _plain(v) for k, v in a.items()}) for a in actors]
            return
        salt = _state_salt(state)
        _notice(f"resuming with {self.workers} workers (the checkpoint had {len(actors)} self-play streams of "
                f"{np.asarray(actors[0]['boards']).shape[0]} games): the games in progress are dropped and each "
                "actor starts a fresh seed stream")
        self.states = [self.ray.put(self._fresh_state(i, salt)) for i in range(self.workers)]

    def close(self) -> None:
        """Stop the actors, and Ray if this run started it."""
        self._finalizer()


def _plain(value: Any) -> Any:
    """A state value as a writable numpy array where it is an array or tensor (checkpoints store tensors)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.numpy().copy()
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


def _cpus() -> int:
    """This machine's CPU count."""
    import os

    return os.cpu_count() or 1


def make_selfplay(cfg: Any, net: Any) -> GameSource:
    """The trainer's game source for ``cfg.backend``: ``LocalSelfPlay`` here, or ``RaySelfPlay`` on actors."""
    if cfg.backend == "ray":
        from bgnet.trainer.config import ConfigError

        try:
            return RaySelfPlay(net, cfg.seed, cfg.workers, cfg.batch_games, cfg.sync_games, cfg.max_plies,
                               cfg.kernel_threads, cfg.ray_address or None, bearoff=cfg.bearoff_database)
        except BackendError as exc:
            raise ConfigError(str(exc)) from None
    return LocalSelfPlay(cfg.batch_games, seed=cfg.seed, max_plies=cfg.max_plies, threads=cfg.kernel_threads,
                         bearoff=cfg.bearoff_database)
