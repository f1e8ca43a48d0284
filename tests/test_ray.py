"""The Ray backend on a local Ray instance: same results as local, retries that neither lose nor duplicate work,
cancellation, and self-play training on two actors that checkpoints and resumes."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'bgnet[ray]'); the Ray backend is untested")

import torch  # noqa: E402

import bgnet.sim.runner as runner  # noqa: E402
from bgnet.sim.backends import LocalBackend, RayBackend, map_chunks, split  # noqa: E402
from bgnet.sim.runner import DuelSpec, run_duel  # noqa: E402
from bgnet.play.game import Rules  # noqa: E402
from bgnet.nets.model import BgNet, ModelConfig, read_checkpoint, save_checkpoint  # noqa: E402
from bgnet.trainer.distributed import RaySelfPlay, SelfPlayActor, quotas, unpack  # noqa: E402
from bgnet.cli.train import main as train_run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TINY = ["--games=64", "--batch_games=16", "--hidden=[8]", "--train_batch=256", "--minibatch=64", "--sync_games=32",
        "--eval_every=0", "--checkpoint_every=32", "--log_every=32", "--no-progress"]


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    """One local Ray instance with 2 CPUs for the whole module (starting Ray takes seconds)."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import this test module
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def noisy_sum(shared: np.ndarray, chunk: tuple[int, int], seed: int) -> tuple[int, float]:
    """A chunk's result from the shared array, the chunk and the chunk's own seed."""
    lo, hi = chunk
    return lo, float((shared[lo:hi] * np.random.default_rng(seed).random(hi - lo)).sum())


def _claim(path: Path) -> bool:
    """True for the one caller that creates ``path`` first (across processes)."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


class Flaky:
    """Chunk 0 raises on its first try, chunk 1's worker process dies on its first try; successes are logged."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)

    def __call__(self, shared: np.ndarray, chunk: tuple[int, int], seed: int) -> tuple[int, float]:
        if chunk[0] == 0 and _claim(self.folder / "raised"):
            raise RuntimeError("a transient failure")
        if chunk[0] == 10 and _claim(self.folder / "died"):
            os._exit(1)
        with open(self.folder / "done.log", "a") as fh:
            fh.write(f"{chunk[0]}\n")
        return noisy_sum(shared, chunk, seed)


def test_ray_backend_equals_local_for_the_same_seed() -> None:
    shared = np.arange(50, dtype=np.float64)
    chunks = split(50, 6)
    local = map_chunks(LocalBackend(1), noisy_sum, chunks, shared, seed=21)
    for workers in (1, 2):
        assert map_chunks(RayBackend(num_workers=workers), noisy_sum, chunks, shared, seed=21) == local
    assert [lo for lo, _ in local] == [lo for lo, _ in chunks]


def test_a_task_that_raises_or_dies_once_is_retried_without_loss_or_duplicates(tmp_path: Path) -> None:
    shared = np.linspace(0.0, 1.0, 40)
    chunks = split(40, 10)
    got = map_chunks(RayBackend(num_workers=2), Flaky(str(tmp_path)), chunks, shared, seed=4)
    assert (tmp_path / "raised").exists() and (tmp_path / "died").exists()  # both failures really happened
    assert got == map_chunks(LocalBackend(1), noisy_sum, chunks, shared, seed=4)
    assert sorted(int(x) for x in (tmp_path / "done.log").read_text().split()) == [0, 10, 20, 30]


def slow_after_first(shared: None, chunk: int, seed: int) -> int:
    """Chunk 0 returns at once, the others would run for a minute."""
    if chunk:
        time.sleep(60)
    return chunk


def test_stopping_early_cancels_the_tasks_still_running() -> None:
    backend = RayBackend(num_workers=2)
    results = backend.imap(slow_after_first, [0, 1, 2, 3], None)
    assert next(results) == 0
    results.close()  # what a Ctrl-C in the consuming loop does: the generator's cleanup cancels the rest
    deadline = time.perf_counter() + 20
    while ray.available_resources().get("CPU", 0) < 2 and time.perf_counter() < deadline:
        time.sleep(0.2)
    assert ray.available_resources().get("CPU", 0) == 2  # no task is left sleeping on a CPU
    assert map_chunks(backend, noisy_sum, [(0, 2), (2, 4)], np.ones(4), seed=1)[1][0] == 2


def test_duels_on_ray_equal_the_local_duels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(0)
    net_path = tmp_path / "tiny.pt"
    save_checkpoint(net_path, BgNet(ModelConfig(hidden=(16,))))  # the agent's weights travel through ray.put
    monkeypatch.setattr(runner, "VECTOR_CHUNK", 6)
    monkeypatch.setattr(runner, "LOOP_CHUNK", 3)
    backend = RayBackend(num_workers=2)
    for spec in (DuelSpec(str(net_path), "pubeval", 14, seed=3),
                 DuelSpec("pubeval", "random", 7, seed=8, rules=Rules(match_length=3))):
        local = run_duel(spec, workers=1, progress=False)
        on_ray = run_duel(spec, progress=False, backend=backend)
        assert on_ray.points == local.points and on_ray.summary() == local.summary()
        assert local.games == 2 * spec.pairs if spec.rules is None else local.matches == 2 * spec.pairs


def test_rollouts_and_labels_on_ray_equal_the_local_ones(tmp_path: Path) -> None:
    from bgnet.nets.fastnet import load_numpy_net
    from bgnet.sim.rollout import RolloutSettings, rollout
    from bgnet.trainer.labels import label_positions
    from bgnet.sim.selfplay import START_BOARD

    torch.manual_seed(2)
    net_path = tmp_path / "net.pt"
    save_checkpoint(net_path, BgNet(ModelConfig(hidden=(64,))))
    fn = load_numpy_net(net_path).probs_of_boards
    backend = RayBackend(num_workers=2)
    kw: dict[str, Any] = {"trials": 48, "truncate": 5, "chunk_size": 12, "seed": 9}
    local = rollout(fn, "4HPwATDgc/ABMA", "31", backend=LocalBackend(1), **kw)
    on_ray = rollout(fn, "4HPwATDgc/ABMA", "31", backend=backend, **kw)
    assert local.to_dict() == on_ray.to_dict() and local.trials_done == 48
    assert local.to_dict() != rollout(fn, "4HPwATDgc/ABMA", "31", backend=backend, **{**kw, "seed": 10}).to_dict()
    boards = np.tile(START_BOARD, (4, 1))
    st = RolloutSettings(truncate=4)
    a = label_positions(fn, boards, trials=24, seed=1, batch=48, settings=st, backend=LocalBackend(1))
    b = label_positions(fn, boards, trials=24, seed=1, batch=48, settings=st, backend=backend)
    assert all(np.array_equal(x, y) for x, y in zip(a, b)) and (a[2] > 0).any()


def test_an_unreachable_cluster_is_one_sentence() -> None:
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "eval", "pubeval", "random", "--games", "2", "--quiet",
                           "--backend", "ray", "--ray-address", "127.0.0.1:1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "cannot reach a Ray cluster at '127.0.0.1:1'" in proc.stderr


class FlakyActor(SelfPlayActor):
    """A self-play actor whose first round raises and whose second round kills its process (each once, any actor)."""

    folder = ""

    def play_round(self, state: dict[str, Any], weights: dict[str, np.ndarray], quota: int,
                   exploration: float) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        folder = Path(self.folder)
        if _claim(folder / "raised"):
            raise RuntimeError("a transient failure")
        if (folder / "round2").exists() and _claim(folder / "died"):
            os._exit(1)
        return super().play_round(state, weights, quota, exploration)


def test_an_actor_that_raises_or_dies_once_loses_and_duplicates_no_games(tmp_path: Path) -> None:
    torch.manual_seed(1)
    net = BgNet(ModelConfig(hidden=(8,)))
    FlakyActor.folder = str(tmp_path)
    play = RaySelfPlay(net, seed=5, workers=2, batch_games=8, sync_games=12, max_plies=300, actor_class=FlakyActor)
    start = [ray.get(ref) for ref in play.states]
    first = play.step()
    (tmp_path / "round2").touch()
    second = play.step()
    play.close()
    assert (tmp_path / "raised").exists() and (tmp_path / "died").exists()  # both failures really happened
    # the same two rounds computed here, in this process, by the actors' own code
    weights = {k: v.numpy() for k, v in net.state_dict().items()}
    config = {**dataclasses.asdict(net.config), "hidden": list(net.config.hidden)}
    expected = []
    for _round in range(2):
        for i, quota in enumerate(quotas(12, 2)):
            state, games = SelfPlayActor(config, 8, 300, 1).play_round(start[i], weights, quota, 0.0)
            start[i] = state
            expected.extend(unpack(games))
    got = first + second
    assert len(got) == len(expected) >= 24
    for a, b in zip(expected, got):
        assert a.result == b.result and np.array_equal(a.boards, b.boards) and np.array_equal(a.values, b.values)


def _train(*args: str) -> None:
    assert train_run(["--config", str(ROOT / "configs" / "quick.toml"), *args]) == 0


def test_training_on_two_actors_checkpoints_and_resumes_exactly(tmp_path: Path) -> None:
    straight, broken, other = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    _train(*TINY, "--backend", "ray", "--workers", "2", "--out", str(straight))
    _train(*TINY, "--backend", "ray", "--workers", "2", "--out", str(broken), "--stop-after=30")
    part = read_checkpoint(broken / "last.pt")
    assert 30 <= part["games"] < 64
    assert part["config"]["backend"] == "ray" and part["config"]["workers"] == 2
    assert part["selfplay"]["workers"] == 2 and len(part["selfplay"]["actors"]) == 2
    assert train_run(["--resume", str(broken / "last.pt"), "--out", str(broken), "--no-progress"]) == 0
    a, b = read_checkpoint(straight / "last.pt"), read_checkpoint(broken / "last.pt")
    assert a["games"] == b["games"] == 64
    for k in a["model"]:
        assert torch.equal(a["model"][k], b["model"][k]), k
    first = read_checkpoint(sorted(straight.glob("games_*.pt"))[0])
    assert any(not torch.equal(first["model"][k], a["model"][k]) for k in a["model"])  # it really trained
    # a different worker count resumes too (fresh streams for the games in progress)
    assert train_run(["--resume", str(broken / "last.pt"), "--out", str(other), "--workers", "1", "--games=96",
                      "--no-progress"]) == 0
    c = read_checkpoint(other / "last.pt")
    assert c["games"] == 96 and c["config"]["workers"] == 1 and c["selfplay"]["workers"] == 1
