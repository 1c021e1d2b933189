"""The API page in headless Chromium, driven through chromedriver by
Selenium (Debian's chromium, chromium-driver and python3-selenium; installed
by scripts/setup.sh --tests): the methods it lists are system.listMethods's,
the form calls sample.add(3, 5) and shows 8 and shows an error object, help
text holding markup shows as text and runs nothing, the browser logs no
error (a Content-Security-Policy that blocked the page's own script or style
would), and a screenshot is taken.

Skipped, saying why, when any of the three is missing. CHROMIUM and
CHROMEDRIVER name other binaries; with API_PAGE_SCREENSHOT_DIR set the
screenshot is also copied there, to look at.
"""

import json
import os
import shutil
import struct
import tempfile
import unittest

import harness
from harness import DaemonTestCase

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:  # python3-selenium is not installed
    webdriver = None

WAIT = 30  # seconds for a page load or a call's outcome, on a busy 2-core machine
WINDOW = (1200, 1400)


def binary(env, *candidates):
    for candidate in (os.environ.get(env), *candidates, *(shutil.which(c) for c in candidates)):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


CHROMIUM = binary("CHROMIUM", "/usr/bin/chromium", "chromium")
CHROMEDRIVER = binary("CHROMEDRIVER", "/usr/bin/chromedriver", "chromedriver")
MISSING = ("python3-selenium" if webdriver is None else
           "chromium" if CHROMIUM is None else
           "chromium-driver" if CHROMEDRIVER is None else None)


def png_size(path):
    """(width, height) of a PNG file, checking its signature."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise AssertionError(f"{path} is not a PNG file: {head!r}")
    return struct.unpack(">II", head[16:24])


@unittest.skipIf(MISSING is not None, f"{MISSING} is not installed (apt-get install {MISSING}; "
                 "scripts/setup.sh --tests): the API page is not driven in a browser")
class ApiPageInChromium(DaemonTestCase):
    daemon_args = ("--enable-test-methods",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.workdir = tempfile.mkdtemp(prefix="rapidrpc-api-page-browser-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                     "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--disable-extensions",
                     "--disable-dev-shm-usage", "--hide-scrollbars",
                     f"--window-size={WINDOW[0]},{WINDOW[1]}",
                     f"--user-data-dir={os.path.join(cls.workdir, 'profile')}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(executable_path=CHROMEDRIVER,
                          log_path=os.path.join(cls.workdir, "chromedriver.log"))
        try:
            cls.driver = webdriver.Chrome(service=service, options=options)
        except BaseException:
            shutil.rmtree(cls.workdir, ignore_errors=True)
            super().tearDownClass()
            raise
        cls.driver.set_page_load_timeout(WAIT)

    @classmethod
    def tearDownClass(cls):
        try:
            cls.driver.quit()
        finally:
            shutil.rmtree(cls.workdir, ignore_errors=True)
            super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.driver.get(self.daemon.url)  # http://127.0.0.1:PORT/RPC2
        try:
            WebDriverWait(self.driver, WAIT).until(
                lambda d: d.find_elements(By.CSS_SELECTOR, "#methods .method-name"))
        except TimeoutException:
            self.fail(f"no API page at {self.daemon.url}: {self.driver.page_source[:2000]}")

    def call(self, method, params):
        """Calls through the form; (status line, result text, outcome class)."""
        d = self.driver
        Select(d.find_element(By.ID, "method")).select_by_value(method)
        box = d.find_element(By.ID, "params")
        box.clear()
        box.send_keys(params)
        d.find_element(By.ID, "call").click()
        result = d.find_element(By.ID, "result")
        try:
            WebDriverWait(d, WAIT).until(
                lambda _: result.get_attribute("class") in ("ok", "error"))
        except TimeoutException:
            self.fail(f"no outcome shown for {method}{params}: "
                      f"{d.find_element(By.ID, 'status').text!r} {result.text!r}")
        return d.find_element(By.ID, "status").text, result.text, result.get_attribute("class")

    def test_listed_methods_are_list_methods(self):
        names = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, "#methods .method-name")]
        options = [o.get_attribute("value") for o in
                   Select(self.driver.find_element(By.ID, "method")).options]
        with self.proxy() as p:
            expected = p.system.listMethods()
        self.assertEqual(names, expected)
        self.assertEqual(options, expected)

    def test_form_calls_sample_add_and_shows_8(self):
        status, result, kind = self.call("sample.add", "[3, 5]")
        self.assertEqual((status, result, kind), ("Result", "8", "ok"))

    def test_form_shows_the_error_object(self):
        status, result, kind = self.call("sample.add", '[3, "five"]')
        self.assertEqual(kind, "error")
        self.assertEqual(status, "Error -32602")
        self.assertEqual(json.loads(result)["code"], -32602)

    def test_named_parameters(self):
        self.assertEqual(self.call("sample.add", '{"a": 40, "b": 2}')[1], "42")

    def test_markup_in_help_shows_as_text_and_runs_nothing(self):
        with self.proxy() as p:
            help_text = p.system.methodHelp("test.markup")
        self.assertIn("<script>", help_text)
        d = self.driver
        item = d.find_element(By.XPATH, "//li[.//code[@class='method-name' and "
                                        "text()='test.markup']]")
        self.assertEqual(item.find_element(By.CLASS_NAME, "help").text, help_text)
        self.assertEqual(item.find_elements(By.TAG_NAME, "b"), [], "markup was rendered")
        self.assertEqual(item.find_elements(By.TAG_NAME, "script"), [])
        self.assertNotEqual(d.title, "injected")
        # A result holding markup is text too.
        status, result, _ = self.call("test.markup", "[]")
        self.assertEqual(json.loads(result), help_text)
        self.assertNotEqual(d.title, "injected")

    def test_no_browser_errors_and_a_screenshot(self):
        self.call("sample.add", "[3, 5]")
        severe = [e for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]
        self.assertEqual(severe, [], "the browser logged errors (a blocked script or style?)")
        # The style applied (the policy let it in): the Call button is styled.
        button = self.driver.find_element(By.ID, "call")
        self.assertNotEqual(button.value_of_css_property("background-color"),
                            "rgba(0, 0, 0, 0)")
        shot = os.path.join(self.workdir, "api-page.png")
        self.assertTrue(self.driver.save_screenshot(shot))
        self.assertGreater(os.path.getsize(shot), 10_000)
        width, height = png_size(shot)
        self.assertGreater(width, 0)
        self.assertGreater(height, 0)
        keep = os.environ.get("API_PAGE_SCREENSHOT_DIR")
        if keep:
            shutil.copy(shot, keep)


if __name__ == "__main__":
    harness.main()
