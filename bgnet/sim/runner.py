"""Runs a paired duel between two agent specs: chunks of deals, optional worker processes, a progress bar.

The deals are cut into fixed chunks; each chunk is played by ``bgnet.sim.duel`` (the
vectorised cubeless engine when both agents have a batch scorer and no cube is in
play, else the game-loop engine). A chunk's games depend only on the seed and its
deal numbers, so one process or K workers give identical results.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from bgnet.core.errors import BgnetError
from bgnet.sim.backends import Backend
from bgnet.sim.duel_luck import DuelLuck, default_duel_luck
from bgnet.sim.duel import DuelResult, TableOutcome, play_cubeless, play_deals, summarise_outcomes
from bgnet.play.game import Rules

VECTOR_CHUNK = 256
"""Deals per chunk on the vectorised cubeless engine."""
LOOP_CHUNK = 256
"""Deals per chunk on the game-loop engine."""


class DuelSpecError(BgnetError):
    """A duel that asks for something its rules or players cannot give (the luck with the cube)."""


@dataclass(frozen=True)
class DuelSpec:
    """Everything that defines a duel's games: both agents, the rules, the deals and the seed."""

    agent_a: str
    agent_b: str
    pairs: int
    seed: int = 0
    rules: Rules | None = None
    """None: cubeless money play."""
    luck: bool = False
    """Also measure each table's luck (``bgnet.sim.duel_luck``, judged by the released net) for a luck-adjusted
    summary; cubeless money only, on either engine (``DuelSpecError`` otherwise)."""

    def agent_seed(self, index: int) -> int:
        """Seed for agent ``index`` (0 = A, 1 = B): differs per side so two random players differ."""
        return int(np.random.SeedSequence([self.seed, 0xA6E, index]).generate_state(1)[0])


_AGENTS: dict[tuple[str, int], Any] = {}


def agent(spec: str, seed: int) -> Any:
    """The agent for ``spec`` (loaded once per process)."""
    key = (spec, seed)
    if key not in _AGENTS:
        from bgnet.play.agents import load_agent

        _AGENTS[key] = load_agent(spec, seed=seed)
    return _AGENTS[key]


def engine(spec: DuelSpec) -> str:
    """"vectorised" when both agents have a batch scorer and no cube is in play, else "game loop"."""
    return _engine_of(agent(spec.agent_a, spec.agent_seed(0)), agent(spec.agent_b, spec.agent_seed(1)), spec.rules)


def _engine_of(a: Any, b: Any, rules: Rules | None) -> str:
    """The engine for agents ``a`` and ``b`` under ``rules`` (see ``engine``)."""
    cubeless = rules is None or (rules.is_money and not rules.cubeful)
    if cubeless and a.batch_scorer() is not None and b.batch_scorer() is not None:
        return "vectorised"
    return "game loop"


def _luck(spec: DuelSpec) -> DuelLuck | None:
    """The judge of the duel's luck when it asks for one (loaded once per process)."""
    return default_duel_luck() if spec.luck else None


def check_luck(spec: DuelSpec) -> None:
    """``DuelSpecError`` when ``spec`` asks for the luck where it cannot be measured: with the cube or in matches
    (the luck is cubeless money equity)."""
    if not spec.luck:
        return
    if spec.rules is not None and not (spec.rules.is_money and not spec.rules.cubeful):
        raise DuelSpecError("the luck-adjusted result needs cubeless money games (no --cubeful or --match)")


def chunks(spec: DuelSpec) -> list[tuple[int, int]]:
    """The fixed split of deals into (first, end) chunks."""
    size = VECTOR_CHUNK if engine(spec) == "vectorised" else LOOP_CHUNK
    return [(lo, min(lo + size, spec.pairs)) for lo in range(0, spec.pairs, size)]


def play_chunk(job: tuple[DuelSpec, int, int]) -> list[TableOutcome]:
    """Play deals ``first ... end - 1`` of a duel (in this process)."""
    spec, first, end = job
    _init_worker()
    a, b = agent(spec.agent_a, spec.agent_seed(0)), agent(spec.agent_b, spec.agent_seed(1))
    deals = range(first, end)
    if engine(spec) == "vectorised":
        return play_cubeless(a.batch_scorer(), b.batch_scorer(), deals, spec.seed, luck=_luck(spec))
    return play_deals((a, b), spec.rules or Rules(cubeful=False), deals, spec.seed, luck=_luck(spec))


def shared_agents(spec: DuelSpec) -> tuple[Any, Any]:
    """Both agents as data to send once to every backend worker; one that cannot be pickled (gnubg) goes as its spec."""
    import pickle

    out: list[Any] = []
    for k, name in enumerate((spec.agent_a, spec.agent_b)):
        obj = agent(name, spec.agent_seed(k))
        try:
            pickle.dumps(obj)
        except (TypeError, AttributeError, pickle.PicklingError):
            obj = name
        out.append(obj)
    return out[0], out[1]


def play_chunk_shared(agents: tuple[Any, Any], job: tuple[DuelSpec, int, int], seed: int) -> list[TableOutcome]:
    """``bgnet.sim.backends`` chunk function: deals ``first ... end - 1`` with the agents from ``shared_agents``
    (``seed`` is unused: each deal's dice come from the duel's seed and the deal's number)."""
    spec, first, end = job
    a, b = (agent(x, spec.agent_seed(k)) if isinstance(x, str) else x for k, x in enumerate(agents))
    deals = range(first, end)
    if _engine_of(a, b, spec.rules) == "vectorised":
        return play_cubeless(a.batch_scorer(), b.batch_scorer(), deals, spec.seed, luck=_luck(spec))
    return play_deals((a, b), spec.rules or Rules(cubeful=False), deals, spec.seed, luck=_luck(spec))


def _init_worker() -> None:
    """One torch thread per process: the machine's cores go to the workers, and results do not depend on threads."""
    import torch

    torch.set_num_threads(1)


def run_duel(spec: DuelSpec, workers: int = 1, progress: bool = True, backend: Backend | None = None) -> DuelResult:
    """Play the whole duel and summarise it for A; the result depends on neither ``workers`` nor ``backend``."""
    agent(spec.agent_a, spec.agent_seed(0))
    agent(spec.agent_b, spec.agent_seed(1))  # load (and so validate) both agents here first
    check_luck(spec)
    jobs = [(spec, lo, hi) for lo, hi in chunks(spec)]
    outcomes: list[TableOutcome] = []
    bar = _bar(2 * spec.pairs, f"{spec.agent_a} vs {spec.agent_b}", progress)
    parts = _map(play_chunk, jobs, workers) if backend is None else backend.imap(play_chunk_shared, jobs, shared_agents(spec))
    for part in parts:
        outcomes.extend(part)
        if bar is not None:
            running = summarise_outcomes(outcomes)
            bar.update(len(part))
            bar.set_postfix(ppg=f"{running.ppg:+.3f}", ci=f"{running.ci95:.3f}", win=f"{running.win_rate:.3f}")
    if bar is not None:
        bar.close()
    return summarise_outcomes(outcomes)


def _map(fn: Callable[[Any], list[TableOutcome]], jobs: Sequence[Any], workers: int) -> Iterator[list[TableOutcome]]:
    """``map`` in order, in this process or over ``workers`` processes."""
    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            yield fn(job)
        return
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    with mp.get_context(method).Pool(min(workers, len(jobs)), initializer=_init_worker) as pool:
        yield from pool.imap(fn, jobs)


def _bar(total: int, desc: str, enabled: bool) -> Any:
    """A tqdm bar on stderr (None when disabled or stderr is not a terminal)."""
    if not enabled or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="game", leave=False)


def rules_dict(rules: Rules | None) -> dict[str, Any] | None:
    """The cube rules of a duel as the ``rules`` object of every ``--json`` (each rule by name and ``text``); None
    for cubeless money, where no cube rule applies."""
    if rules is None or not rules.cubeful:
        return None
    from bgnet.cube.decision import rules_dict as state_rules_dict
    from bgnet.cube.match import MatchState

    return state_rules_dict(MatchState(rules.match_length, rules=rules.cube_rules))
