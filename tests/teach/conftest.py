"""Fixtures of the teaching pages' tests: the real server, and a headless Chromium.

``teach_server(models=None, curves=None, learner=None)`` starts
:class:`bytepair.teach.server.TeachServer` in a thread on a free port of
127.0.0.1 and returns it (``.url``); every server started is stopped after
the test. ``browser`` is a headless Chromium driven by Selenium, one per test
module; tests that use it skip only when no browser is installed, and say so.
The browser and its driver are found at ``$BYTEPAIR_CHROMIUM`` and
``$BYTEPAIR_CHROMEDRIVER``, else Debian's ``/usr/bin/chromium`` and
``/usr/bin/chromedriver`` (``apt-get install chromium chromium-driver``).
"""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = os.environ.get("BYTEPAIR_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("BYTEPAIR_CHROMEDRIVER", "/usr/bin/chromedriver")
#: The browser window: wide enough for the pages' two-column layouts.
WINDOW = (1280, 900)


def _installed(path: str, name: str) -> str | None:
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    return shutil.which(name)


@pytest.fixture
def teach_server():
    """Start the real server (see the module); returns a function of models, curves, learner."""
    from bytepair.teach.server import TeachServer
    from bytepair.teach.viewer import Viewer

    started = []

    def start(models=None, curves=None, learner=None):
        server = TeachServer(Viewer(models or {}, curves), learner=learner)
        started.append(server)
        server.start()
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (Selenium's WebDriver); skips only when no browser is installed."""
    chromium = _installed(CHROMIUM, "chromium")
    driver_path = _installed(CHROMEDRIVER, "chromedriver")
    if chromium is None or driver_path is None:
        missing = " and ".join(name for name, found in (("chromium", chromium),
                                                         ("chromedriver", driver_path)) if not found)
        pytest.skip(f"no browser installed: {missing} not found (apt-get install chromium "
                    "chromium-driver, or set BYTEPAIR_CHROMIUM and BYTEPAIR_CHROMEDRIVER)")
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-extensions", "--no-first-run", "--lang=en-US",
                 f"--window-size={WINDOW[0]},{WINDOW[1]}", "--force-device-scale-factor=1"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options,
                              service=webdriver.ChromeService(executable_path=driver_path))
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
