"""A message acknowledged by another front end (driverctl, the voice, a second screen) leaves this screen too:
driverd sends push.summary with what is left after every acknowledgement."""
from conftest import open_page
from stack import wait_for


def test_a_push_acknowledged_elsewhere_leaves_the_screen(browser, parked_stack):
    stack = parked_stack
    client = stack.rpc()
    try:
        client.call("shift.start")
        page = open_page(browser, stack)
        page.locator(".tab[data-tab='messages']").tap()
        stack.sim("/sim/messages", {"driverId": "drv-1", "text": "First: the side door"})
        stack.sim("/sim/messages", {"driverId": "drv-1", "text": "Second: ring twice"})
        wait_for(lambda: "ring twice" in page.locator("#messages").inner_text(), what="both messages on screen")
        first = page.evaluate("() => [...window.kioskState.pushes.values()].find((p) => p.message.startsWith('First')).id")
        summary = client.call("events.ack", {"id": first})
        assert first not in summary["ids"]
        wait_for(lambda: "side door" not in page.locator("#messages").inner_text(), what="the acknowledged message gone")
        assert "ring twice" in page.locator("#messages").inner_text()
        assert page.locator("#message-count").inner_text() == "(1)"
    finally:
        client.close()
