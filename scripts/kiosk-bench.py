#!/usr/bin/env python3
"""The kiosk's figures, each beside its baseline from the same run:

  tap -> screen    a tap on the card's button (accept, arrived, picked up) until the card shows the next step, against
                   the same action called by a raw client on driverd's socket until its reply (the floor);
  push -> screen   a backend push (POST /sim/messages) until the page shows it, against the same push read by a
                   raw `events.subscribe` client on driverd's socket (the floor: what driverd itself takes);
  order -> screen  a new order from the dispatcher (POST /sim/tasks: a push, then driverd fetches the route) until
                   the page lists its stop, against a raw client seeing the order's `task.changed`;
  memory           the page's JS heap and the renderer's RSS after a loop of the whole journey (--soak-minutes),
                   against the same at its start; the kiosk's peak RSS against driverd's.

  per language     tap -> screen and push -> screen again with the page in each of --languages (a reload in it).

    kiosk-bench.py BIN_DIR [--taps 30] [--orders 20] [--pushes 50] [--soak-minutes 0] [--languages de,fr,ar]
"""
import argparse
import json
import os
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "kiosk"))
parser = argparse.ArgumentParser()
parser.add_argument("bin")
parser.add_argument("--pushes", type=int, default=50)
parser.add_argument("--taps", type=int, default=30)
parser.add_argument("--orders", type=int, default=20)
parser.add_argument("--soak-minutes", type=float, default=0)
parser.add_argument("--languages", default="", help="comma-separated page languages (de,ar...) timed again after English")
parser.add_argument("--language-taps", type=int, default=10)
parser.add_argument("--language-pushes", type=int, default=20)
args = parser.parse_args()
os.environ["DRIVERD_BIN_DIR"] = os.path.abspath(args.bin)

from playwright.sync_api import sync_playwright  # noqa: E402

from stack import RPC, Stack, parked_route, wait_for  # noqa: E402


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def rss_kib(pid, field="VmRSS"):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def pss_kib(pid):
    for line in open(f"/proc/{pid}/smaps_rollup"):
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


def renderer_rss_kib():
    """The proportional set size of chromium's renderer processes (shared pages counted once, not per process)."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        whole = b" ".join(cmdline)  # chromium rewrites its title: one string with spaces
        if b"chromium" in whole and b"--type=renderer" in whole:
            total += pss_kib(pid)
    return total


class RawSubscriber:
    """The baseline: a plain client of driverd's socket subscribed to `push`, read by the measuring thread itself
    (blocked in recv, so nothing stands between the bytes arriving and their time stamp)."""

    def __init__(self, path):
        self.rpc = RPC(path)
        self.rpc.call("events.subscribe", {"topics": ["push"]})

    def wait_for_push(self, text):
        while True:
            line = self.rpc.file.readline()
            at = time.time()
            message = json.loads(line)
            if message.get("method") == "push" and message["params"].get("message") == text:
                return at, message["params"]["id"]


def latency(stack, page, raw, pushes):
    page.evaluate("""() => {
        window.benchSeen = {};
        new MutationObserver(() => {
            for (const item of document.querySelectorAll('#messages li')) {
                const match = item.textContent.match(/bench-(\\d+)/);
                if (match && !(match[1] in window.benchSeen)) window.benchSeen[match[1]] = Date.now();
            }
        }).observe(document.getElementById('messages'), {childList: true, subtree: true});
    }""")
    acker = stack.rpc()
    screen, floor = [], []
    for index in range(pushes):
        text = f"bench-{index}"
        sent = {}

        def post():
            sent["at"] = time.time()
            stack.sim("/sim/messages", {"driverId": "drv-1", "text": text})
        poster = threading.Thread(target=post)
        poster.start()
        arrived, push_id = raw.wait_for_push(text)
        poster.join()
        shown = wait_for(lambda: page.evaluate(f"() => window.benchSeen['{index}']"), timeout=20, interval=0.005, what=f"{text} on screen")
        floor.append((arrived - sent["at"]) * 1000)
        screen.append(shown - sent["at"] * 1000)
        acker.call("events.ack", {"id": push_id})
        time.sleep(0.2)
    acker.close()
    return screen, floor


SCENARIO = os.path.join(os.path.dirname(__file__), "..", "Tests", "kiosk", "scenario.json")


def post_order(stack, client, task_id):
    task = json.load(open(SCENARIO))["tasks"][0]
    stack.sim("/sim/tasks", dict(task, id=task_id))
    wait_for(lambda: any(t["id"] == task_id for t in client.call("route.get")["tasks"]), timeout=30, what=task_id)
    return task


def finish(client, task_id):
    """The proof step is not a tap on the card's button: the order is failed through the socket, untimed."""
    try:
        client.call("task.fail", {"taskId": task_id, "reason": "CUSTOMER_UNAVAILABLE"})
    except RuntimeError:
        client.call("task.fail", {"taskId": task_id, "reason": "CUSTOMER_UNAVAILABLE", "outsideReason": "OTHER"})


def tap_latency(stack, page, client, taps, tag=""):
    """Taps the card's button until `taps` taps were timed: from the click (in the page) until the card's button
    shows the next step. Each timed tap has a floor: the same method on an order of its own, called by a raw
    client, until its reply."""
    page.evaluate("""() => {
        const button = document.getElementById('primary-button');
        button.addEventListener('click', () => {
            const before = button.textContent;
            const started = performance.now();
            window.benchTap = null;
            const observer = new MutationObserver(() => {
                if (button.textContent !== before || button.hidden) { window.benchTap = performance.now() - started; observer.disconnect(); }
            });
            observer.observe(document.getElementById('stand-view'), {childList: true, subtree: true, characterData: true, attributes: true});
        }, {capture: true});
    }""")
    screen, floor = [], []
    index = 0
    while len(screen) < taps:
        card = wait_for(lambda: page.evaluate("() => window.kioskState.next && window.kioskState.next.next"), timeout=30,
                        what="a card")
        action, task_id = card["primaryAction"], card["task"]["id"]
        method = {"Accept": "task.accept", "Arrived": "task.arrive", "Picked up": "task.pickup",
                  "Arrived at destination": "task.arrive"}.get(action)
        if method is None:
            # The proof step or the return to the vendor: done through the socket, untimed; a fresh order keeps the
            # card busy.
            if action == "Return to vendor":
                client.call("task.returnToVendor", {"taskId": task_id})
            else:
                finish(client, task_id)
            post_order(stack, client, f"task-tap-{tag}{index}")
            index += 1
            wait_for(lambda: (lambda n: n and (n["task"]["id"], n["primaryAction"]) != (task_id, action))(
                page.evaluate("() => window.kioskState.next && window.kioskState.next.next")), timeout=20, what="the card to move on")
            continue
        page.wait_for_function("() => !document.getElementById('primary-button').disabled")
        page.locator("#primary-button").tap()
        screen.append(wait_for(lambda: page.evaluate("() => window.benchTap"), timeout=20, interval=0.005, what=f"{action} on screen"))
        # The floor: the same method on an order of its own, brought to the same step first.
        floor_id = f"task-floor-{tag}{len(floor)}"
        post_order(stack, client, floor_id)
        steps = ["task.accept", "task.arrive", "task.pickup", "task.arrive"]
        timed = 3 if action == "Arrived at destination" else steps.index(method)
        for position, step in enumerate(steps):
            started = time.perf_counter()
            client.call(step, {"taskId": floor_id})
            if position == timed:
                floor.append((time.perf_counter() - started) * 1000)
        finish(client, floor_id)
        time.sleep(0.3)
    return screen, floor


def order_latency(stack, page, orders):
    """A dispatcher's new order until the page's route lists it, and until a raw subscriber hears of it."""
    page.evaluate("""() => {
        window.benchOrders = {};
        new MutationObserver(() => {
            const route = window.kioskState.route;
            for (const task of (route && route.tasks) || []) {
                if (task.id.startsWith('task-order-') && !(task.id in window.benchOrders)) window.benchOrders[task.id] = Date.now();
            }
        }).observe(document.getElementById('stops'), {childList: true, subtree: true});
    }""")
    raw = RPC(stack.socket)
    raw.call("events.subscribe", {"topics": ["task.changed"]})
    template = json.load(open(SCENARIO))["tasks"][0]
    screen, floor = [], []
    for index in range(orders):
        task_id = f"task-order-{index}"
        sent = time.time()
        stack.sim("/sim/tasks", dict(template, id=task_id))
        while True:
            message = raw.read()
            if message.get("method") == "task.changed" and message["params"]["id"] == task_id:
                floor.append((time.time() - sent) * 1000)
                break
        shown = wait_for(lambda: page.evaluate(f"() => window.benchOrders['{task_id}']"), timeout=20, interval=0.005,
                         what=f"{task_id} on screen")
        screen.append(shown - sent * 1000)
        time.sleep(0.3)
    raw.close()
    return screen, floor


def journey(stack, client, index):
    """One order, assigned and delivered: the page follows every change."""
    task_id = f"task-soak-{index}"
    task = post_order(stack, client, task_id)
    for method in ("task.accept", "task.arrive", "task.pickup", "task.arrive"):
        client.call(method, {"taskId": task_id})
        time.sleep(1)
    client.call("pod.otp", {"taskId": task_id, "otp": task["otp"]})
    client.call("task.deliver", {"taskId": task_id})
    stack.sim("/sim/messages", {"driverId": "drv-1", "text": f"soak message {index}"})
    time.sleep(1)
    for push in pending_pushes(stack.socket):
        client.call("events.ack", {"id": push})


def pending_pushes(path):
    # events.pending has counts only; the ids come from a short subscription.
    probe = RPC(path)
    probe.call("events.subscribe", {"topics": ["push"]})
    probe.sock.settimeout(0.5)
    ids = []
    try:
        while True:
            message = probe.read()
            if message.get("method") == "push":
                ids.append(message["params"]["id"])
    except (socket.timeout, OSError, ValueError):
        pass
    probe.close()
    return ids


def heap(page, cdp):
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return metrics.get("JSHeapUsedSize", 0) / 1024, metrics.get("Nodes", 0)


def main():
    stack = Stack("bench", parked_route(seconds=max(1800, int(args.soak_minutes * 60) + 900))).start()
    try:
        stack.wait_standing()
        client = stack.rpc()
        client.call("shift.start")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            context = browser.new_context(viewport={"width": 800, "height": 480}, has_touch=True)
            page = context.new_page()
            cdp = context.new_cdp_session(page)
            cdp.send("Performance.enable")
            # Subscribed before the page: driverd's hub then writes each push to the baseline first.
            raw = RawSubscriber(stack.socket)
            page.goto(stack.url)
            page.wait_for_selector("#stand-view:not([hidden])", timeout=30000)

            screen, floor = tap_latency(stack, page, client, args.taps)
            print(f"tap -> screen ({args.taps} taps on the card's button): p50 {percentile(screen, 50):.1f} ms, "
                  f"p99 {percentile(screen, 99):.1f} ms")
            print(f"  baseline, the same action by a raw client until its reply: p50 {percentile(floor, 50):.1f} ms, "
                  f"p99 {percentile(floor, 99):.1f} ms; ratio p50 {percentile(screen, 50) / max(percentile(floor, 50), 0.001):.2f}x")

            screen, floor = order_latency(stack, page, args.orders)
            print(f"order -> screen ({args.orders} new orders from the dispatcher): p50 {percentile(screen, 50):.1f} ms, "
                  f"p99 {percentile(screen, 99):.1f} ms")
            print(f"  baseline, the order's task.changed on a raw client: p50 {percentile(floor, 50):.1f} ms, "
                  f"p99 {percentile(floor, 99):.1f} ms; the screen's own share p50 "
                  f"{statistics.median(s - f for s, f in zip(screen, floor)):.1f} ms")

            screen, floor = latency(stack, page, raw, args.pushes)
            print(f"push -> screen ({args.pushes} pushes): p50 {percentile(screen, 50):.1f} ms, p99 {percentile(screen, 99):.1f} ms")
            print(f"  baseline, the same push on a raw events.subscribe client: p50 {percentile(floor, 50):.1f} ms, "
                  f"p99 {percentile(floor, 99):.1f} ms")
            print(f"  ratio: p50 {percentile(screen, 50) / max(percentile(floor, 50), 0.001):.2f}x, "
                  f"p99 {percentile(screen, 99) / max(percentile(floor, 99), 0.001):.2f}x; the kiosk's own share "
                  f"(screen - raw, per push) p50 {statistics.median(s - f for s, f in zip(screen, floor)):.1f} ms")

            for code in [c for c in args.languages.split(",") if c and c != "en"]:
                page.evaluate(f"() => I18n.choose('{code}')")
                page.reload()
                page.wait_for_selector("#stand-view:not([hidden])", timeout=30000)
                wait_for(lambda: page.evaluate("document.documentElement.lang") == code, what=f"the page in {code}")
                taps, tap_floor = tap_latency(stack, page, client, args.language_taps, tag=code + "-")
                pushes, push_floor = latency(stack, page, raw, args.language_pushes)
                print(f"language {code}: tap -> screen p50 {percentile(taps, 50):.1f} ms (raw client {percentile(tap_floor, 50):.1f} ms), "
                      f"push -> screen p50 {percentile(pushes, 50):.1f} ms (raw subscriber {percentile(push_floor, 50):.1f} ms)")

            if args.soak_minutes > 0:
                cdp.send("HeapProfiler.enable")
                cdp.send("HeapProfiler.collectGarbage")
                page.wait_for_timeout(2000)
                start_heap, start_nodes = heap(page, cdp)
                start_rss = renderer_rss_kib()
                deadline = time.monotonic() + args.soak_minutes * 60
                index = 0
                while time.monotonic() < deadline:
                    journey(stack, client, index)
                    index += 1
                    time.sleep(10)
                cdp.send("HeapProfiler.collectGarbage")
                page.wait_for_timeout(2000)
                end_heap, end_nodes = heap(page, cdp)
                end_rss = renderer_rss_kib()
                print(f"page after {args.soak_minutes:.0f} min of the journey loop ({index} orders delivered, a message each):")
                print(f"  JS heap {end_heap:.0f} KiB (at start {start_heap:.0f} KiB: {end_heap / max(start_heap, 1):.2f}x), "
                      f"DOM nodes {end_nodes:.0f} (at start {start_nodes:.0f})")
                print(f"  chromium's renderers, PSS {end_rss / 1024:.1f} MiB (at start {start_rss / 1024:.1f} MiB)")
            browser.close()
        kiosk = stack.processes["driverd-kiosk"].pid
        daemon = stack.processes["driverd"].pid
        print(f"driverd-kiosk RSS {rss_kib(kiosk) / 1024:.1f} MiB, peak {rss_kib(kiosk, 'VmHWM') / 1024:.1f} MiB "
              f"(driverd beside it: {rss_kib(daemon) / 1024:.1f} MiB, peak {rss_kib(daemon, 'VmHWM') / 1024:.1f} MiB)")
        client.close()
    finally:
        stack.stop()


main()
