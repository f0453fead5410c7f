"""The screen at the head units' sizes, day and night: screenshots (under .build), each view audited (audit.py)."""
import os

import pytest

from audit import SIZES, audit
from languages import in_every_language
from stack import wait_for


def rpc_calls(stack, calls):
    client = stack.rpc()
    try:
        for method, params in calls:
            client.call(method, params)
    finally:
        client.close()


def open_at(browser, stack, width, height, theme):
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=True)
    context.add_init_script(f"localStorage.setItem('kiosk-theme', '{theme}')")
    page = context.new_page()
    page.goto(stack.url)
    page.wait_for_selector("#stand-view:not([hidden])", timeout=30000)
    assert page.evaluate("() => document.body.className") == theme
    return context, page


def shoot(page, screens_dir, name):
    page.screenshot(path=os.path.join(screens_dir, name + ".png"), full_page=True)
    audit(page, name)


@pytest.mark.parametrize("theme", ["day", "night"])
def test_screens(browser, parked_stack, screens_dir, theme):
    stack = parked_stack
    # The shift on, one order at the customer's door waiting for its code, one message waiting.
    rpc_calls(stack, [("shift.start", None)] + [(m, {"taskId": "task-2001"}) for m in ("task.accept", "task.arrive", "task.pickup", "task.arrive")])
    stack.sim("/sim/messages", {"driverId": "drv-1", "text": "Gate code changed, ask at the kiosk"})
    for width, height in SIZES:
        context, page = open_at(browser, stack, width, height, theme)
        wait_for(lambda: page.locator("#otp-pad").is_visible(), what="the proof step's keypad")
        shoot(page, screens_dir, f"pod-code-{width}x{height}-{theme}")
        page.locator("#more summary").tap()
        shoot(page, screens_dir, f"next-more-{width}x{height}-{theme}")
        page.locator("#more summary").tap()  # the sheet covers the tabs: closed first
        page.locator(".tab[data-tab='route']").tap()
        shoot(page, screens_dir, f"route-{width}x{height}-{theme}")
        page.locator(".tab[data-tab='messages']").tap()
        wait_for(lambda: "Gate code" in page.locator("#messages").inner_text(), what="the message")
        shoot(page, screens_dir, f"messages-{width}x{height}-{theme}")
        context.close()

    # The first order delivered, the second (a photo proof) at its door: the camera and the signature pad.
    rpc_calls(stack, [("pod.otp", {"taskId": "task-2001", "otp": "4812"}), ("task.deliver", {"taskId": "task-2001"})]
              + [(m, {"taskId": "task-2002"}) for m in ("task.accept", "task.arrive", "task.pickup", "task.arrive")])
    for width, height in SIZES:
        context, page = open_at(browser, stack, width, height, theme)
        wait_for(lambda: page.locator("#photo-pod").is_visible(), what="the photo proof step")
        shoot(page, screens_dir, f"pod-photo-{width}x{height}-{theme}")
        context.close()
    if theme == "day":
        context, page = open_at(browser, stack, 800, 480, theme)
        wait_for(lambda: page.locator("#photo-pod").is_visible(), what="the photo proof step")
        in_every_language(page, screens_dir, "pod-photo", "#photo-pod")
        context.close()
