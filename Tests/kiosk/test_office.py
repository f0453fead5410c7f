"""The strip's office line: what the driver can act on only by calling the office (agent.health's findings for the
driver), in the driver's language, and nothing for what is the office's own business. Here the backend refuses the
driver's change for good (a dead letter), on a real driverd and dispatch-sim."""
from conftest import open_page
from stack import Stack, parked_route, wait_for
from test_screens import rpc_calls

REFUSED = "Changes refused by the office: 1. Call the office."


def test_a_change_the_office_refused_asks_the_driver_to_call(browser):
    stack = Stack("office", parked_route())
    try:
        stack.start()
        stack.wait_standing()
        rpc_calls(stack, [("shift.start", None)])
        page = open_page(browser, stack)
        line = page.locator("#chip-office")
        wait_for(lambda: page.locator("#primary-button").inner_text() == "Accept", what="the first task")
        assert not line.is_visible(), "a healthy unit shows no office line"

        # The backend refuses every change to the task (422: not a retry, a dead letter); the driver accepts it.
        stack.sim("/sim/faults", {"errorRate": 1, "errorStatus": 422, "pathPrefix": "/api/v1/rider/tasks/task-2001/"}, method="PUT")
        page.locator("#primary-button").tap()
        wait_for(lambda: line.is_visible(), timeout=30, what="the office line")
        assert line.inner_text() == REFUSED
        page.evaluate("async () => { await I18n.choose('de'); render(); }")
        assert line.inner_text() == "Von der Zentrale abgelehnte Änderungen: 1. Rufen Sie die Zentrale an."
    finally:
        stack.stop()
