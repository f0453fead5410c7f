"""Driving: the screen shows the driving view above the safety limit, holds a message with its summary, and
gives everything back when the van stands, without a reload. The voice says what waits."""
import os

from audit import audit
from conftest import open_page
from languages import in_every_language
from stack import Stack, driving_route, wait_for


def test_driving_view_holds_messages_until_the_van_stands(browser, screens_dir):
    stack = Stack("driving", driving_route()).start()
    try:
        stack.wait_standing()
        client = stack.rpc()
        client.call("shift.start")
        client.close()
        page = open_page(browser, stack)
        page.evaluate("() => { window.loadMarker = 'first load'; }")
        wait_for(lambda: page.locator("#stand-view").is_visible(), what="the stand view while parked")

        # The drive starts: the driving view, the reason on the disabled action in the driver's words and units.
        wait_for(lambda: page.locator("#drive-view").is_visible(), timeout=90, interval=0.25, what="the driving view")
        assert not page.locator("#stand-view").is_visible()
        primary = page.locator("#drive-primary")
        assert primary.is_disabled()
        # Nothing but SOS is tappable while driving.
        enabled = page.evaluate("""() => [...document.querySelectorAll('button, input, select, textarea, a[href]')]
            .filter((e) => e.getClientRects().length > 0 && !e.disabled).map((e) => e.id || e.textContent.trim())""")
        assert enabled == ["sos-button"], enabled
        reason = page.locator("#drive-reason").inner_text()
        assert reason.startswith("Stop the van to use the buttons") and "km/h" in reason and "m/s" not in reason, reason

        stack.sim("/sim/messages", {"driverId": "drv-1", "taskId": "task-2001", "text": "Ring at the back door please"})
        held = page.locator("#drive-held")
        wait_for(lambda: held.is_visible() and "1 waiting" in held.inner_text(), timeout=20, what="the held message's summary")
        assert "pull over to read" in held.inner_text()
        assert "back door" not in page.locator("body").inner_text()
        page.screenshot(path=os.path.join(screens_dir, "driving-800x480-day.png"))
        audit(page, "driving view")
        in_every_language(page, screens_dir, "driving", "#drive-view")

        # The van stands: the message appears, without a reload.
        wait_for(lambda: page.locator("#stand-view").is_visible(), timeout=200, interval=0.25, what="the stand view after the drive")
        page.locator(".tab[data-tab='messages']").tap()
        wait_for(lambda: "back door" in page.locator("#messages").inner_text(), timeout=20, what="the held message shown")
        assert page.evaluate("() => window.loadMarker") == "first load"
        page.locator("#messages button[data-ack]").first.tap()
        wait_for(lambda: page.locator("#no-messages").is_visible(), what="the message acknowledged")

        # The map shows the van the way it faces: the course it last drove (east, 90 degrees).
        page.locator(".tab[data-tab='route']").tap()
        heading = wait_for(lambda: page.evaluate("() => { const v = document.querySelector('#map svg .van'); return v && v.dataset.heading; }"),
                           what="the van's arrow on the map")
        assert abs(float(heading) - 90) <= 15, heading

        # The voice said what waited while driving, and nothing of the message's text.
        log = wait_for(lambda: _prompts(stack), what="the voice's prompts")
        assert any("pull over to read" in text.lower() for _, text in log), log
    finally:
        stack.stop()


def _prompts(stack):
    path = os.path.join(stack.wav_dir, "prompts.log")
    if not os.path.exists(path):
        return None
    # Each line: the WAV's name, the espeak-ng voice, the text.
    lines = [(parts[0], parts[-1]) for parts in (line.split("\t", 2) for line in open(path).read().splitlines() if "\t" in line)]
    return lines if any("pull over" in text.lower() for _, text in lines) else None
