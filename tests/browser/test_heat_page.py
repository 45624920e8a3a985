"""The heat page (GET /kura/heat.html) in a real headless browser.

Starts kura-server (the conformance suite's KuraServer, tests/conformance/conftest.py, on a
free loopback port), creates a table, writes a hot-key load over boto3 (hundreds of 1 KB+
PutItems on one partition-key value), then loads http://127.0.0.1:PORT/kura/heat.html in
Debian's chromium through chromedriver and selenium (scripts/setup.sh test installs them; this
test installs nothing), waits for the page's script to replace the server-rendered report with
the live one, looks for the hot key and a verdict, and saves a screenshot to
$KURA_TEST_ARTIFACTS/heat_page.png (CTest: build/test-artifacts; the path is printed). The same
report without JavaScript: the page fetched with urllib carries the key in its server-rendered
HTML.

Chromium runs as root here: --no-sandbox, --headless=new, --disable-gpu and
--disable-dev-shm-usage (a container's /dev/shm is small).
"""
import importlib.util
import json
import os
import shutil
import tempfile
import urllib.request

import boto3
import pytest
from botocore.config import Config

HERE = os.path.dirname(os.path.abspath(__file__))
HOT_KEY = "hot-device-0042"
TABLE = "HeatDevices"
PUTS = 400
WAIT_S = 30

_spec = importlib.util.spec_from_file_location(
    "kura_conformance_conftest", os.path.join(HERE, "..", "conformance", "conftest.py"))
_conf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conf)


def _artifacts_dir():
    path = os.environ.get("KURA_TEST_ARTIFACTS") or os.path.join(HERE, "..", "..", "build",
                                                                 "test-artifacts")
    os.makedirs(path, exist_ok=True)
    return os.path.abspath(path)


@pytest.fixture(scope="module")
def server():
    binary = os.environ.get("KURA_SERVER")
    if not binary or not os.access(binary, os.X_OK):
        pytest.fail("no kura-server binary: set KURA_SERVER (CTest does)")
    workdir = tempfile.mkdtemp(prefix="kura-browser-", dir=_conf.tmp_root())
    srv = _conf.KuraServer(binary, workdir, in_memory=True).start()
    yield srv
    rc = srv.stop()
    assert rc == 0, "kura-server exited with %r\n%s" % (rc, srv.logs())
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def loaded(server):
    """The table, and the hot-key load written on it."""
    ddb = boto3.client("dynamodb", endpoint_url=server.url, region_name="us-east-1",
                       aws_access_key_id="k", aws_secret_access_key="s",
                       config=Config(retries={"max_attempts": 10, "mode": "standard"}))
    ddb.create_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "device", "AttributeType": "S"},
                                           {"AttributeName": "at", "AttributeType": "N"}],
                     KeySchema=[{"AttributeName": "device", "KeyType": "HASH"},
                                {"AttributeName": "at", "KeyType": "RANGE"}])
    # 10 WCU per put: the key's busiest second passes half its 1,000 WCU (the verdict's
    # threshold) even at 50 puts a second, so a loaded machine still gets its verdict
    payload = "x" * 10000
    for i in range(PUTS):
        ddb.put_item(TableName=TABLE, Item={"device": {"S": HOT_KEY}, "at": {"N": str(i)},
                                            "reading": {"S": payload}})
    n = sum(page["Count"] for page in ddb.get_paginator("query").paginate(
        TableName=TABLE, KeyConditionExpression="device = :d", Select="COUNT",
        ExpressionAttributeValues={":d": {"S": HOT_KEY}}))  # 4 MB: pages of 1 MB
    assert n == PUTS
    return server


@pytest.fixture(scope="module")
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("python3-selenium is not installed (scripts/setup.sh test)")
    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        pytest.fail("chromium and chromium-driver are not installed (scripts/setup.sh test)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1800"):
        opts.add_argument(flag)
    drv = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    yield drv
    drv.quit()


def _live_page(browser, server):
    """Loads the page, waits for the live render, saves the screenshot; the page's text."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    browser.get(server.url + "/kura/heat.html")
    try:
        WebDriverWait(browser, WAIT_S).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#report[data-live='true']"))
    finally:
        path = os.path.join(_artifacts_dir(), "heat_page.png")
        browser.save_screenshot(path)
        print("heat page screenshot: %s" % path)
    return browser.find_element(By.TAG_NAME, "body").text


def test_page_renders_live_charts(loaded, browser):
    """The script replaced the server-rendered report with charts, and a verdict is shown."""
    from selenium.webdriver.common.by import By
    _live_page(browser, loaded)
    assert browser.find_elements(By.CSS_SELECTOR, "#report svg.timeline")
    verdicts = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#verdicts li.verdict")]
    assert verdicts and all(v.strip() for v in verdicts), verdicts
    status = browser.find_element(By.ID, "status").text
    assert status.startswith("Live: updated"), status


def test_hot_key_and_verdict_in_browser(loaded, browser):
    """The key the load made hot is on the page, with a verdict naming it."""
    from selenium.webdriver.common.by import By
    text = _live_page(browser, loaded)
    assert HOT_KEY in text, "the hot key %r is not on the page:\n%s" % (HOT_KEY, text)
    verdicts = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#verdicts li.verdict")]
    assert any(HOT_KEY in v for v in verdicts), verdicts


def test_hot_key_without_javascript(loaded):
    """The server-rendered page (what a reader without JavaScript sees) has the hot key and
    its verdict; the live JSON has it too."""
    with urllib.request.urlopen(loaded.url + "/kura/heat.html", timeout=30) as r:
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("text/html")
        html = r.read().decode("utf-8")
    assert "<ul id=verdicts>" in html
    assert HOT_KEY in html, "the hot key %r is not in the server-rendered page" % HOT_KEY
    with urllib.request.urlopen(loaded.url + "/kura/heat?table=" + TABLE, timeout=30) as r:
        report = json.loads(r.read())
    keys = [json.dumps(k["key"]) for t in report["targets"] for k in t["hot_keys"]]
    assert any(HOT_KEY in k for k in keys), keys
