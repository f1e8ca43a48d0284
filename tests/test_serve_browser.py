"""The board page in a real browser: Debian's Chromium driven by Selenium against ``bgnet serve`` on a free port.

Skipped, with the reason, where Selenium, ``/usr/bin/chromium`` or ``/usr/bin/chromedriver`` is missing
(``.ci/run`` installs Debian's ``chromium`` and ``chromium-driver``). Screenshots go to pytest's tmp dir.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from bgnet import Position, legal_moves

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ROOT = Path(__file__).resolve().parents[1]
MIDGAME = Position.from_points({24: 2, 13: 4, 8: 3, 6: 4, 5: 1, 3: 1}, {24: 1, 23: 1, 13: 5, 8: 3, 6: 5})

webdriver = pytest.importorskip("selenium.webdriver", reason="the browser tests need selenium (pip install selenium)")
if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
    pytest.skip(f"the browser tests need Debian's chromium and chromium-driver ({CHROMIUM}, {CHROMEDRIVER}): "
                "apt-get install chromium chromium-driver", allow_module_level=True)

from selenium.common.exceptions import StaleElementReferenceException, WebDriverException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get_json(url: str, **params: Any) -> Any:
    """The JSON answer of a GET with query ``params``."""
    query = "?" + urllib.parse.urlencode(params) if params else ""
    with urllib.request.urlopen(url + query, timeout=10) as res:
        return json.load(res)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """``bgnet serve`` in a subprocess on a free localhost port; its base URL."""
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "bgnet", "serve", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            get_json(base + "/api/health")
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                raise RuntimeError(f"bgnet serve did not start: {proc.communicate()[1]}") from None
            time.sleep(0.1)
    yield base
    proc.terminate()
    proc.communicate(timeout=20)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Chromium with a fresh profile and nothing that phones home."""
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--window-size=1280,1000",
                f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        opts.add_argument(arg)
    try:
        driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    except WebDriverException as err:
        pytest.skip(f"chromium could not start here: {str(err).splitlines()[0]}")
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def svg_board(driver: Any) -> list[int]:
    """The 26 signed checker counts the SVG shows (data-count of each point), after checking the drawn checkers."""
    board = [0] * 26
    for g in driver.find_elements(By.CSS_SELECTOR, "#board g.point[data-count]"):
        slot = int(g.get_attribute("data-point"))
        count = int(g.get_attribute("data-count"))
        drawn = len(g.find_elements(By.CSS_SELECTOR, "circle.checker"))
        assert drawn == min(abs(count), 3 if slot in (0, 25) else 5), (slot, count, drawn)
        if count:
            side = g.find_element(By.CSS_SELECTOR, "circle.checker").get_attribute("class")
            assert ("bottom" in side) == (count > 0)
        board[slot] = count
    return board


def wait(driver: Any, cond: Any, timeout: float = 10.0) -> Any:
    """Poll ``cond`` until it is truthy; an element redrawn while it was read is read again at the next poll."""
    return WebDriverWait(driver, timeout, poll_frequency=0.02,
                         ignored_exceptions=(StaleElementReferenceException,)).until(cond)


def opened(driver: Any) -> None:
    """Wait until the page has drawn the position it opens on (the starting position)."""
    start = Position.start().position_id()
    wait(driver, lambda d: d.find_element(By.ID, "board").get_attribute("data-position-id") == start)


def paste(driver: Any, text: str) -> None:
    """Put ``text`` in the position box as a paste does (value, then the paste event)."""
    driver.execute_script(
        "const el = document.getElementById('position-input'); el.value = arguments[0];"
        "el.dispatchEvent(new Event('paste', {bubbles: true}));", text)


def best_rows(driver: Any) -> list[Any]:
    return driver.find_elements(By.CSS_SELECTOR, "#hints tbody tr")


def test_pasted_position_is_drawn_and_its_best_play_listed_within_a_second(
        server: str, browser: Any, tmp_path: Path) -> None:
    browser.get(server + "/")
    opened(browser)
    browser.find_element(By.ID, "die1-4").click()
    browser.find_element(By.ID, "die2-2").click()
    pid = MIDGAME.position_id()
    expected = get_json(f"{server}/api/hint", position=pid, dice="42", ply=1)
    t0 = time.perf_counter()
    paste(browser, pid)
    wait(browser, lambda d: (rows := best_rows(d)) and d.find_element(By.ID, "board").get_attribute("data-position-id") == pid
         and rows[0].get_attribute("data-move") == expected["moves"][0]["move"])
    elapsed = time.perf_counter() - t0
    browser.save_screenshot(str(tmp_path / "hint.png"))
    print(f"hint shown {1000 * elapsed:.0f} ms after pasting")
    assert elapsed < 1.0, f"the hint took {elapsed:.2f} s to appear"
    assert svg_board(browser) == list(MIDGAME.board)
    rows = best_rows(browser)
    assert [r.get_attribute("data-move") for r in rows] == [m["move"] for m in expected["moves"]]
    arrows = browser.find_element(By.ID, "move-arrows")
    assert json.loads(arrows.get_attribute("data-steps")) == [expected["moves"][0]["steps"]]
    assert len(arrows.find_elements(By.TAG_NAME, "line")) == len(expected["moves"][0]["steps"])
    cube = get_json(f"{server}/api/cube", position=pid, ply=1)
    wait(browser, lambda d: d.find_element(By.ID, "cube-hint").get_attribute("data-action") == cube["action"])
    assert cube["decision"]["proper_cube_action"] in browser.find_element(By.ID, "cube-hint").text


def test_rolling_and_hovering_draw_the_hovered_play(server: str, browser: Any, tmp_path: Path) -> None:
    browser.get(server + "/")
    opened(browser)
    pos = Position.from_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:7:3")
    paste(browser, "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:7:3")
    wait(browser, lambda d: d.find_element(By.ID, "board").get_attribute("data-position-id") == pos.position_id())
    browser.find_element(By.ID, "roll-button").click()
    dice = wait(browser, lambda d: (els := d.find_elements(By.ID, "dice")) and els[0].get_attribute("data-dice"))
    wait(browser, lambda d: {r.get_attribute("data-move") for r in best_rows(d)}
         == {m.text for m in legal_moves(pos, dice)})
    assert {r.get_attribute("data-move") for r in best_rows(browser)} == {m.text for m in legal_moves(pos, dice)}
    second = best_rows(browser)[1]
    ActionChains(browser).move_to_element(second).perform()
    wait(browser, lambda d: d.find_element(By.ID, "move-arrows").get_attribute("data-steps")
         == "[" + second.get_attribute("data-steps") + "]")
    browser.save_screenshot(str(tmp_path / "hover.png"))


def test_the_page_opens_on_the_starting_position(server: str, browser: Any) -> None:
    browser.get(server + "/")
    start = Position.start()
    wait(browser, lambda d: d.find_element(By.ID, "board").get_attribute("data-position-id") == start.position_id())
    wait(browser, lambda d: svg_board(d) == list(start.board))  # read again if the cube hint redraws it meanwhile
    wait(browser, lambda d: "position=" in d.current_url)
    assert urllib.parse.parse_qs(urllib.parse.urlparse(browser.current_url).query)["position"] == [start.position_id()]


def test_a_link_opens_its_position_and_dice_and_the_address_follows_the_page(server: str, browser: Any) -> None:
    pid = MIDGAME.position_id()
    assert "+" in pid or "/" in pid
    link = pid.replace("+", " ")  # what a "+" typed into an address arrives as
    browser.get(f"{server}/?position={link}&match=cAkAAAAAAAAA&dice=42&ply=0")
    expected = get_json(f"{server}/api/hint", position=pid, dice="42", ply=0)
    wait(browser, lambda d: (rows := best_rows(d)) and d.find_element(By.ID, "board").get_attribute("data-position-id") == pid
         and rows[0].get_attribute("data-move") == expected["moves"][0]["move"])
    assert svg_board(browser) == list(MIDGAME.board)
    assert browser.find_element(By.ID, "ply-select").get_attribute("value") == "0"
    browser.find_element(By.ID, "die1-6").click()
    browser.find_element(By.ID, "die2-5").click()
    wait(browser, lambda d: "dice=65" in d.current_url)
    query = urllib.parse.parse_qs(urllib.parse.urlparse(browser.current_url).query)
    assert query["position"] == [pid] and query["match"] == ["cAkAAAAAAAAA"] and query["ply"] == ["0"]
    browser.get(browser.current_url)  # the written address opens the same thing again
    wait(browser, lambda d: d.find_element(By.ID, "board").get_attribute("data-position-id") == pid
         and d.find_element(By.ID, "dice-input").get_attribute("value") == "65")


def test_board_flips_and_numbers_from_either_side(server: str, browser: Any) -> None:
    browser.get(server + "/")
    paste(browser, Position.start().position_id())
    wait(browser, lambda d: d.find_element(By.ID, "board").get_attribute("data-position-id"))

    def x_of(point: int) -> float:
        poly = browser.find_element(By.CSS_SELECTOR, f'#board g.point[data-point="{point}"] polygon')
        return float(poly.get_attribute("points").split()[2].split(",")[0])

    def labels() -> list[str]:
        return [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#board text.point-label")]

    # Read through ``wait``: the board may be drawn again (a hint arriving) between finding an element and reading it.
    wait(browser, lambda d: x_of(1) > x_of(12))  # home board on the right
    wait(browser, lambda d: labels()[:1] == ["1"])
    browser.find_element(By.ID, "flip-button").click()
    wait(browser, lambda d: x_of(1) < x_of(12))
    browser.find_element(By.ID, "numbers-button").click()
    wait(browser, lambda d: labels()[:1] == ["24"])
    wait(browser, lambda d: svg_board(d) == list(Position.start().board))  # the checkers stay on their points


def click_play(browser: Any, steps: tuple[tuple[int, int], ...]) -> None:
    """Make a play by clicking each step's checker and then its destination (the tray to bear off)."""
    for a, b in steps:
        browser.find_element(By.CSS_SELECTOR, f'#board g.point[data-point="{a}"] rect.hit').click()
        target = "#tray rect.hit" if b == 0 else f'#board g.point[data-point="{b}"] rect.hit'
        browser.find_element(By.CSS_SELECTOR, target).click()


def test_playing_against_the_bot_by_clicking(server: str, browser: Any, tmp_path: Path) -> None:
    browser.get(server + "/")
    browser.find_element(By.ID, "tab-play").click()
    browser.find_element(By.ID, "new-match-button").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#play-log li"))
    moves_made = 0
    for turn in range(40):
        if moves_made >= 3:
            break
        status = browser.find_element(By.ID, "play-status").text
        if not browser.find_element(By.ID, "play-take-button").get_attribute("disabled"):
            browser.find_element(By.ID, "play-take-button").click()
        elif not browser.find_element(By.ID, "play-roll-button").get_attribute("disabled"):
            browser.find_element(By.ID, "play-roll-button").click()
        elif not browser.find_element(By.ID, "play-next-button").get_attribute("disabled"):
            browser.find_element(By.ID, "play-next-button").click()
        elif status.startswith("Your roll"):
            svg = browser.find_element(By.ID, "board")
            pid = svg.get_attribute("data-position-id")
            dice = browser.find_element(By.ID, "dice").get_attribute("data-dice")
            pos = Position.from_position_id(pid)
            assert svg_board(browser) == list(pos.board)
            choice = legal_moves(pos, dice)[-1]
            log_before = len(browser.find_elements(By.CSS_SELECTOR, "#play-log li"))
            click_play(browser, choice.steps)
            wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#play-log li")) > log_before + 1)
            entries = browser.find_elements(By.CSS_SELECTOR, "#play-log li")[log_before:]
            mine = entries[0]
            assert mine.get_attribute("data-who") == "you" and mine.get_attribute("data-move") == choice.text
            bot = [e for e in entries if e.get_attribute("data-who") == "bgnet" and e.get_attribute("data-action") == "move"]
            assert choice.after is not None
            if bot:  # bgnet's play is legal for its roll from the position my play left
                rolled = [e for e in entries if e.get_attribute("data-who") == "bgnet" and e.get_attribute("data-action") == "roll"]
                theirs = choice.after.swap_sides()
                plays = {m.text: m for m in legal_moves(theirs, rolled[0].get_attribute("data-dice"))}
                assert bot[0].get_attribute("data-move") in plays
                after = plays[bot[0].get_attribute("data-move")].after
                assert after is not None
                shown = browser.find_element(By.ID, "board").get_attribute("data-position-id")
                if not any(e.get_attribute("data-action") in ("win", "double") for e in entries):
                    assert shown == after.swap_sides().position_id()
                    assert svg_board(browser) == list(after.swap_sides().board)
            moves_made += 1
            browser.save_screenshot(str(tmp_path / f"play-{moves_made}.png"))
        else:
            time.sleep(0.1)
    assert moves_made >= 3, browser.find_element(By.ID, "play-status").text
    score = browser.find_element(By.ID, "score").text
    assert "you" in score and "bgnet" in score and "cube" in score


def test_the_page_fits_a_phone(server: str, browser: Any, tmp_path: Path) -> None:
    browser.set_window_size(390, 844)
    try:
        browser.get(server + "/")
        paste(browser, MIDGAME.position_id())
        wait(browser, lambda d: d.find_element(By.ID, "board").get_attribute("data-position-id"))
        width = browser.execute_script("return window.innerWidth")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width + 1
        assert browser.find_element(By.ID, "board").size["width"] <= width
        browser.save_screenshot(str(tmp_path / "phone.png"))
    finally:
        browser.set_window_size(1280, 1000)


def test_the_api_docs_render_offline(server: str, browser: Any) -> None:
    """/docs is drawn by the app's own script from /openapi.json: one section per endpoint."""
    browser.get(server + "/docs")
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "section.endpoint")) >= 8)
    paths = {e.find_element(By.TAG_NAME, "code").text for e in browser.find_elements(By.CSS_SELECTOR, "section.endpoint")}
    assert {"/api/hint", "/api/moves", "/api/cube", "/api/play", "/api/rollout", "/api/analyze", "/api/health"} <= paths
    hint = browser.find_element(By.ID, "get-api-hint")
    assert "position" in hint.text and "ply" in hint.text
