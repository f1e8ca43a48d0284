"""Training configs: TOML files, ``--key=value`` overrides, and a file that starts from a base config."""

from __future__ import annotations

from pathlib import Path

import pytest

from bgnet.trainer.config import CONFIG_DIR, ConfigError, build_config


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_config_overrides_the_values_of_its_bundled_base(tmp_path: Path) -> None:
    """``base = "quick"`` is configs/quick.toml: its values, except those the file sets itself."""
    quick = build_config(str(CONFIG_DIR / "quick.toml"))
    small = build_config(str(_write(tmp_path / "small.toml", 'base = "quick"\ngames = 500\nrun_name = "small"\n')))
    assert (small.games, small.run_name) == (500, "small")
    assert small.hidden == quick.hidden and small.lr == quick.lr and small.train_batch == quick.train_batch
    assert build_config(str(tmp_path / "small.toml"), {"games": "700"}).games == 700  # overrides still come last


def test_a_chain_of_two_bases(tmp_path: Path) -> None:
    """c starts from b, which starts from the bundled quick.toml: each file overrides the ones below it."""
    middle = _write(tmp_path / "b.toml", 'base = "quick.toml"\ngames = 900\nlam = 0.5\n')
    top = _write(tmp_path / "c.toml", f'base = "{middle}"\nlam = 0.9\n')
    cfg = build_config(str(top))
    assert (cfg.games, cfg.lam, cfg.hidden, cfg.run_name) == (900, 0.9, [64], "quick")


def test_a_cycle_or_a_missing_base_is_one_sentence(tmp_path: Path) -> None:
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    _write(a, f'base = "{b}"\ngames = 10\n')
    _write(b, f'base = "{a}"\ngames = 20\n')
    with pytest.raises(ConfigError, match="the bases form a cycle") as cycle:
        build_config(str(a))
    itself = _write(tmp_path / "self.toml", f'base = "{tmp_path / "self.toml"}"\n')
    with pytest.raises(ConfigError, match="form a cycle"):
        build_config(str(itself))
    lost = _write(tmp_path / "lost.toml", 'base = "no_such_config"\n')
    message = "names base 'no_such_config', but .*no_such_config.toml' does not exist"
    with pytest.raises(ConfigError, match=message) as missing:
        build_config(str(lost))
    with pytest.raises(ConfigError, match="must name a config"):
        build_config(str(_write(tmp_path / "odd.toml", "base = 3\n")))
    for err in (cycle.value, missing.value):
        assert "\n" not in str(err) and str(err).count(". ") == 0


RELEASE = sorted((CONFIG_DIR / "release").glob("*.toml"))


def test_the_release_stages_are_configs_that_load() -> None:
    """Every stage of the release is a config: a training run's builds a TrainConfig, a rounds run's a RoundsConfig."""
    from dataclasses import fields

    from bgnet.trainer.config import read_config_file
    from bgnet.trainer.round_config import RoundsConfig

    assert [p.name[:2] for p in RELEASE] == ["01", "02", "03", "04", "05", "05", "05", "06", "07", "08", "09", "10"]
    rounds_keys = {f.name for f in fields(RoundsConfig)}
    for path in RELEASE:
        values = read_config_file(path)
        if "games" in values:
            assert build_config(str(path)).games == values["games"]
        else:
            assert set(values) <= rounds_keys, path.name
            RoundsConfig(**values).check()
    stage10 = read_config_file(CONFIG_DIR / "release" / "10_ply2_round4.toml")
    assert (stage10["rounds"], stage10["fit_window"], stage10["label"], stage10["seed"]) == (4, 3, "ply2", 71)


def test_experiments_stay_out_of_the_configs_a_user_sees() -> None:
    assert sorted(p.name for p in CONFIG_DIR.glob("*.toml")) == ["default.toml", "gpu.toml", "quick.toml"]
    for path in (CONFIG_DIR / "experiments").glob("*.toml"):
        assert build_config(str(path)).games > 0, path.name


def test_a_rounds_run_takes_its_settings_from_a_config_and_flags_override_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from bgnet.cli import rounds as cli
    from bgnet.trainer import rounds
    from bgnet.trainer.round_config import RoundsConfig, State

    seen: list[tuple[str, str, RoundsConfig]] = []

    def fake_run(init: str, out: str, cfg: RoundsConfig) -> State:
        seen.append((init, out, cfg))
        return State(config={}, init=init, done=[])

    monkeypatch.setattr(rounds, "run_rounds", fake_run)
    stage = CONFIG_DIR / "release" / "09_ply2_round3.toml"
    assert cli.main(["--config", str(stage), "--init", "a.pt", "--out", str(tmp_path), "--workers", "1"]) == 0
    init, out, cfg = seen[-1]
    assert (init, cfg.rounds, cfg.fit_window, cfg.positions, cfg.lr, cfg.workers) == ("a.pt", 3, 3, 320_000, 3e-4, 1)
    bad = _write(tmp_path / "bad.toml", "rounds = 2\ngames = 5\n")
    assert cli.main(["--config", str(bad), "--init", "a.pt", "--out", str(tmp_path)]) == 2
    assert "unknown settings: games" in capsys.readouterr().err


def test_config_takes_a_bundled_config_by_name_or_a_file(tmp_path: Path) -> None:
    """``--config quick`` and ``--config release/08_ply2`` are configs/*.toml by name; a file is itself."""
    from bgnet.trainer.config import config_path, read_config_file

    assert config_path("quick") == CONFIG_DIR / "quick.toml"
    assert config_path("release/01_td_v1") == CONFIG_DIR / "release" / "01_td_v1.toml"
    assert build_config("quick") == build_config(str(CONFIG_DIR / "quick.toml"))
    assert read_config_file("release/08_ply2") == read_config_file(CONFIG_DIR / "release" / "08_ply2.toml")
    mine = _write(tmp_path / "quick", 'games = 77\n')  # a file of that name wins over the bundled config
    assert build_config(str(mine)).games == 77
    with pytest.raises(ConfigError, match="'nope' is neither a file nor a bundled config .*default, gpu, quick"):
        build_config("nope")


def test_a_negative_seed_is_refused() -> None:
    with pytest.raises(ConfigError, match="seed must not be negative, got -1"):
        build_config("quick", {"seed": "-1"})


def test_the_bundled_configs_come_from_the_checkout_here_and_from_the_package_in_a_wheel() -> None:
    from bgnet.core import resources

    assert resources.config_dir() == resources.REPOSITORY_CONFIGS == CONFIG_DIR
    assert resources.PACKAGED_CONFIGS == resources.DATA_DIR / "configs"


def test_the_matmul_precision_is_checked_and_set_where_a_run_starts() -> None:
    import torch

    from bgnet.trainer.training_run import seed_torch

    assert build_config("gpu").matmul_precision == "high" and build_config("quick").matmul_precision == "highest"
    with pytest.raises(ConfigError, match="matmul_precision must be highest, high or medium"):
        build_config("quick", {"matmul_precision": "tf32"})
    before = torch.get_float32_matmul_precision()
    try:
        seed_torch(build_config("quick", {"matmul_precision": "medium"}))
        assert torch.get_float32_matmul_precision() == "medium"
        seed_torch(build_config("quick"))
        assert torch.get_float32_matmul_precision() == "highest"
    finally:
        torch.set_float32_matmul_precision(before)


def test_device_kernels_are_a_device_engine_setting_checked_before_a_run(monkeypatch) -> None:
    from bgnet.core import device_kernels

    assert build_config("gpu").device_kernels == "torch"
    monkeypatch.setattr(device_kernels, "triton_available", lambda: True)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    cfg = build_config("quick", {"engine": "device", "device": "cuda", "device_kernels": "fused",
                                 "feature_version": "2"})
    assert cfg.device_kernels == "fused"
    with pytest.raises(ConfigError, match="device_kernels fused serves the device engine only: add --engine=device"):
        build_config("quick", {"device": "cuda", "device_kernels": "fused"})
    with pytest.raises(ConfigError, match="must be torch or fused, not 'fast'"):
        build_config("quick", {"engine": "device", "device_kernels": "fast"})
    with pytest.raises(ConfigError, match="run on a CUDA GPU, not on cpu: use torch there"):
        build_config("quick", {"engine": "device", "device_kernels": "fused"})
