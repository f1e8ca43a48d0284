"""Players behind one protocol (``bgnet.core.protocols.Agent``): neural nets at n-ply, pubeval, random, GNU Backgammon.

``load_agent(spec)`` understands ``random``, ``pubeval``, a checkpoint path with an
optional ``@ply`` (``checkpoints/bgnet.pt@2``), ``default`` (the shipped net),
``gnubg[@ply]`` (needs the optional ``gnubg-nn`` package; ``gnubg-filtered[@ply]``
plays gnubg's own filtered search instead) and ``netset:PATH[@ply]``
(a checkpoint's nets by kind run by torch, ``bgnet.play.netset_agent``); ``noprune:SPEC`` values every reply in
its searches and ``bf16:SPEC`` values with its net in bfloat16 (``bgnet.nets.bf16net``). Each is an
``AgentKind`` in ``AGENT_KINDS``: how to recognise its specs and how to make the player,
so a new kind of player is one module and one ``AgentKind``. ``BaseAgent`` gives
every ability of the protocol a default, so a new player only writes what it
does differently:

    agent = bgnet.load_agent("default", ply=2)
    agent.hint(pos, "31").best.move      # a Move
    agent.cube(pos, MatchState(7, 2, 4)).decision.action
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from bgnet.nets.bearoff import with_database
from bgnet.core.errors import BgnetError
from bgnet.cube.match import MatchState
from bgnet.core.movegen import afterstate_boards, legal_moves, parse_dice
from bgnet.core.notation import Move
from bgnet.core.position import Position
from bgnet.core.probs import Probs
from bgnet.core.protocols import Agent, BatchScorer, Evaluator, as_evaluator
from bgnet.core.resources import default_checkpoint
from bgnet.play.base_agent import BaseAgent, NoProbabilitiesError
from bgnet.play.search import MAX_PLY, check_ply

__all__ = ["AGENT_KINDS", "DEFAULT_CHECKPOINT", "Agent", "AgentKind", "AgentPlayError", "AgentSpec", "AgentSpecError",
           "BaseAgent", "GnubgAgent", "NeuralAgent", "NoProbabilitiesError", "PubevalAgent", "RandomAgent",
           "checkpoint_path", "load_agent", "register_agent_kind", "split_spec"]

DEFAULT_CHECKPOINT = default_checkpoint()
"""The released net (packaged in a wheel, or ``checkpoints/bgnet.pt`` in the repository)."""


class AgentSpecError(BgnetError):
    """An agent specification that names no known player."""


class AgentPlayError(BgnetError):
    """A play chosen by an outside engine (gnubg) that is not among bgnet's legal plays of the position."""


class NeuralAgent(BaseAgent):
    """A bgnet checkpoint, searching ``ply`` plies deep (0 = the net alone); pure bear-offs come from the database.

    ``evaluator`` is the net behind ``bgnet.nets.bearoff.with_database``: exact chances for
    every pure bear-off (at any ply, since the search stops there), the net's elsewhere. With ``prune`` (the
    default) a net that ships a pruning net searches with it (``bgnet.nets.pruning``).
    """

    def __init__(self, path: str | Path = DEFAULT_CHECKPOINT, ply: int = 0, prune: bool = True,
                 precision: str = "float32") -> None:
        from bgnet.nets.bf16net import with_precision
        from bgnet.nets.fastnet import load_evaluator
        from bgnet.nets.pruning import DEFAULT_KEEP, with_pruning

        self.path = str(path)
        self.ply = check_ply(ply)
        self.precision = precision
        # no torch import in float32: see bgnet.nets.fastnet; nets by kind when the file has them
        self.net = with_precision(load_evaluator(path), precision)
        # Searches value only the replies the release's pruning net keeps (bgnet.nets.pruning); other nets have none.
        self._exact: Evaluator = with_pruning(with_database(self.net), path, DEFAULT_KEEP if prune else 0,
                                             precision)
        self.evaluator = self._exact
        name = f"{self.path}@{ply}" if prune else f"{NO_PRUNE_PREFIX}{self.path}@{ply}"
        self.name = name if precision == "float32" else f"{BF16_PREFIX}{name}"

    @property
    def probs_fn(self) -> Evaluator:
        """0-ply probabilities (N, 5) of boards, each for its side on roll, as a function (``evaluator`` itself)."""
        return self._exact

    def batch_scorer(self) -> BatchScorer:
        """0-ply: the evaluator on every play; n-ply: ``SearchScorer`` (cubeless money ranking, all games at once)."""
        if self.ply != 0:
            from bgnet.play.search import SearchScorer

            return SearchScorer(self._exact, self.ply)
        from bgnet.play.scorers import NeuralScorer

        return NeuralScorer(self._exact)


class PubevalAgent(BaseAgent):
    """Tesauro's pubeval: moves only; never doubles and always takes (it has no probabilities)."""

    name = "pubeval"

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        """The play pubeval scores highest (race or contact weights from the position)."""
        from bgnet.nets.pubeval import pubeval_scores

        moves = legal_moves(pos, dice)
        return moves[int(np.argmax(pubeval_scores(afterstate_boards(moves), race=pos.is_race())))]

    def batch_scorer(self) -> BatchScorer:
        """``PubevalScorer``."""
        from bgnet.play.scorers import PubevalScorer

        return PubevalScorer()


class RandomAgent(BaseAgent):
    """Uniformly random legal plays (seeded); never doubles, always takes."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.seed = seed

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        """A uniformly random legal play."""
        moves = legal_moves(pos, dice)
        return moves[int(self.rng.integers(len(moves)))]

    def evaluate(self, pos: Position, state: MatchState | None = None) -> Probs:
        """An even game, whatever the position."""
        return Probs(0.5, 0.0, 0.0, 0.0, 0.0)

    def batch_scorer(self) -> BatchScorer:
        """``RandomScorer`` (its choices do not depend on how games are batched)."""
        from bgnet.play.scorers import RandomScorer

        return RandomScorer(self.seed)


class _GnubgEvaluator:
    """GNU Backgammon's probabilities through ``gnubg_nn`` (exact for finished games)."""

    def __init__(self, gnubg: Any, ply: int) -> None:
        self.gnubg = gnubg
        self.ply = ply

    def probs_of_boards(self, boards: np.ndarray) -> np.ndarray:
        from bgnet.core import _game_kernels as gk

        boards = np.ascontiguousarray(boards, np.int8)
        out = np.zeros((len(boards), 5), np.float32)
        codes = gk.terminal_codes(boards)
        for i, row in enumerate(boards):
            if codes[i] == 0:
                nr, r = Position._trusted(tuple(int(x) for x in row)).boards()
                out[i] = self.gnubg.probabilities([list(nr), list(r)], self.ply)
        gk.apply_terminal(codes, out)
        return out


class GnubgAgent(BaseAgent):
    """GNU Backgammon's neural nets through the optional ``gnubg-nn`` package (its own search depth).

    Duels rank every play at ``ply`` through gnubg's probabilities (``batch_scorer``); with
    ``filtered`` they ask ``choose_move`` instead: gnubg's own search, with its move filters,
    as GNU Backgammon plays at that depth (much faster than every play at 1 or 2 plies).
    """

    def __init__(self, ply: int = 0, filtered: bool = False) -> None:
        try:
            import gnubg_nn
        except ImportError:
            raise AgentSpecError("agent 'gnubg' needs the optional gnubg-nn package (pip install 'bgnet[ref]')"
                                 ) from None
        self.gnubg = gnubg_nn
        self.ply = check_ply(ply)  # gnubg's own depth: its probabilities and plays are already this deep
        self.evaluator = _GnubgEvaluator(gnubg_nn, ply)
        self.filtered = filtered
        self.name = f"gnubg-filtered@{ply}" if filtered else f"gnubg@{ply}"

    def evaluate(self, pos: Position, state: MatchState | None = None) -> Probs:
        """gnubg's chances at its own depth (no bgnet search on top)."""
        row = self._needs_evaluator("evaluations").probs_of_boards(np.array([pos.board], np.int8))[0]
        return Probs(*map(float, row))

    def probs_fn(self, boards: np.ndarray) -> np.ndarray:
        """gnubg's probabilities (N, 5) for boards, each for its side on roll."""
        return as_evaluator(self._needs_evaluator("probabilities")).probs_of_boards(boards)

    def choose_move(self, pos: Position, dice: Sequence[int], state: MatchState | None = None) -> Move:
        """gnubg's own cubeless choice (``state`` is not passed on: gnubg-nn ranks plays cubeless)."""
        d1, d2 = parse_dice(dice)
        moves = legal_moves(pos, (d1, d2))
        if moves[0].is_empty:
            return moves[0]
        not_on_roll, on_roll = pos.boards()
        pairs = self.gnubg.best_move([list(not_on_roll), list(on_roll)], d1, d2, self.ply)
        from bgnet.core.notation import apply_pairs

        after = apply_pairs(pos, [(int(a), int(b)) for a, b in pairs])
        for m in moves:
            if m.after == after:
                return m
        raise AgentPlayError(f"gnubg's play {pairs} for {d1}{d2} in {pos.position_id()} is not among bgnet's legal "
                             "plays")

    def batch_scorer(self) -> BatchScorer | None:
        """``NeuralScorer`` over gnubg's probabilities; None when ``filtered`` (duels then play ``choose_move``)."""
        if self.filtered:
            return None
        from bgnet.play.scorers import NeuralScorer

        return NeuralScorer(self._needs_evaluator("plays"))


@dataclass(frozen=True)
class AgentSpec:
    """An agent specification read by ``load_agent``: the text, its name before ``@``, the ply and the seed."""

    text: str
    """The specification as given (``checkpoints/bgnet.pt@2``), for messages."""
    name: str
    """The part before ``@``, stripped: what an ``AgentKind`` recognises."""
    ply: int
    """The search depth: the ``ply`` argument, else the ``@ply`` suffix, else 0 (already checked)."""
    seed: int
    """The seed of a player that draws random numbers."""
    prune: bool = True
    """Whether a net's searches use its pruning net, when it ships one (``bgnet.nets.pruning``)."""
    precision: str = "float32"
    """The arithmetic of a bgnet net's evaluations (``bgnet.nets.bf16net.PRECISIONS``)."""


@dataclass(frozen=True)
class AgentKind:
    """One kind of player ``load_agent`` makes: how its specifications look and how to make one."""

    label: str
    """How the kind is listed when a specification names no kind (``pubeval``, ``netset:PATH``)."""
    matches: Callable[[str], bool]
    """Whether a specification's name (the part before ``@``) is one of this kind's."""
    make: Callable[[AgentSpec], BaseAgent]
    """The player of a specification this kind matches (AgentSpecError when it cannot be made)."""


def _named(*names: str) -> Callable[[str], bool]:
    """Recognises any of ``names``, in any case."""
    return lambda name: name.lower() in names


NETSET_PREFIXES = ("netset:", "netset-no-bearoff:")
"""``netset:PATH``: a checkpoint's nets by kind, then the bear-off database; ``netset-no-bearoff:PATH``: the nets
alone."""


def _netset_agent(spec: AgentSpec) -> BaseAgent:
    """``netset[-no-bearoff]:PATH``: ``bgnet.play.netset_agent.NetSetAgent`` (torch: imported only when asked for)."""
    from bgnet.play.netset_agent import NetSetAgent

    prefix, _, path = spec.name.partition(":")
    return NetSetAgent(path, spec.ply, bearoff=prefix.lower() == "netset")  # CheckpointError for a missing file


def _checkpoint_agent(spec: AgentSpec) -> BaseAgent:
    """A checkpoint path: ``NeuralAgent`` (AgentSpecError when the file does not exist)."""
    if not Path(spec.name).exists():
        raise AgentSpecError(f"agent {spec.text!r} is not {_kinds_listed()}")
    return NeuralAgent(spec.name, spec.ply, spec.prune, spec.precision)


NO_PRUNE_PREFIX = "noprune:"
"""``noprune:SPEC``: the net of SPEC, its searches valuing every reply (``bgnet.nets.pruning``)."""


def _unpruned_agent(spec: AgentSpec) -> BaseAgent:
    """``noprune:SPEC``: SPEC's player (``default``, a checkpoint file) without its pruning net."""
    inner = spec.name[len(NO_PRUNE_PREFIX):]
    return load_agent(inner, spec.ply, spec.seed, prune=False, precision=spec.precision)


BF16_PREFIX = "bf16:"
"""``bf16:SPEC``: the net of SPEC valued in bfloat16 (``bgnet.nets.bf16net``): the same play, cheaper in batches."""


def _bf16_agent(spec: AgentSpec) -> BaseAgent:
    """``bf16:SPEC``: SPEC's player (``default``, a checkpoint file, ``noprune:...``) with its net in bfloat16."""
    inner = spec.name[len(BF16_PREFIX):]
    agent = load_agent(inner, spec.ply, spec.seed, prune=spec.prune, precision="bfloat16")
    if not isinstance(agent, NeuralAgent):
        raise AgentSpecError(f"agent {spec.text!r}: {BF16_PREFIX} applies to a bgnet net (default or a checkpoint "
                             "file)")
    return agent


AGENT_KINDS: list[AgentKind] = [
    AgentKind("random", _named("random"), lambda spec: RandomAgent(spec.seed)),
    AgentKind("pubeval", _named("pubeval"), lambda spec: PubevalAgent()),
    AgentKind("gnubg", _named("gnubg", "gnubg-filtered"),
              lambda spec: GnubgAgent(spec.ply, filtered=spec.name.lower() == "gnubg-filtered")),
    AgentKind("noprune:SPEC", lambda name: name.lower().startswith(NO_PRUNE_PREFIX), _unpruned_agent),
    AgentKind("bf16:SPEC", lambda name: name.lower().startswith(BF16_PREFIX), _bf16_agent),
    AgentKind("default", _named("default", "bgnet", ""),
              lambda spec: NeuralAgent(DEFAULT_CHECKPOINT, spec.ply, spec.prune, spec.precision)),
    AgentKind("netset:PATH", lambda name: name.lower().startswith(NETSET_PREFIXES), _netset_agent),
    AgentKind("an existing checkpoint file", lambda name: True, _checkpoint_agent),
]
"""The kinds ``load_agent`` tries, in order; the first whose ``matches`` accepts a name makes the player. The last,
a checkpoint path, accepts every name, so it stays last (``register_agent_kind`` adds new kinds before it)."""


def register_agent_kind(kind: AgentKind) -> None:
    """Make ``load_agent`` understand one more kind of player (tried before the checkpoint path, the catch-all)."""
    AGENT_KINDS.insert(len(AGENT_KINDS) - 1, kind)


def _kinds_listed() -> str:
    """'random, pubeval, ... or an existing checkpoint file': every kind, for a specification that names none."""
    labels = [kind.label for kind in AGENT_KINDS]
    return ", ".join(labels[:-1]) + " or " + labels[-1]


def split_spec(spec: str) -> tuple[str, int | None]:
    """The name of an agent specification and its ``@ply`` (None without one): ``("default", 2)`` for
    ``default@2``; AgentSpecError for a ply out of range."""
    name, _, suffix = spec.strip().partition("@")
    if not suffix:
        return name, None
    if not suffix.isdigit() or int(suffix) > MAX_PLY:
        raise AgentSpecError(f"agent {spec!r}: the ply after '@' must be from 0 to {MAX_PLY}")
    return name, int(suffix)


def checkpoint_path(spec: str | None) -> Path:
    """The checkpoint file a specification names, for tools that need a file: ``default`` (or None) is the
    released net, anything else an existing file (an ``@ply`` is ignored); AgentSpecError otherwise."""
    name = split_spec(spec or "default")[0]
    if _named("default", "bgnet", "")(name):
        return DEFAULT_CHECKPOINT
    if not Path(name).is_file():
        raise AgentSpecError(f"model {spec!r} is neither default (the released net) nor an existing checkpoint file")
    return Path(name)


def load_agent(spec: str = "default", ply: int | None = None, seed: int = 0, prune: bool = True,
               precision: str = "float32") -> BaseAgent:
    """The player named by ``spec`` (the first of ``AGENT_KINDS`` that recognises it); ``ply`` overrides an
    ``@ply`` suffix; ``prune`` False makes a net's searches value every reply; ``precision`` is the arithmetic of
    a bgnet net's evaluations (``bgnet.nets.bf16net.PRECISIONS``; other players ignore it)."""
    name, spec_ply = split_spec(spec)
    ply = spec_ply if ply is None else ply
    ply = 0 if ply is None else ply
    try:
        check_ply(ply)
    except BgnetError:
        raise AgentSpecError(f"agent {spec!r}: ply must be from 0 to {MAX_PLY}") from None
    parsed = AgentSpec(text=spec, name=name, ply=ply, seed=seed, prune=prune, precision=precision)
    kind = next(k for k in AGENT_KINDS if k.matches(name))
    return kind.make(parsed)
