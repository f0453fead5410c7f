"""A unit whose storage cannot save, as the driver sees it: the strip says so before a tap, a tap is refused in the same
words on the card, both in the driver's language, and the line goes by itself once there is room. The state directory
is a small tmpfs filled to its last byte (root: a mount)."""
import os
import subprocess

import pytest

from audit import check_in_view
from conftest import open_page
from stack import Stack, parked_route, wait_for
from test_screens import rpc_calls

FULL_STRIP = "This unit cannot save: its storage is full. Call the office."
FULL_REFUSAL = "Not saved: the storage is full. Call the office."


def fill(directory, name):
    """Writes until the file system under `directory` is full to its last byte."""
    with open(os.path.join(directory, name), "ab", buffering=0) as f:
        for size in (1 << 20, 1 << 12, 1):
            chunk = b"Z" * size
            try:
                while True:
                    f.write(chunk)
            except OSError:
                pass


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs for the state directory needs root")
def test_a_store_that_cannot_save_is_said_in_the_drivers_words(browser, screens_dir):
    stack = Stack("store", parked_route())
    state = os.path.join(stack.dir, "state")
    os.makedirs(state)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", state], check=True)
    try:
        stack.start()
        stack.wait_standing()
        rpc_calls(stack, [("shift.start", None)])
        page = open_page(browser, stack)
        chip = page.locator("#chip-store")
        assert not chip.is_visible(), "a healthy store shows nothing"

        # Another program fills the disk: the driver's next change is saved from the reserve, and the strip says
        # nothing yet (the change was saved). It keeps filling: now nothing can be saved, and the strip says so.
        fill(state, "filler")
        rpc_calls(stack, [("task.accept", {"taskId": "task-2001"})])
        fill(state, "filler-2")
        wait_for(lambda: chip.is_visible(), timeout=30, what="the strip's store line")
        assert chip.inner_text() == FULL_STRIP

        # The driver taps anyway: refused on the card, in the same words, never "try again" or "saved".
        wait_for(lambda: page.locator("#primary-button").inner_text() == "Arrived", what="the next step")
        page.locator("#primary-button").tap()
        reason = page.locator("#primary-reason")
        wait_for(lambda: reason.inner_text() == FULL_REFUSAL, what="the refusal on the card")
        check_in_view(page, "800x480 with a full store")
        page.screenshot(path=os.path.join(screens_dir, "store-full-800x480.png"))

        # In the driver's language, both.
        page.evaluate("async () => { await I18n.choose('de'); render(); }")
        assert chip.inner_text() == "Dieses Gerät kann nicht speichern: der Speicher ist voll. Rufen Sie die Zentrale an."
        assert reason.inner_text() == "Nicht gespeichert: der Speicher ist voll. Rufen Sie die Zentrale an."
        page.evaluate("async () => { await I18n.choose('en'); render(); }")

        # Space returns: the line goes by itself, and the tap goes through.
        os.remove(os.path.join(state, "filler-2"))
        os.remove(os.path.join(state, "filler"))
        wait_for(lambda: not chip.is_visible(), timeout=40, what="the store line gone once there is room")
        page.locator("#primary-button").tap()
        wait_for(lambda: page.locator("#primary-button").inner_text() != "Arrived", what="the arrival saved")
        assert reason.inner_text() == ""
    finally:
        subprocess.run(["umount", "-l", state], check=False)
        stack.stop()
