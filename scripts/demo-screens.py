#!/usr/bin/env python3
"""make demo's camera: keeps the driver's screen open in headless chromium (800x480, a head unit's size) and
writes a screenshot each time a name arrives on standard input (`route:NAME` shows the route tab first,
`night:NAME` the night theme). Ends at end of input."""
import os
import sys

from playwright.sync_api import sync_playwright

url, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
with sync_playwright() as playwright:
    browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    page = browser.new_context(viewport={"width": 800, "height": 480}, has_touch=True).new_page()
    page.goto(url)
    page.wait_for_selector("#stand-view:not([hidden]), #drive-view:not([hidden])", timeout=30000)
    print("ready", flush=True)
    for line in sys.stdin:
        name = line.strip()
        if not name:
            continue
        view, _, name = name.rpartition(":")
        try:
            page.wait_for_timeout(400)  # the page renders the notification that prompted this moment
            # The tabs exist only on the stand view: while driving the screen shows the driving view alone.
            if view in ("route", "next") and page.locator("#stand-view").is_visible():
                page.locator(f".tab[data-tab='{view}']").click(timeout=2000)
            if view == "drive":
                try:
                    page.wait_for_selector("#drive-view:not([hidden])", timeout=20000)
                except Exception:
                    pass  # the van did not move: the screen as it is
            if view == "night":
                page.evaluate("() => { document.body.classList.remove('day'); document.body.classList.add('night'); }")
            page.screenshot(path=os.path.join(out, name + ".png"))
            if view == "route" and page.locator("#stand-view").is_visible():
                page.locator(".tab[data-tab='next']").click(timeout=2000)
            print(f"   screenshot .demo/screens/{name}.png", flush=True)
        except Exception as error:  # a moment missed is no reason to stop the demo
            print(f"   no screenshot {name}: {error}", flush=True)
    browser.close()
