"""The driver's language: the catalogs agree with the page and the voice (no key missing, none unused, the same placeholders in
every language), and every language lays out at the head units' sizes with its longest refusal shown: every action
of the view inside the screen, no text cut off, Arabic right to left; screenshots of each (under .build) and axe at
800x480."""
import glob
import json
import os
import re

from audit import audit, check_in_view
from conftest import open_page
from languages import LANGUAGES, in_every_language
from test_screens import SIZES, rpc_calls
from test_voice import spoken_lines
from stack import Stack, parked_route, wait_for

WWW = os.path.join(os.path.dirname(__file__), "..", "..", "kiosk", "www")


def own_catalog(code):
    with open(os.path.join(WWW, "i18n", f"{code}.json"), encoding="utf-8") as f:
        return json.load(f)


def catalog(code):
    """The texts the screen shows in `code`: a region's own (pt-BR) over its language's."""
    base = code.split("-")[0]
    return own_catalog(base) | own_catalog(code) if base != code else own_catalog(code)


VOICE = os.path.join(os.path.dirname(__file__), "..", "..", "Sources", "DriverKiosk", "Voice")


def used_keys():
    """The keys the page uses, and the voice's (`voice.*`, said by driverd-kiosk's VoicePrompter)."""
    script = "".join(open(path, encoding="utf-8").read() for path in glob.glob(os.path.join(WWW, "*.js")))
    page = open(os.path.join(WWW, "index.html"), encoding="utf-8").read()
    voice = "".join(open(path, encoding="utf-8").read() for path in glob.glob(os.path.join(VOICE, "*.swift")))
    return (set(re.findall(r'\bt\("([a-zA-Z]+\.[a-zA-Z]+)"', script)) | set(re.findall(r'data-i18n(?:-label)?="([^"]+)"', page))
            | set(re.findall(r'"(voice\.[a-zA-Z]+)"', voice)))


def placeholders(text):
    return sorted(re.findall(r"\{(\w+)\}", text))


def test_catalogs_match_the_page_and_each_other():
    used = used_keys()
    assert len(used) > 100, "the key scan found too few keys: the pattern no longer matches the page"
    english = catalog("en")
    assert len(LANGUAGES) >= 9 and "en" in LANGUAGES, f"the catalog scan found {LANGUAGES}"
    assert not used - set(english), f"keys the page uses without an English text: {sorted(used - set(english))}"
    assert not set(english) - used, f"English texts the page never uses: {sorted(set(english) - used)}"
    for code in LANGUAGES:
        texts = catalog(code)
        assert set(texts) == set(english), f"{code}: missing {sorted(set(english) - set(texts))}, extra {sorted(set(texts) - set(english))}"
        if "-" in code:  # a region's catalog holds only what the region says differently from its language's
            base = own_catalog(code.split("-")[0])
            assert set(own_catalog(code)) < set(base), f"{code}: keys its language lacks: {sorted(set(own_catalog(code)) - set(base))}"
            assert not [k for k, text in own_catalog(code).items() if text == base[k]], f"{code}: says it as its language does"
        for key, text in texts.items():
            assert text.strip(), f"{code}: {key} is empty"
            assert placeholders(text) == placeholders(english[key]), f"{code}: {key} has {placeholders(text)}, English {placeholders(english[key])}"
        # A few words are the same in another language (GPS, SOS, Messages, Route); more than that is a copy.
        same = [key for key, text in texts.items() if text == english[key]]
        assert code == "en" or len(same) <= 8, f"{code}: still English: {same}"


def longest_refusal(code):
    texts = catalog(code)
    return max((texts[k] for k in texts if k.startswith("refusal.")), key=len).replace("{count}", "2")


def test_every_language_at_every_size(browser, parked_stack, screens_dir):
    stack = parked_stack
    # Off shift, as a driver finds the unit in the morning.
    page = open_page(browser, stack)
    wait_for(lambda: page.locator("#primary-button").inner_text() == "Start shift", what="the start of the shift")
    in_every_language(page, screens_dir, "start", "#stand-view")
    page.context.close()
    # The shift on, an order at the customer's door waiting for its code, a message about it waiting.
    rpc_calls(stack, [("shift.start", None)] + [(m, {"taskId": "task-2001"}) for m in ("task.accept", "task.arrive", "task.pickup", "task.arrive")])
    stack.sim("/sim/messages", {"driverId": "drv-1", "taskId": "task-2001", "text": "Ring twice"})
    for code in LANGUAGES:
        texts = catalog(code)
        for width, height in SIZES:
            context = browser.new_context(viewport={"width": width, "height": height}, has_touch=True)
            context.add_init_script(f"localStorage.setItem('kiosk-language:drv-1', '{code}'); localStorage.setItem('kiosk-theme', 'day')")
            page = context.new_page()
            page.goto(stack.url)
            page.wait_for_selector("#stand-view:not([hidden])", timeout=30000)
            name = f"{code}-{width}x{height}"
            assert page.evaluate("() => [document.documentElement.lang, document.documentElement.dir]") == [code, "rtl" if code == "ar" else "ltr"]
            wait_for(lambda: page.locator("#otp-pad").is_visible(), what=f"{name}: the keypad")
            assert page.locator("#otp-pad h2").inner_text() == texts["otp.title"]
            # The longest refusal this language has, on the card beside the keypad.
            page.evaluate("(text) => refuse(() => text)", longest_refusal(code))
            check_in_view(page, f"{name} code step after a refusal")
            page.screenshot(path=os.path.join(screens_dir, f"lang-{name}-pod-code.png"))
            if (width, height) == (800, 480):
                audit(page, f"{name} code step")
            page.locator(".tab[data-tab='messages']").tap()
            title = page.locator("#messages li strong").first
            wait_for(lambda: title.inner_text() == texts["push.messageAbout"].replace("{place}", "Anna Becker"), what=f"{name}: the message's title")
            if code == "de":  # its time the German way (24 hours), then the stop's address
                meta = page.locator("#messages li .message-meta").first.inner_text()
                assert re.fullmatch(r"\d{1,2}:\d{2} · Dachauplatz 4, Regensburg", meta), meta
            check_in_view(page, f"{name} messages")
            page.screenshot(path=os.path.join(screens_dir, f"lang-{name}-messages.png"))
            page.locator(".tab[data-tab='route']").tap()
            check_in_view(page, f"{name} route")
            page.screenshot(path=os.path.join(screens_dir, f"lang-{name}-route.png"))
            if (width, height) == (800, 480):
                audit(page, f"{name} route")
            context.close()


def test_the_list_and_the_texts_come_from_the_kiosk(browser, parked_stack):
    """The sheet lists every catalog the kiosk has, each language in its own words and direction; driverd-kiosk layers
    a region's catalog over its language's over English's (one place, the voice's too); a code without a catalog is
    refused."""
    page = open_page(browser, parked_stack)
    listed = page.evaluate("() => I18n.LANGUAGES.map((l) => [l.code, l.name, l.rtl])")
    assert [code for code, _, _ in listed] == LANGUAGES
    names = {code: name for code, name, _ in listed}
    assert names["en"] == "English" and names["de"] == "Deutsch" and names["pt-BR"] == "Português (Brasil)", names
    assert names["ar"] == "العربية" and names["tr"] == "Türkçe", names
    assert [code for code, _, rtl in listed if rtl] == ["ar"]
    answer = page.evaluate("async () => { const r = await fetch('catalog?code=pt-BR'); return [r.status, await r.json()]; }")
    assert answer[0] == 200 and answer[1] == own_catalog("en") | catalog("pt-BR")
    assert page.evaluate("async () => (await fetch('catalog?code=xx')).status") == 404
    assert page.evaluate("async () => (await fetch('catalog?code=../../etc/passwd')).status") == 404


def test_the_language_in_two_taps(browser, parked_stack):
    page = open_page(browser, parked_stack)
    assert page.evaluate("() => document.documentElement.lang") == "en"
    page.locator("#language-button").tap()
    page.locator("#language-list button[data-language='de']").tap()
    wait_for(lambda: page.locator(".tab[data-tab='next']").inner_text() == "Nächster Halt", what="the tabs in German")
    assert page.locator("#languages").is_hidden()
    assert page.locator("#primary-button").inner_text() == "Schicht beginnen"
    # Kept for the next start of the screen.
    page.reload()
    page.wait_for_selector("#stand-view:not([hidden])", timeout=30000)
    wait_for(lambda: page.locator("#primary-button").inner_text() == "Schicht beginnen", what="German after a reload")
    page.locator("#language-button").tap()
    page.locator("#language-list button[data-language='ar']").tap()
    wait_for(lambda: page.evaluate("() => document.documentElement.dir") == "rtl", what="Arabic, right to left")
    # Mirrored: the SOS button, last in the strip, sits at its left edge.
    sos, shift = page.locator("#sos-button").bounding_box(), page.locator("#chip-shift").bounding_box()
    assert sos["x"] < shift["x"], (sos, shift)


def test_the_language_of_the_drivers_profile(browser, parked_stack):
    """A driver whose profile at the backend names a language gets the screen in it without a tap, and the voice with it;
    their own choice here wins over the profile from then on; the next driver's screen follows that driver."""
    page = open_page(browser, parked_stack)
    lang = lambda: page.evaluate("() => document.documentElement.lang")
    primary = page.locator("#primary-button")
    assert lang() == "en"

    def log_in(username):
        client = parked_stack.rpc()
        try:
            client.call("auth.login", {"username": username, "password": "demo-password"})
            return client.call("outbox.status")
        finally:
            client.close()

    status = log_in("rider2")
    assert (status["driverId"], status.get("driverLanguage")) == ("drv-2", "pt-BR"), status
    wait_for(lambda: lang() == "pt-BR", timeout=45, what="Brazilian Portuguese from drv-2's profile, no tap")
    wait_for(lambda: primary.inner_text() == catalog("pt-BR")["action.startShift"] == "Iniciar turno", what="the action in Brazil's words")
    # The voice with it: on shift, a message from the office is said in Brazil's words, by espeak-ng's Brazilian voice.
    rpc_calls(parked_stack, [("shift.start", None)])
    parked_stack.sim("/sim/messages", {"driverId": "drv-2", "text": "Olá"})
    said = wait_for(lambda: next((line for line in spoken_lines(parked_stack) if line[2] == catalog("pt-BR")["voice.message"]), None),
                    what="the message said in Brazilian Portuguese")
    assert said[1] == "pt-br", said  # the Brazilian voice of the profile's pt-BR
    rpc_calls(parked_stack, [("shift.end", None)])
    # drv-2 prefers German on this screen: two taps, kept over the profile after a reload.
    page.locator("#language-button").tap()
    page.locator("#language-list button[data-language='de']").tap()
    page.reload()
    page.wait_for_selector("#stand-view:not([hidden])", timeout=30000)
    wait_for(lambda: lang() == "de" and primary.inner_text() == "Schicht beginnen", what="drv-2's own choice after a reload")

    # drv-1 (no language in the profile, no choice here) gets the browser's, English; drv-2 again gets German.
    status = log_in("rider1")
    assert status["driverId"] == "drv-1" and status.get("driverLanguage") is None, status
    wait_for(lambda: lang() == "en", timeout=45, what="English for drv-1")
    log_in("rider2")
    wait_for(lambda: lang() == "de", timeout=45, what="German again for drv-2")


def test_distances_and_speeds_in_the_fleets_units(browser):
    """kiosk.units: the roads' units, whatever the language (a German driver in England reads miles, with a German
    decimal comma); metric by default (the driving test sees km/h)."""
    stack = Stack("units", parked_route(), kiosk_args=["--units", "uk"]).start()
    try:
        page = open_page(browser, stack)
        formatted = "() => [I18n.distance(4), I18n.distance(50), I18n.distance(400), I18n.distance(2500), I18n.speed(13.4)]"
        wait_for(lambda: page.evaluate(formatted) == ["4 yd", "55 yd", "0.2 mi", "1.6 mi", "30 mph"], what="miles and yards")
        page.evaluate("async () => { await I18n.choose('de'); render(); }")
        assert page.evaluate(formatted) == ["4 yd", "55 yd", "0,2 mi", "1,6 mi", "30 mi/h"]
    finally:
        stack.stop()


# Counts each Intl formatter the page makes (a Proxy keeps the constructor's name and behaviour).
COUNT_FORMATTERS = """
window.formattersMade = 0;
for (const name of ["DateTimeFormat", "NumberFormat"]) {
  Intl[name] = new Proxy(Intl[name], { construct(target, args) { window.formattersMade += 1; return new target(...args); } });
}
"""


def test_a_render_makes_no_new_formatter(browser, parked_stack):
    """Formatting is a figure a driver feels: making an Intl formatter reads its locale's data, and a list of messages
    that made one per message's time took a push to the screen from 7 ms to 15-18 (make bench). Once each language's
    formatters are made, a render of thirty messages, with times, distances and minutes, makes none."""
    rpc_calls(parked_stack, [("shift.start", None)])
    for n in range(30):
        parked_stack.sim("/sim/messages", {"driverId": "drv-1", "text": f"Note {n}"})
    context = browser.new_context(viewport={"width": 800, "height": 480}, has_touch=True)
    context.add_init_script(COUNT_FORMATTERS)
    page = context.new_page()
    try:
        page.goto(parked_stack.url)
        page.locator(".tab[data-tab='messages']").tap()
        wait_for(lambda: page.locator("#messages li .message-meta").count() >= 30, what="thirty messages, each with its time")
        for code in ("en", "de", "ar"):
            page.evaluate("async (code) => { await I18n.choose(code); render(); }", code)
            made = page.evaluate("() => { const before = window.formattersMade; render(); render(); return window.formattersMade - before; }")
            assert made == 0, f"{code}: two renders made {made} formatters"
            if code != "ar":  # Arabic writes a time in its own digits
                meta = page.locator("#messages li .message-meta").first.inner_text().replace("\u202f", " ")
                assert re.fullmatch(r"\d{1,2}:\d{2}( [AP]M)?", meta), meta
    finally:
        context.close()
