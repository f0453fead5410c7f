import os

import pytest
from playwright.sync_api import sync_playwright

from stack import Stack, parked_route

SCREENS = os.environ.get("KIOSK_SCREENS_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", ".build", "kiosk-screens")


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def parked_stack():
    stack = Stack("parked", parked_route()).start()
    stack.wait_standing()
    yield stack
    stack.stop()


def open_page(browser, stack, width=800, height=480):
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=True, is_mobile=False)
    page = context.new_page()
    page.goto(stack.url)
    page.wait_for_selector("#stand-view:not([hidden]), #drive-view:not([hidden])", timeout=30000)
    return page


@pytest.fixture
def screens_dir():
    os.makedirs(SCREENS, exist_ok=True)
    return SCREENS
