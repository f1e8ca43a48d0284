"""Features v2 (expert inputs): each kernel on hand-made positions whose values are worked out here, and the torch
twin equal to the numba kernels on many positions."""

from pathlib import Path

import numpy as np
import pytest

from bgnet.features import v2 as E
from bgnet.features.registry import FeatureVersionError, encode, num_features
from bgnet.features.v1 import WIDTH as NUM_FEATURES_V1
from bgnet.features.v2 import EXPERT_PER_SIDE
from bgnet.features.v2 import WIDTH as NUM_FEATURES_V2
from bgnet.core.position import Position

NAMES = ["p1", "p2", "pip_loss", "back_escapes", "containment", "containment2", "break_contact", "back_checker",
         "back_anchor", "forward_anchor", "mobility", "moment2", "timing", "backbone", "free_pips", "enter_fail"]


def counts(pos: Position) -> tuple[np.ndarray, np.ndarray]:
    """(me, opponent) count arrays (26,) in each side's own numbering, as the kernels take them."""
    b = np.array(pos.board, np.int8)
    c, o = np.empty(26, np.int64), np.empty(26, np.int64)
    E._side_counts(b, 0, c)
    E._side_counts(b, 1, o)
    return c, o


def expert(pos: Position) -> tuple[dict[str, float], dict[str, float]]:
    x = encode(np.array([pos.board], np.int8), version=2)[0, NUM_FEATURES_V1:]
    return dict(zip(NAMES, x[:EXPERT_PER_SIDE])), dict(zip(NAMES, x[EXPERT_PER_SIDE:]))


def test_widths_and_v1_prefix():
    assert num_features(1) == NUM_FEATURES_V1 == 214 and num_features(2) == NUM_FEATURES_V2 == 214 + 2 * 16
    with pytest.raises(FeatureVersionError, match="feature version 3"):
        num_features(3)
    b = np.array([Position.start().board] * 2, np.int8)
    x1, x2 = encode(b), encode(b, version=2)
    assert x2.shape == (2, NUM_FEATURES_V2) and np.array_equal(x2[:, :NUM_FEATURES_V1], x1)


def test_blot_six_away_is_hit_by_17_rolls():
    # My blot on my 13-point is his 12; his only checker in front of it is on his 18, six pips above.
    # Direct 6s: 11 rolls; 5-1 and 4-2 (2 each), 3-3 and 2-2 (one each): 17. 1-1 moves only 4.
    pos = Position.from_points({13: 1, 1: 14}, {18: 1, 2: 14})
    c, o = counts(pos)
    p1, p2, loss = E._shots(c, o)
    assert (p1, p2) == (17, 0)
    assert loss == 17 * 12  # hit there, my checker goes from my 13 back to 25: 12 pips lost
    mine, _ = expert(pos)
    assert np.isclose(mine["p1"], 17 / 36) and mine["p2"] == 0
    assert np.isclose(mine["pip_loss"], 17 * 12 / 36 / 12)


def test_blocked_points_cut_combination_shots():
    # As above with my points 9 and 11 made: his 16 and 14, the stops of 4-2 (either order) and of 2-2.
    # Left: 11 direct 6s, 5-1 (2: via his 17 or 13, both open), 3-3 (via his 15): 14.
    pos = Position.from_points({13: 1, 9: 2, 11: 2, 1: 10}, {18: 1, 2: 14})
    c, o = counts(pos)
    assert E._shots(c, o)[:2] == (14, 0)
    # Only his 15 made (my 10): 3-3 stops there, 2-2 and 4-2 go round: 16.
    pos = Position.from_points({13: 1, 10: 2, 1: 12}, {18: 1, 2: 14})
    assert E._shots(*counts(pos))[:2] == (16, 0)


def test_double_shots_and_pip_loss_of_the_costliest_hit():
    # My blots on my 20 and 19 = his 5 and 6; his checker on his 7 is 2 and 1 pips above them.
    # At least one hit: every roll with a 1 or a 2: 36 - 16 = 20.
    # Two hits: 2-1 (one die each, 2 rolls) and 1-1 (one step and two steps): 3. 2-2 never reaches the near one.
    pos = Position.from_points({20: 1, 19: 1, 6: 13}, {7: 1, 1: 14})
    c, o = counts(pos)
    p1, p2, loss = E._shots(c, o)
    assert (p1, p2) == (20, 3)
    # The blot on his 6 costs 6 pips (11 rolls with a 1); the other rolls with a 2 (9 more) cost 5.
    assert loss == 6 * 11 + 5 * 9
    # No blots: nothing.
    assert E._shots(*counts(Position.start())) == (0, 0, 0)


def test_shots_from_the_bar():
    # His checker on the bar enters on his 25 - d; my blot on my 3 = his 22 is 3 away: 11 + 2-1 (2) + 1-1 (1) = 14.
    pos = Position.from_points({3: 1, 6: 14}, {25: 1, 1: 14})
    assert E._shots(*counts(pos))[0] == 14


def test_escapes_past_a_single_point():
    # My checker on my 12; his only point in front is my 6 (his 19). Escaping means landing below 6:
    # non-doubles summing 7+ (18 rolls; 6-1 goes via 11), 4-4 (8, 4) and 5-5 (7, 2); 1-1, 2-2, 3-3 and 6-6 stop on or
    # before the 6-point: 20.
    pos = Position.from_points({12: 15}, {19: 2, 12: 13})
    c, o = counts(pos)
    assert E._escapes(o, 12) == 20
    mine, _ = expert(pos)
    assert np.isclose(mine["back_escapes"], 20 / 36)
    assert np.isclose(mine["mobility"], 15 * 20 / (15 * 36))
    # Nothing held in front: everything escapes.
    assert E._escapes(o, 5) == 36


def test_a_full_prime_contains_completely():
    # My points 4..9 (his 21..16): his checker on his 24 has no roll past them; nor from his 22, 23.
    pos = Position.from_points({4: 2, 5: 2, 6: 2, 7: 2, 8: 2, 9: 2, 13: 3}, {24: 2, 13: 13})
    c, o = counts(pos)
    assert E._containment(c, o) == 0
    assert E._escapes(c, 24) == 0
    mine, his = expert(pos)
    assert mine["containment"] == 1.0 and mine["containment2"] == 1.0
    assert his["back_escapes"] == 0.0
    # Five points 4..8 only (his 21..17), spares behind him on my 1: from his 22 (my 3) the wall (his 17) is
    # 5 away; a 6 lands on his 16 (my 9, open): 11 rolls. Every smaller first step stops on a point I hold.
    five = Position.from_points({4: 2, 5: 2, 6: 2, 7: 2, 8: 2, 1: 5}, {22: 1, 13: 14})
    c, o = counts(five)
    assert E._escapes(c, 22) == 11


def test_structure_kernels():
    # Me: 2 on my 24 (anchor), 3 on 18, 1 on 10, 4 on 6, 5 on 5; him: 2 on his 3 and 4 (my 22, 21), 11 off.
    pos = Position.from_points({24: 2, 18: 3, 10: 1, 6: 4, 5: 5}, {3: 2, 4: 2})
    c, o = counts(pos)
    # break contact: his rearmost is my 21; only my 2 on 24 are behind it, 3 pips each
    assert E._break_contact(c, o) == 2 * (24 - 21)
    # his checkers on his 3 and 4 must pass my rearmost (my 24 = his 1): 2 * 2 + 2 * 3
    assert E._break_contact(o, c) == 10
    assert E._rear(c) == 24 and E._rear(o) == 4
    assert E._anchors(c) == (24, 18)
    # timing: above 6: 2*18 + 3*12 + 1*4 = 76; spares: 6-point 2*5 = 10, 5-point 3*4 = 12 -> 98
    assert E._timing(c) == 76 + 10 + 12
    # backbone: held 24, 18, 6, 5: pairs within 6: (18, 24), (5, 6) -> 2
    assert E._backbone(c) == 2
    # free pips: blot 10, spare on 18 (18), spares on 6 (2*6) and 5 (3*5): 10 + 18 + 12 + 15 = 55
    assert E._free_pips(c) == 55
    # moment: positions 24,24,18,18,18,10,6*4,5*5
    pts = [24, 24, 18, 18, 18, 10] + [6] * 4 + [5] * 5
    assert np.isclose(E._moment2(c), np.var(pts))
    # entering: he holds his 3 and 4: 2 closed of 6
    assert np.isclose(E._enter_fail(o), (2 / 6) ** 2)
    assert E._enter_fail(c) == pytest.approx((2 / 6) ** 2)  # my home: 6 and 5 held
    mine, his = expert(pos)
    assert np.isclose(mine["back_anchor"], 24 / 24) and np.isclose(mine["forward_anchor"], (25 - 18) / 12)
    assert np.isclose(mine["back_checker"], 24 / 25) and his["forward_anchor"] == 0.0
    assert np.isclose(mine["break_contact"], 6 / 100) and np.isclose(his["break_contact"], 10 / 100)


def test_swapping_sides_swaps_the_expert_blocks():
    pos = Position.from_points({6: 4, 8: 3, 13: 4, 24: 1, 20: 1, 25: 1, 3: 1}, {6: 5, 8: 2, 13: 5, 24: 1, 21: 1, 10: 1})
    x = encode(np.array([pos.board], np.int8), version=2)[0, NUM_FEATURES_V1:]
    y = encode(np.array([pos.swap_sides().board], np.int8), version=2)[0, NUM_FEATURES_V1:]
    assert np.allclose(x[:EXPERT_PER_SIDE], y[EXPERT_PER_SIDE:]) and np.allclose(x[EXPERT_PER_SIDE:], y[:EXPERT_PER_SIDE])


def test_threaded_v2_matches_serial():
    rng = np.random.default_rng(3)
    from bgnet.core.movegen import generate_afterstates

    after, _ = generate_afterstates(np.array([Position.start().board] * 8, np.int8), rng.integers(1, 7, (8, 2)))
    big = np.repeat(after, 4096 // len(after) + 1, axis=0)
    assert np.array_equal(encode(big, version=2), encode(big, threads=2, version=2))


def test_v2_checkpoints_record_their_version_and_play(tmp_path, monkeypatch):
    import torch

    from bgnet.nets.fastnet import load_numpy_net
    from bgnet.nets.model import BgNet, ModelConfig, NetEvaluator, load_net, save_checkpoint

    monkeypatch.setenv("BGNET_CACHE", str(tmp_path / "cache"))
    torch.manual_seed(0)
    path = tmp_path / "v2.pt"
    save_checkpoint(path, BgNet(ModelConfig.for_features([8], "relu", 2)))
    net = load_net(path)
    assert net.config.feature_version == 2 and net.config.num_features == NUM_FEATURES_V2
    boards = np.array([Position.start().board, Position.from_points({13: 1, 1: 14}, {18: 1, 2: 14}).board], np.int8)
    torch_probs = NetEvaluator(net).probs_of_boards(boards)
    for _ in range(2):  # through torch, then from the weight cache
        fast = load_numpy_net(path)
        assert fast.feature_version == 2 and np.allclose(fast.probs_of_boards(boards), torch_probs, atol=1e-5)
    # a version-1 checkpoint (the encoding of the previous release) still loads and plays through both paths
    v1_path = tmp_path / "v1.pt"
    save_checkpoint(v1_path, BgNet(ModelConfig.for_features([8], "relu", 1)))
    v1 = load_net(v1_path)
    assert v1.config.feature_version == 1 and v1.config.num_features == NUM_FEATURES_V1
    v1_probs = NetEvaluator(v1).probs_of_boards(boards)
    assert not np.allclose(v1_probs, torch_probs, atol=1e-3)  # a different net on different inputs
    assert np.allclose(load_numpy_net(v1_path).probs_of_boards(boards), v1_probs, atol=1e-5)
    # a checkpoint whose width does not fit its version is refused with one sentence
    ckpt = torch.load(path, weights_only=True)
    ckpt["model_config"]["num_features"] = NUM_FEATURES_V1
    torch.save(ckpt, path)
    from bgnet.nets.model import CheckpointError

    with pytest.raises(CheckpointError, match="features version 2"):
        load_net(path)


def test_position_kinds():
    from bgnet.features.kinds import position_kinds

    race = Position.from_points({6: 5, 5: 5}, {6: 5, 3: 5})
    # contact, and I have 10 checkers off: crashed
    crashed = Position.from_points({24: 2, 6: 3}, {6: 5, 8: 5, 13: 5})
    # contact, 9 of his on his 1- and 2-points: crashed for him
    crashed2 = Position.from_points({22: 2, 13: 5, 8: 4, 6: 4}, {1: 5, 2: 4, 13: 3, 20: 3})
    boards = np.array([Position.start().board, race.board, crashed.board, crashed2.board], np.int8)
    assert position_kinds(boards).tolist() == [0, 2, 1, 1]


def test_netset_picks_the_net_of_each_kind(tmp_path):
    import torch

    from bgnet.nets.model import BgNet, ModelConfig, NetEvaluator, load_net, load_netset, save_netset, NetSet

    torch.manual_seed(1)
    contact, race = BgNet(ModelConfig.for_features([8], "relu", 2)), BgNet(ModelConfig.for_features([4], "relu", 1))
    ns = NetSet({"contact": contact, "race": race}, bearoff=False)
    # a race that is not a pure bear-off (his checkers outside his home), and contact positions
    race_pos = Position.from_points({6: 5, 9: 5}, {6: 5, 10: 5})
    boards = np.array([Position.start().board, race_pos.board, Position.from_points({24: 2, 6: 3}, {6: 15}).board], np.int8)
    got = ns.probs_of_boards(boards)
    assert np.allclose(got[[0, 2]], NetEvaluator(contact).probs_of_boards(boards[[0, 2]]), atol=1e-6)
    assert np.allclose(got[1], NetEvaluator(race).probs_of_boards(boards[1:2])[0], atol=1e-6)
    path = tmp_path / "set.pt"
    save_netset(path, ns)
    back = load_netset(path)
    assert set(back.nets) == {"contact", "race"} and not back.bearoff
    assert np.allclose(back.probs_of_boards(boards), got, atol=1e-6)
    assert load_net(path).config.hidden == (8,)  # single-net readers get the contact net
    with pytest.raises(ValueError, match="contact net"):
        NetSet({"race": race})


def test_widen_keeps_the_function(tmp_path):
    import torch

    from bgnet.nets.model import BgNet, ModelConfig, NetEvaluator, widen

    torch.manual_seed(2)
    v1 = BgNet(ModelConfig(hidden=(8,)))
    v2 = widen(v1, 2)
    assert v2.config.feature_version == 2 and v2.config.num_features == NUM_FEATURES_V2
    boards = np.array([Position.start().board, Position.from_points({13: 1, 1: 14}, {18: 1, 2: 14}).board], np.int8)
    assert np.allclose(NetEvaluator(v1).probs_of_boards(boards), NetEvaluator(v2).probs_of_boards(boards), atol=1e-6)
    with pytest.raises(ValueError, match="cannot widen"):
        widen(v2, 1)


# -- the torch twin (bgnet.features.v2_torch) ---------------------------------------------------------------------

GOLDEN = Path(__file__).resolve().parent / "data" / "movegen.txt"


def golden_boards() -> np.ndarray:
    """The positions of tests/data/movegen.txt with their afterstates for each roll listed there, both sides on roll."""
    from bgnet.core.movegen import generate_afterstates

    rows = [line.split() for line in GOLDEN.read_text().splitlines() if line.strip() and not line.startswith("#")]
    boards = np.array([Position.from_position_id(pid).board for pid, _, _ in rows], np.int8)
    dice = np.array([[int(d[0]), int(d[1])] for _, d, _ in rows], np.int8)
    after, _ = generate_afterstates(boards, dice)
    found = np.concatenate([boards, after])
    return np.concatenate([found, -found[:, ::-1]])


def random_boards(seed: int, n: int) -> np.ndarray:
    """Boards with each side's 15 checkers spread at random over its points, bar and tray: blots, shots from the bar,
    stacks and half-empty boards that games rarely reach."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, 26), np.int8)
    for b in out:
        mine = rng.multinomial(15, rng.dirichlet(np.full(26, rng.uniform(0.1, 2.0))))  # [0]: borne off
        theirs = rng.multinomial(15, rng.dirichlet(np.full(26, rng.uniform(0.1, 2.0))))
        b[1:26] = mine[1:26]
        b[0] = -theirs[25]
        for p in range(1, 25):
            if b[p] == 0:
                b[p] = -theirs[25 - p]
    return out


def made_boards() -> np.ndarray:
    """Corner cases: closed boards with checkers on the bar, everything on the bar, empty sides, an empty board."""
    closed = {p: 2 for p in range(1, 7)}
    positions = [
        Position.start(),
        Position.from_points({25: 2, 13: 5, 8: 3, 6: 5}, {**closed, 13: 3}),
        Position.from_points({**closed, 25: 3}, {**closed, 25: 3}),
        Position.from_points({25: 15}, {25: 15}),
        Position.from_points({25: 1, 6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2}, {25: 2, 1: 13}),
        Position.from_points({}, {6: 15}),
        Position.from_points({1: 1}, {}),
        Position.from_points({24: 1, 3: 1}, {20: 1, 2: 1}),
    ]
    return np.concatenate([np.array([p.board for p in positions], np.int8), np.zeros((1, 26), np.int8)])


def all_boards(game_boards) -> np.ndarray:
    return np.concatenate([golden_boards(), game_boards(3000, 11), random_boards(12, 3000), made_boards()])


def assert_same_as_numba(boards: np.ndarray, device: str) -> None:
    """The torch twin's features on ``device`` are the numba encoder's, bit for bit (set 1's prefix: see below)."""
    import torch

    from bgnet.features.v2_torch import encode_v2_torch

    want = encode(boards, version=2)
    got = encode_v2_torch(torch.from_numpy(boards).to(device))
    assert got.device.type == device and got.dtype == torch.float32
    got = got.cpu().numpy()
    assert got.shape == want.shape == (len(boards), NUM_FEATURES_V2)
    expert = np.s_[:, NUM_FEATURES_V1:]
    assert np.array_equal(got[expert], want[expert]), np.argwhere(got[expert] != want[expert])[:5]  # (board, input)
    # Set 1's prefix comes from its own twin (bgnet.features.encoding_torch), exact on the CPU; it divides by Python
    # numbers, which CUDA computes as a product with a float32 reciprocal: within an ulp there.
    prefix = np.s_[:, :NUM_FEATURES_V1]
    if device == "cpu":
        assert np.array_equal(got[prefix], want[prefix]), np.argwhere(got[prefix] != want[prefix])[:5]
    else:
        assert np.abs(got[prefix] - want[prefix]).max() <= 1e-6


def test_the_boards_cover_every_kind_of_position(game_boards) -> None:
    from bgnet.core.race import race_flags

    boards = all_boards(game_boards)
    x = encode(boards, version=2)[:, NUM_FEATURES_V1:]
    race = race_flags(boards)
    assert 100 < race.sum() < len(boards) - 100  # races and contact
    assert (boards[:, 25] > 0).sum() > 100 and (boards[:, 0] < 0).sum() > 100  # either side on the bar
    assert ((boards[:, 19:25] <= -2).all(1) & (boards[:, 25] > 0)).any()  # shut out: on the bar, his board closed
    assert (np.clip(boards, 0, None).sum(1) < 15).sum() > 100 and (boards > 0).any(1).sum() < len(boards)  # off
    assert (boards == 0).all(1).any()
    assert (x[:, 1] > 0).sum() > 100 and (x[:, 15] == 1).any()  # double shots; a closed board to enter
    assert len(np.unique(x[:, 11])) > 100  # many distinct variances


def test_torch_twin_equals_numba_on_the_cpu(game_boards) -> None:
    assert_same_as_numba(all_boards(game_boards), "cpu")


@pytest.mark.cuda
def test_torch_twin_equals_numba_on_cuda(game_boards) -> None:
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    assert_same_as_numba(all_boards(game_boards), "cuda")


def test_v2_is_registered_with_its_torch_twin() -> None:
    from bgnet.features.registry import feature_set
    from bgnet.features.v2_torch import encode_v2_torch

    assert feature_set(2).has_torch_encoder and feature_set(2).torch_encode_fn() is encode_v2_torch


def test_training_encodes_v2_on_the_device_when_asked(game_boards) -> None:
    """``encoder`` auto off the CPU (or torch) takes v2's torch path, and evaluation and fitting through it give the
    numba path's numbers."""
    import torch

    from bgnet.nets.model import BgNet, ModelConfig
    from bgnet.trainer.inference import TorchEvaluator
    from bgnet.trainer.learner import fit
    from bgnet.trainer.selfplay import use_torch_encoder

    cpu = torch.device("cpu")
    assert use_torch_encoder("auto", torch.device("cuda"), 2) and use_torch_encoder("torch", cpu, 2)
    assert not use_torch_encoder("auto", cpu, 2) and not use_torch_encoder("numba", torch.device("cuda"), 2)
    boards = game_boards(256, 13)
    torch.manual_seed(3)
    nets = [BgNet(ModelConfig.for_features([16], "relu", 2)) for _ in range(2)]
    nets[1].load_state_dict(nets[0].state_dict())
    on_device = TorchEvaluator(nets[0], cpu, on_device=True).probs_of_boards(boards)
    on_host = TorchEvaluator(nets[0], cpu, threads=2).probs_of_boards(boards)  # numba features, torch net
    assert on_device.shape == (256, 5) and np.array_equal(on_device, on_host)
    targets = np.random.default_rng(4).random((256, 5)).astype(np.float32)
    losses = [fit(net, torch.optim.SGD(net.parameters(), lr=0.1), boards, targets, 64, 2, np.random.default_rng(5), cpu,
                  encode_on_device=flag) for net, flag in zip(nets, (True, False))]
    assert losses[0] == losses[1] and all(torch.equal(a, b) for a, b in zip(nets[0].parameters(), nets[1].parameters()))


def test_the_wide_escape_table_gives_v2s_escapes_for_any_held_points():
    """Each torch escape count (one shift of the held bits, one lookup in the 2**24-entry table) equals v2's own
    ``_escapes_bits`` for random held points (bits 1..24) and every point of the mover."""
    import torch

    from bgnet.features.v2_torch import _constants, _escape_rows

    rng = np.random.default_rng(12)
    density = rng.uniform(0.05, 0.6, (3000, 1))  # sparse rows too: a double's far steps count only past open points
    held = ((rng.random((3000, 24)) < density) << np.arange(1, 25)).sum(1)  # bits 1..24
    rows = _escape_rows(torch.from_numpy(held).to(torch.int32), _constants(torch.device("cpu"))).numpy()
    want = np.array([[36] + [E._escapes_bits(int(h), p, E._ESCAPES) for p in range(1, 26)] for h in held])
    assert rows.shape == (3000, 26) and len(np.unique(want)) > 10
    assert np.array_equal(rows, want)
