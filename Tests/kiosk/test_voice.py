"""The voice: each prompt espeak-ng renders (test mode: to a WAV) is sound of a plausible length, and no prompt
holds a phone number or a code, even when the dispatcher's text does; it speaks the language the driver chose on
the screen, with that language's espeak-ng voice."""
import json
import os
import re
import subprocess

from conftest import open_page
from stack import wait_for

SECRETS = ["4812", "7390", "941", "0000001", "1234567"]


def sox_stat(path):
    out = subprocess.run(["sox", path, "-n", "stat"], capture_output=True, text=True).stderr
    values = dict(re.findall(r"^(.+?):\s+(\S+)$", out, re.M))
    return float(values["Length (seconds)"]), float(values["RMS     amplitude"])


def spoken_lines(stack):
    """(WAV name, espeak-ng voice, text) for each prompt, in the order spoken."""
    path = os.path.join(stack.wav_dir, "prompts.log")
    return [tuple(line.split("\t", 2)) for line in open(path).read().splitlines()] if os.path.exists(path) else []


def prompts(stack):
    return [(name, text) for name, _, text in spoken_lines(stack)]


def test_prompts_are_spoken_and_hold_no_numbers(parked_stack):
    stack = parked_stack
    client = stack.rpc()
    try:
        client.call("shift.start")
        new_task = json.load(open(os.path.join(os.path.dirname(__file__), "scenario.json")))["tasks"][0]
        new_task = dict(new_task, id="task-2009", otp="5521")
        stack.sim("/sim/tasks", new_task)
        wait_for(lambda: any(text.startswith("New order") for _, text in prompts(stack)), what="the new-order prompt")
        stack.sim("/sim/messages", {"driverId": "drv-1", "taskId": "task-2001",
                                    "text": "Customer: call +49 170 1234567, door code 4812"})
        wait_for(lambda: any("message" in text for _, text in prompts(stack)), what="the message prompt")
        stack.sim("/sim/tasks/task-2002/route", {"dropoff": {"address": "Dachauplatz 12, Regensburg", "lat": 49.01608,
                                                             "lng": 12.10052, "name": "Ben Fischer", "phone": "+49 151 0000002"}})
        wait_for(lambda: any("route has changed" in text for _, text in prompts(stack)), what="the route-change prompt")
        # Arrival: the van stands at the drop-off once the goods are picked up.
        for method in ("task.accept", "task.arrive", "task.pickup"):
            client.call(method, {"taskId": "task-2001"})
        wait_for(lambda: any(text.startswith("You have reached") for _, text in prompts(stack)), timeout=60, what="the arrival prompt")
    finally:
        client.close()

    spoken = prompts(stack)
    assert len(spoken) >= 4, spoken
    for name, text in spoken:
        assert not re.search(r"\d[\d\s+()/.-]*\d[\d\s+()/.-]*\d", text), f"{text!r} holds a number"
        assert not any(secret in text for secret in SECRETS), text
        length, rms = sox_stat(os.path.join(stack.wav_dir, name))
        words = len(text.split())
        # espeak-ng at 165 words a minute: about 0.36 s a word; allow for pauses at full stops.
        assert 0.15 * words < length < 1.0 * words + 1.5, f"{text!r}: {length:.2f} s for {words} words"
        assert rms > 0.01, f"{text!r} is silent (RMS {rms})"
    # One at a time: the files are numbered in the order spoken, none written over another.
    names = [name for name, _ in spoken]
    assert names == sorted(names) and len(set(names)) == len(names)


def test_the_voice_speaks_the_screens_language(browser, parked_stack):
    stack = parked_stack
    page = open_page(browser, stack)
    client = stack.rpc()
    try:
        client.call("shift.start")
        # Two taps on the screen: the language button, then Deutsch.
        page.locator("#language-button").tap()
        page.locator("#language-list button[data-language='de']").tap()
        wait_for(lambda: page.evaluate("document.documentElement.lang") == "de", what="the page in German")
        new_task = json.load(open(os.path.join(os.path.dirname(__file__), "scenario.json")))["tasks"][0]
        stack.sim("/sim/tasks", dict(new_task, id="task-2010", otp="6621"))
        wait_for(lambda: any(text.startswith("Neuer Auftrag") for _, _, text in spoken_lines(stack)), what="the new order in German")
        name, voice, text = next(line for line in spoken_lines(stack) if line[2].startswith("Neuer Auftrag"))
        assert voice == "de", (voice, text)
        length, rms = sox_stat(os.path.join(stack.wav_dir, name))
        assert length > 0.5 and rms > 0.01, (text, length, rms)
        # Back to English: the next prompt is English again, in the configured voice.
        page.locator("#language-button").tap()
        page.locator("#language-list button[data-language='en']").tap()
        wait_for(lambda: page.evaluate("document.documentElement.lang") == "en", what="the page in English")
        stack.sim("/sim/messages", {"driverId": "drv-1", "taskId": "task-2001", "text": "Ring twice"})
        wait_for(lambda: any(text.startswith("New message") for _, _, text in spoken_lines(stack)), what="a message in English")
        assert next(line for line in spoken_lines(stack) if line[2].startswith("New message"))[1] != "de"
    finally:
        client.close()
        page.context.close()
