"""The languages the screen speaks, and one view shot in each of them at each head unit's size: switched the way a
driver switches (the page's own I18n.choose, then a render), every action checked inside the screen with no text cut
off, a screenshot each (lang-<code>-<size>-<view>.png), axe at 800x480. The view itself is reached for real by the
test that calls this (a drive, a killed daemon, a proof step)."""
import glob
import os

from audit import SIZES, audit, check_in_view

# Every catalog the kiosk ships, as driverd-kiosk lists them (GET /languages): English first, then by code.
LANGUAGES = sorted((os.path.basename(path)[:-5] for path in glob.glob(os.path.join(os.path.dirname(__file__), "..", "..", "kiosk", "www", "i18n", "*.json"))),
                   key=lambda code: "" if code == "en" else code)


def in_every_language(page, screens_dir, view, visible, sizes=SIZES):
    """`visible`: the selector that shows the view is still the one on screen (checked at every shot)."""
    try:
        for width, height in sizes:
            page.set_viewport_size({"width": width, "height": height})
            for code in LANGUAGES:
                page.evaluate("async (code) => { await I18n.choose(code); render(); }", code)
                name = f"{code}-{width}x{height}"
                assert page.evaluate("() => [document.documentElement.lang, document.documentElement.dir]") == [code, "rtl" if code == "ar" else "ltr"]
                assert page.locator(visible).is_visible(), f"{name}: {view} is no longer on screen"
                check_in_view(page, f"{name} {view}")
                page.screenshot(path=os.path.join(screens_dir, f"lang-{name}-{view}.png"))
                if (width, height) == (800, 480):
                    audit(page, f"{name} {view}")
    finally:
        page.evaluate("async () => { await I18n.choose('en'); render(); }")
        page.set_viewport_size({"width": 800, "height": 480})
