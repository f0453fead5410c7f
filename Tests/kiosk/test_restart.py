"""driverd killed and started again: the page says so at once and recovers by itself, without a reload."""
import signal

from conftest import open_page
from languages import in_every_language
from stack import wait_for


def test_page_recovers_after_driverd_restarts(browser, parked_stack, screens_dir):
    stack = parked_stack
    page = open_page(browser, stack)
    page.evaluate("() => { window.loadMarker = 'first load'; }")
    wait_for(lambda: "Pizzeria" in page.locator("#next-heading").inner_text() or page.locator("#next-heading").inner_text(),
             what="the next-stop card")

    stack.kill("driverd", signal.SIGKILL)
    wait_for(lambda: page.locator("#reconnecting").is_visible(), timeout=10, what="the reconnecting notice")
    # Stale data is not shown while the unit does not answer.
    assert not page.locator("#stand-view").is_visible()
    assert not page.locator("#drive-view").is_visible()
    # What it says, in every language, while the unit does not answer.
    in_every_language(page, screens_dir, "reconnect", "#reconnecting")

    stack.start_driverd()
    wait_for(lambda: not page.locator("#reconnecting").is_visible(), timeout=30, what="the page to reconnect")
    wait_for(lambda: page.locator("#stand-view").is_visible() or page.locator("#drive-view").is_visible(), what="a view again")
    assert page.evaluate("() => window.loadMarker") == "first load"
    # And it works: a tap reaches the new daemon.
    stack.wait_standing()
    wait_for(lambda: page.locator("#stand-view").is_visible(), what="the stand view")
    page.locator("#primary-button").tap()
    client = stack.rpc()
    try:
        wait_for(lambda: client.call("shift.status")["onShift"], what="the shift started from the page")
    finally:
        client.close()
