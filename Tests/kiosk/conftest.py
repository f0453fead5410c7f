import os

import pytest
from playwright.sync_api import sync_playwright

from stack import LIVE, Stack, parked_route

SCREENS = os.environ.get("KIOSK_SCREENS_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", ".build", "kiosk-screens")


# What a page showed when its test failed: which view, the connection, the safety gate, the card.
PAGE_STATE = """() => {
    const s = window.kioskState || {};
    const shown = (id) => { const e = document.getElementById(id); return e ? !e.hidden : null; };
    const next = s.next && s.next.next;
    return JSON.stringify({url: location.pathname, connected: s.connected, safety: s.safety, tab: s.tab, busy: s.busy,
        standView: shown("stand-view"), driveView: shown("drive-view"), reconnecting: shown("reconnecting"),
        card: next ? {task: next.task.id, status: next.task.status, action: next.primaryAction} : null,
        notice: (document.getElementById("notice") || {}).textContent});
}"""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test's report carries what the screen and the stack were doing: CI keeps only the output."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    browser = item.funcargs.get("browser")
    for index, page in enumerate(p for context in (browser.contexts if browser else []) for p in context.pages):
        try:
            state = page.evaluate(PAGE_STATE)
        except Exception as error:  # a page that is gone says why instead
            state = f"(unreadable: {error})"
        report.sections.append((f"page {index}", state))
    for stack in LIVE:
        report.sections.append((f"stack {stack.name}: processes", stack.health()))
        for name in ("driverd", "driverd-kiosk"):
            report.sections.append((f"stack {stack.name}: {name}.log, last lines", stack.tail(name)))


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
