"""partitad's viewer page in a real browser (issue 13): Debian's chromium, headless, driven by
python3-selenium through chromium-driver, renders the three.js scene with SwiftShader (no GPU).

- the model list shows the loaded models;
- after switching the pendulum to real time, two renderings 0.2 s apart differ where the
  pendulum is drawn, and the scene is not blank (pixel checks in the page's own canvas);
- pause stops the step counter;
- moving the input slider changes the model's input as GetState reports it.

The browser saves a screenshot of the page (PARTITA_VIEWER_PNG, default in the build tree;
docs/viewer.png was taken this way). Skipped with a message when no browser is installed."""

import os
import shutil
import time

import pytest

from conftest import ROOT, WAIT, Daemon, free_port

selenium = pytest.importorskip("selenium", reason="python3-selenium is not installed")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

import partita  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
if not CHROMIUM or not os.path.exists(DRIVER):
    pytest.skip("no chromium and chromium-driver installed: the browser test is skipped",
                allow_module_level=True)
if not os.path.isdir("/usr/share/javascript/three"):
    pytest.skip("libjs-three is not installed: the page has no three.js", allow_module_level=True)

# Pixels of the canvas: kept in the page (window.__px) and compared there, so that only
# small answers cross the driver.
GRAB = """
const c = document.querySelector('#scene canvas');
const off = document.createElement('canvas');
off.width = c.width; off.height = c.height;
const ctx = off.getContext('2d');
ctx.drawImage(c, 0, 0);
window.__px = window.__px || {};
window.__px[arguments[0]] = ctx.getImageData(0, 0, c.width, c.height).data;
return [c.width, c.height];
"""

COMPARE = """
const a = window.__px[arguments[0]], b = window.__px[arguments[1]];
const w = arguments[2], h = arguments[3];
let changed = 0, x0 = w, y0 = h, x1 = -1, y1 = -1;
for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
  const i = 4 * (y * w + x);
  if (Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]) > 30) {
    changed++; x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y);
  }
}
return [changed, x0, y0, x1, y1];
"""

# Pixels unlike the background colour (0xf2f4f7) and the number of distinct colours.
CONTENT = """
const a = window.__px[arguments[0]];
let fg = 0; const colours = new Set();
for (let i = 0; i < a.length; i += 4) {
  if (Math.abs(a[i] - 0xf2) + Math.abs(a[i + 1] - 0xf4) + Math.abs(a[i + 2] - 0xf7) > 24) fg++;
  if (colours.size < 5000) colours.add((a[i] << 16) | (a[i + 1] << 8) | a[i + 2]);
}
return [fg, colours.size];
"""

# Where the body's centre of mass is drawn, in canvas pixels.
PROJECT = """
const c = document.querySelector('#scene canvas');
const v = bodies[arguments[0]].position.clone().project(camera);
return [(v.x + 1) / 2 * c.width, (1 - v.y) / 2 * c.height];
"""


def wait_for(cond, timeout=WAIT, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


@pytest.fixture(scope="module")
def live(workdir):
    port = free_port()
    models = os.path.join(ROOT, "configs", "models")
    d = Daemon(workdir, extra_args=[
        "--http", "127.0.0.1:%d" % port,
        "--model", os.path.join(models, "pendulum.yaml"),
        "--model", os.path.join(models, "double_pendulum.yaml")])
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--use-angle=swiftshader",
              "--enable-unsafe-swiftshader", "--window-size=1280,800",
              "--disable-dev-shm-usage"):
        opts.add_argument(a)
    try:
        browser = webdriver.Chrome(service=Service(DRIVER), options=opts)
    except Exception as e:   # installed but unable to start here
        d.check_clean_exit()
        pytest.skip("chromium could not start: %s" % str(e).splitlines()[0])
    browser.set_script_timeout(30)
    try:
        browser.get("http://127.0.0.1:%d/#model=pendulum" % port)
        yield d, browser
    finally:
        browser.quit()
        d.check_clean_exit()


def step_shown(browser):
    return int(browser.find_element(By.ID, "step").text)


def test_model_list(live):
    _, browser = live
    items = wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#models li[data-model]"),
                     what="the model list")
    names = sorted(li.get_attribute("data-model") for li in items)
    assert names == ["double_pendulum", "pendulum"]
    wait_for(lambda: browser.find_element(By.ID, "model-name").text == "pendulum",
             what="the pendulum to be shown")


def test_realtime_moves_the_pendulum(live):
    d, browser = live
    wait_for(lambda: browser.execute_script("return bodies.length === 1 && last !== null"),
             what="the first frame")
    browser.find_element(By.ID, "btn-realtime").click()
    wait_for(lambda: step_shown(browser) > 300, what="the model to run in real time")
    w, h = browser.execute_script(GRAB, "a")
    com_a = browser.execute_script(PROJECT, 0)
    # 0.2 s of the model later as the page shows it (waited for: a loaded machine renders
    # late, not differently)
    step_a = step_shown(browser)
    wait_for(lambda: step_shown(browser) >= step_a + 200, what="0.2 s more of the model")
    browser.execute_script(GRAB, "b")
    com_b = browser.execute_script(PROJECT, 0)
    changed, x0, y0, x1, y1 = browser.execute_script(COMPARE, "a", "b", w, h)
    fg, colours = browser.execute_script(CONTENT, "b")
    # not blank: the rod, bob, grid and axes cover pixels of many colours
    assert fg > 2000 and colours > 20, (fg, colours)
    # the two renderings differ, and where the pendulum is: its centre of mass (projected
    # in both) lies inside the box of changed pixels (with a margin of the rod's width)
    assert changed > 100, changed
    for cx, cy in (com_a, com_b):
        assert x0 - 15 <= cx <= x1 + 15 and y0 - 15 <= cy <= y1 + 15, \
            ((cx, cy), (x0, y0, x1, y1))
    with d.client() as c:
        assert c.get_state("pendulum").mode == partita.pb.REALTIME
    png = os.environ.get("PARTITA_VIEWER_PNG") or os.path.join(
        os.environ.get("MESON_BUILD_ROOT", "/tmp"), "viewer.png")
    browser.save_screenshot(png)


def test_pause_stops_the_counter(live):
    d, browser = live
    browser.find_element(By.ID, "btn-pause").click()
    wait_for(lambda: browser.find_element(By.ID, "mode").text == "PAUSED", what="PAUSED")
    with d.client() as c:
        paused_at = c.get_state("pendulum").step
    # the frames already on their way shown: the page reaches the step the model paused at
    wait_for(lambda: step_shown(browser) == paused_at, what="the paused step to be shown")
    first = step_shown(browser)
    time.sleep(0.5)
    assert step_shown(browser) == first


def test_slider_sets_the_input(live):
    d, browser = live
    slider = browser.find_element(By.CSS_SELECTOR, 'input[type=range][data-input="tau"]')
    slider.click()                     # the middle: 0
    slider.send_keys(Keys.END)         # the top of its range, as a user's keyboard does
    expected = float(slider.get_attribute("max"))
    assert expected == 10.0
    with d.client() as c:
        wait_for(lambda: list(c.get_state("pendulum", fields=partita.FIELD_INPUTS).inputs)
                 == [expected], what="the input to reach the model")
        slider.send_keys(Keys.HOME)
        wait_for(lambda: list(c.get_state("pendulum", fields=partita.FIELD_INPUTS).inputs)
                 == [-expected], what="the input to follow the slider down")
