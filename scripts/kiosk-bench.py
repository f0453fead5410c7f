#!/usr/bin/env python3
"""The kiosk's figures, each beside its baseline from the same run:

  push -> screen   a backend push (POST /sim/messages) until the page shows it, against the same push read by a
                   raw `events.subscribe` client on driverd's socket (the floor: what driverd itself takes);
  memory           the page's JS heap and the renderer's RSS after a loop of the whole journey (--soak-minutes),
                   against the same at its start; the kiosk's peak RSS against driverd's.

    kiosk-bench.py BIN_DIR [--pushes 50] [--soak-minutes 0]
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
parser.add_argument("--soak-minutes", type=float, default=0)
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


def journey(stack, client, index):
    """One order, assigned and delivered: the page follows every change."""
    task = json.load(open(os.path.join(os.path.dirname(__file__), "..", "Tests", "kiosk", "scenario.json")))["tasks"][0]
    task_id = f"task-soak-{index}"
    stack.sim("/sim/tasks", dict(task, id=task_id))
    wait_for(lambda: any(t["id"] == task_id for t in client.call("route.get")["tasks"]), timeout=30, what=task_id)
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
            context = browser.new_context(viewport={"width": 800, "height": 480})
            page = context.new_page()
            cdp = context.new_cdp_session(page)
            cdp.send("Performance.enable")
            # Subscribed before the page: driverd's hub then writes each push to the baseline first.
            raw = RawSubscriber(stack.socket)
            page.goto(stack.url)
            page.wait_for_selector("#stand-view:not([hidden])", timeout=30000)

            screen, floor = latency(stack, page, raw, args.pushes)
            print(f"push -> screen ({args.pushes} pushes): p50 {percentile(screen, 50):.1f} ms, p99 {percentile(screen, 99):.1f} ms")
            print(f"  baseline, the same push on a raw events.subscribe client: p50 {percentile(floor, 50):.1f} ms, "
                  f"p99 {percentile(floor, 99):.1f} ms")
            print(f"  ratio: p50 {percentile(screen, 50) / max(percentile(floor, 50), 0.001):.2f}x, "
                  f"p99 {percentile(screen, 99) / max(percentile(floor, 99), 0.001):.2f}x; the kiosk's own share "
                  f"(screen - raw, per push) p50 {statistics.median(s - f for s, f in zip(screen, floor)):.1f} ms")

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
