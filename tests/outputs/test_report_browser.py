"""The HTML report in a real browser: Debian's headless Chromium, driven by selenium.

One report (1-way figures, an interaction, a categorical feature) is opened from disk
with the network switched off. It must load with no console error, decode every image,
land each table-of-contents link on its section, and fit a phone's width.
"""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("plotnine", reason="plotnine is not installed")
pytest.importorskip("sklearn", reason="scikit-learn is not installed")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")

import pdpx  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
if CHROMIUM is None or CHROMEDRIVER is None:  # pragma: no cover - make setup installs both
    pytest.skip("Chromium or chromedriver is not installed (Debian: chromium chromium-driver)", allow_module_level=True)

PHONE = (375, 812)


@pytest.fixture(scope="module")
def report_file(tmp_path_factory):
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({
        "temperature_in_degrees_celsius": rng.normal(15, 8, n),
        "humidity": rng.uniform(0, 1, n),
        "weekday": pd.Categorical(rng.choice(["Mon", "Tue", "Wed", "Thu", "Fri"], n)),
        "wind": rng.gamma(2, 2, n),
    })
    y = (np.sin(X.iloc[:, 0] / 5) + X["humidity"] * X["wind"] / 4 + (X["weekday"] == "Fri")
         + rng.normal(scale=0.1, size=n))
    model = HistGradientBoostingRegressor(max_iter=30, categorical_features="from_dtype").fit(X, y)
    path = tmp_path_factory.mktemp("report") / "report.html"
    pdpx.report(model, X, path, interactions=1, progress=False, ice_sample=30, title="Bike rentals <&> weather")
    return path


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--host-resolver-rules=MAP * ~NOTFOUND", "--hide-scrollbars"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                           {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
    yield driver
    driver.quit()


def open_report(driver, path, size=(1280, 900)):
    driver.set_window_size(*size)
    driver.get(path.as_uri())
    driver.execute_script("return document.readyState")
    return driver


def test_loads_offline_without_console_errors_or_requests(browser, report_file):
    open_report(browser, report_file)
    assert browser.title == "Bike rentals <&> weather"
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == []
    # one self-contained file: nothing but the page itself was fetched
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    html = report_file.read_text()
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html


def test_every_image_decodes(browser, report_file):
    open_report(browser, report_file)
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight]);")
    svgs = browser.execute_script("return document.querySelectorAll('svg').length")
    assert len(images) + svgs >= 5  # 4 features and one interaction
    for complete, width, height in images:
        assert complete and width > 0 and height > 0


def test_table_of_contents_links_land_on_their_sections(browser, report_file):
    open_report(browser, report_file, size=(1280, 700))
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('nav a[href^=\"#\"]')).map(a => a.getAttribute('href'));")
    assert len(links) >= 4
    for href in links:
        browser.execute_script("window.scrollTo(0, 0)")
        browser.find_element("css selector", f'nav a[href="{href}"]').click()
        top, height, max_scroll, scrolled = browser.execute_script(
            "const t = document.getElementById(arguments[0]);"
            "return [t.getBoundingClientRect().top, window.innerHeight,"
            "        document.documentElement.scrollHeight - window.innerHeight, window.scrollY];", href[1:])
        assert browser.execute_script("return location.hash") == href
        if scrolled < max_scroll - 1:   # the page could scroll far enough: the section starts at the top
            assert abs(top) <= 2, (href, top)
        else:                           # the last sections: at least in view
            assert 0 <= top < height, (href, top)


def test_readable_at_phone_width(browser, report_file):
    open_report(browser, report_file, size=PHONE)
    overflow = browser.execute_script(
        "const d = document.documentElement; const w = d.clientWidth;"
        "const wide = Array.from(document.querySelectorAll('body *')).filter(e => {"
        "  const r = e.getBoundingClientRect(); return r.width > 0 && (r.right > w + 1 || r.left < -1); }).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right));"
        "return [d.scrollWidth, w, wide.slice(0, 5)];")
    scroll_width, width, wide = overflow
    assert scroll_width <= width + 1, overflow
    assert wide == [], overflow
    font = browser.execute_script("return parseFloat(getComputedStyle(document.querySelector('main p, main td, main li')).fontSize)")
    assert font >= 12
    images = browser.execute_script("return Array.from(document.images).map(i => i.getBoundingClientRect().width)")
    assert images and max(images) <= width
