"""The whole journey by touch on the real stack: four orders, each to its end through the screen alone."""
import base64
import struct
import zlib

from conftest import open_page
from stack import wait_for

# How each order ends: its proof, or a failure and the return.
PLAN = {"task-2001": "otp", "task-2002": "photo", "task-2003": "signature", "task-2004": "fail"}
OTP = {"task-2001": "4812"}
EXPECTED = {
    "task-2001": ["ACCEPTED", "ARRIVED_AT_STORE", "PICKED_UP", "ARRIVED_AT_DESTINATION", "DELIVERED"],
    "task-2002": ["ACCEPTED", "ARRIVED_AT_STORE", "PICKED_UP", "ARRIVED_AT_DESTINATION", "DELIVERED"],
    "task-2003": ["ACCEPTED", "ARRIVED_AT_STORE", "PICKED_UP", "ARRIVED_AT_DESTINATION", "DELIVERED"],
    "task-2004": ["ACCEPTED", "ARRIVED_AT_STORE", "PICKED_UP", "ARRIVED_AT_DESTINATION", "DELIVERY_FAILED", "RETURNED_TO_VENDOR"],
}


def png(width=4, height=4):
    """A small real PNG, as a camera service might write (any valid image does for the proof)."""
    raw = b"".join(b"\x00" + b"\x80\x40\x20" * width for _ in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def card(page):
    return page.evaluate("""() => {
        const next = window.kioskState.next && window.kioskState.next.next;
        return next ? {task: next.task.id, status: next.task.status, action: next.primaryAction, pod: next.task.pod} : null;
    }""")


def test_shift_started_elsewhere_shows_the_first_order_at_once(browser, parked_stack):
    """A shift started by another front end (driverctl, a second screen) shows the first order's card from the
    shift's own event: within a round trip, not at the next status re-read on the parked fix's 10-s rhythm."""
    stack = parked_stack
    page = open_page(browser, stack)
    wait_for(lambda: page.locator("#primary-button").inner_text() == "Start shift", what="the Start shift button")
    client = stack.rpc()
    try:
        client.call("shift.start")
        wait_for(lambda: card(page) is not None and page.locator("#primary-button").inner_text() not in ("", "Start shift"),
                 timeout=4, interval=0.05, what="the first order's action within 4 s of the shift's start")
    finally:
        client.call("shift.end")
        client.close()


def test_journey_by_touch(browser, parked_stack, tmp_path):
    stack = parked_stack
    page = open_page(browser, stack)
    # Off shift: the one button starts the shift.
    wait_for(lambda: page.locator("#primary-button").inner_text() == "Start shift", what="the Start shift button")
    page.locator("#primary-button").tap()
    # The card may show the order while off shift: wait for the shift itself, and the button that moves the order.
    wait_for(lambda: card(page) is not None and page.locator("#primary-button").inner_text() not in ("", "Start shift"),
             what="the first order's action on the card")

    photo = tmp_path / "handover.png"
    photo.write_bytes(png())
    for _ in range(60):
        current = card(page)
        if current is None:
            break
        task, action = current["task"], current["action"]
        before = dict(current)
        if action == "Capture POD" and PLAN[task] == "fail":
            page.locator("#more summary").tap()
            page.locator("#fail-reasons button[data-fail='CUSTOMER_UNAVAILABLE']").tap()
        elif action == "Capture POD" and PLAN[task] == "otp":
            for digit in OTP[task]:
                page.locator(f".keys button[data-key='{digit}']").tap()
            page.locator(".keys button[data-key='ok']").tap()
        elif action == "Capture POD" and PLAN[task] == "photo":
            page.locator("#photo-input").set_input_files(str(photo))
        elif action == "Capture POD" and PLAN[task] == "signature":
            page.locator("#signature").scroll_into_view_if_needed()
            box = page.locator("#signature").bounding_box()
            page.mouse.move(box["x"] + 20, box["y"] + 40)
            page.mouse.down()
            for step in range(1, 12):
                page.mouse.move(box["x"] + 20 + step * 30, box["y"] + 40 + (step % 3) * 30)
            page.mouse.up()
            page.locator("#signature-save").tap()
        else:
            page.locator("#primary-button").tap()
        try:
            wait_for(lambda: card(page) != before, timeout=20, what=f"the card to move on from {before}")
        except AssertionError as error:
            raise AssertionError(f"{error}; the screen says: {page.locator('#notice').inner_text()!r} "
                                 f"{page.locator('#pod-status').inner_text()!r}") from None
    assert card(page) is None, f"orders left on the card: {card(page)}"
    assert page.locator("#next-heading").inner_text() == "No stop waiting"

    # Each action reached dispatch-sim exactly once, in order.
    def received():
        stats = stack.sim("/sim/stats")
        by_task = {}
        for update in stats["statusUpdates"]:
            by_task.setdefault(update["taskId"], []).append(update["status"])
        return by_task if all(by_task.get(t) == s for t, s in EXPECTED.items()) else None
    by_task = wait_for(received, timeout=30, interval=0.5, what="every transition at dispatch-sim")
    assert by_task == EXPECTED
    stats = stack.sim("/sim/stats")
    proofs = [(p["taskId"], p["type"], p["accepted"]) for p in stats["pods"]]
    assert ("task-2001", "OTP", True) in proofs
    photos = [p for p in proofs if p[1] == "PHOTO"]
    assert sorted(t for t, _, _ in photos) == ["task-2002", "task-2003"], proofs
