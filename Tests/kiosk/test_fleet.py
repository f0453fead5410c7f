"""The office sees every unit: 20 real driverd processes against one dispatch-sim, each on its shift beside one gpsd,
and faults made for real in five of them: a full store (a tmpfs filled to its last byte), a wrong CA (the unit restarted
with a CA that did not sign the backend's certificate), gpsd gone, the backend refusing one unit's changes (422, kept
as dead letters), a unit killed -9 in a loop. The fleet view must name exactly those five, each with its reason, and
none of the healthy fifteen; the page an operator reads passes axe in chromium. Root: the tmpfs."""
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.request

import pytest
from axe_playwright_python.sync_playwright import Axe

from stack import BIN, ROOT, TOOLS, free_port, parked_route, wait_for

UNITS = 20
FULL, WRONG_CA, NO_GPSD, REFUSED, KILLED = "drv-5", "drv-6", "drv-7", "drv-8", "drv-9"
EXPECTED = {FULL: "store-full", WRONG_CA: "silent", NO_GPSD: "gps-lost", REFUSED: "dead-letters", KILLED: "restarting"}


def http(base, method, path, body=None):
    request = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


def rpc(socket_path, method, params=None):
    import socket
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(socket_path)
    request = {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params is not None else {})}
    sock.sendall(json.dumps(request).encode() + b"\n")
    reply = json.loads(sock.makefile("rb").readline())
    sock.close()
    return reply


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


class Fleet:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="fleet-")
        self.processes = {}
        self.mounts = []

    def spawn(self, name, argv):
        log = open(os.path.join(self.dir, f"{name}.log"), "ab")
        self.processes[name] = subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True)
        return self.processes[name]

    def start_unit(self, n, backend, gpsd, ca_file=None):
        name = f"drv-{n}"
        state = os.path.join(self.dir, name)
        config = os.path.join(self.dir, f"{name}.toml")
        with open(config, "w") as f:
            f.write(f'[backend]\nurl = "{backend}"\nusername = "rider{n}"\npassword = "pw-{n}"\n'
                    + (f'ca_file = "{ca_file}"\n' if ca_file else "")
                    + '[shift]\nauto_start = true\n[health]\nreport_minutes = 1\n')
        socket_path = os.path.join(self.dir, f"{name}.sock")
        self.spawn(name, [f"{BIN}/driverd", "--socket", socket_path, "--state-dir", state, "--config", config,
                          "--gpsd", gpsd, "--log-target", "stderr"])
        return socket_path

    def stop(self):
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for mount in self.mounts:
            subprocess.run(["umount", "-l", mount], check=False)
        subprocess.run(["pkill", "-KILL", "-f", f"gpsd .*-S {self.gpsd_port}"], check=False)
        if not os.environ.get("DRIVERD_KEEP_TEST_DIRS"):
            subprocess.run(["rm", "-rf", self.dir], check=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="a tmpfs for the full store needs root")
def test_twenty_units_five_faults_named_and_none_else(browser, screens_dir):
    fleet = Fleet()
    fleet.gpsd_port = free_port()
    try:
        # The backend, with 20 drivers and one task for the unit whose changes it will refuse.
        scenario = {"drivers": [{"id": f"drv-{n}", "username": f"rider{n}", "password": f"pw-{n}"} for n in range(1, UNITS + 1)],
                    "tasks": [{"id": "task-8001", "driverId": REFUSED, "podType": "OTP", "otp": "1234",
                               "pickup": {"address": "Haidplatz 8", "lat": 49.021, "lng": 12.097, "name": "Shop", "phone": "+49 1"},
                               "dropoff": {"address": "Dachauplatz 4", "lat": 49.016, "lng": 12.1005, "name": "Customer", "phone": "+49 2"}}]}
        with open(os.path.join(fleet.dir, "scenario.json"), "w") as f:
            json.dump(scenario, f)
        out = os.path.join(fleet.dir, "sim.out")
        with open(out, "wb") as sim_out:
            log = open(os.path.join(fleet.dir, "dispatch-sim.log"), "ab")
            fleet.processes["dispatch-sim"] = subprocess.Popen(
                [f"{TOOLS}/dispatch-sim", "--port", "0", "--scenario", os.path.join(fleet.dir, "scenario.json")],
                stdout=sim_out, stderr=log, start_new_session=True)
        backend = wait_for(lambda: open(out).read().strip(), what="dispatch-sim").split("listening on ")[-1].strip()
        port = int(backend.rsplit(":", 1)[1])

        # A TLS front for the wrong-CA unit, its certificate from CA "a"; CA "b" signed nothing of the backend's.
        for ca in ("a", "b"):
            openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                    "-subj", f"/CN=fleet CA {ca}", "-keyout", f"ca-{ca}.key", "-out", f"ca-{ca}.pem", cwd=fleet.dir)
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=127.0.0.1",
                "-keyout", "server.key", "-out", "server.csr", cwd=fleet.dir)
        with open(os.path.join(fleet.dir, "san.ext"), "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\n")
        openssl("x509", "-req", "-in", "server.csr", "-CA", "ca-a.pem", "-CAkey", "ca-a.key", "-CAcreateserial", "-days", "2",
                "-extfile", "san.ext", "-out", "server.pem", cwd=fleet.dir)
        proxy_out = os.path.join(fleet.dir, "proxy.out")
        with open(proxy_out, "wb") as f:
            fleet.processes["tls-proxy"] = subprocess.Popen(
                ["python3", os.path.join(ROOT, "Tests/IntegrationTests/Support/tls_proxy.py"), "server.pem", "server.key", str(port)],
                stdout=f, stderr=subprocess.DEVNULL, cwd=fleet.dir, start_new_session=True)
        tls_port = int(wait_for(lambda: open(proxy_out).read().strip(), what="the TLS front"))

        # One gpsd for every unit, fed a parked van from now on.
        route_file, nmea = os.path.join(fleet.dir, "route.json"), os.path.join(fleet.dir, "parked.nmea")
        with open(route_file, "w") as f:
            json.dump(dict(parked_route(), startTime=int(time.time())), f)
        subprocess.run([f"{TOOLS}/nmea-synth", "--route", route_file, "-o", nmea], check=True)
        fleet.spawn("gpsfake", ["gpsfake", "-q", "-n", "-P", str(fleet.gpsd_port), "-c", "0.2", nmea])
        gpsd = f"127.0.0.1:{fleet.gpsd_port}"

        # The full store's unit lives on a tmpfs.
        full_state = os.path.join(fleet.dir, FULL)
        os.makedirs(full_state)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", full_state], check=True)
        fleet.mounts.append(full_state)

        sockets = {}
        for n in range(1, UNITS + 1):
            name = f"drv-{n}"
            if name == WRONG_CA:
                sockets[name] = fleet.start_unit(n, f"https://127.0.0.1:{tls_port}", gpsd, ca_file=os.path.join(fleet.dir, "ca-a.pem"))
            else:
                sockets[name] = fleet.start_unit(n, backend, "127.0.0.1:1" if name == NO_GPSD else gpsd)

        def view():
            return http(backend, "GET", "/api/v1/fleet/health")

        wait_for(lambda: len(view()["units"]) == UNITS, timeout=120, interval=1, what="every unit's first report")

        # The faults, for real.
        # 1. Another program fills the store's card.
        with open(os.path.join(full_state, "filler"), "ab", buffering=0) as f:
            for size in (1 << 20, 1 << 12, 1):
                try:
                    while True:
                        f.write(b"Z" * size)
                except OSError:
                    pass
        # 2. The wrong-CA unit restarts with a CA that signed nothing of the backend's.
        fleet.processes[WRONG_CA].send_signal(signal.SIGTERM)
        fleet.processes[WRONG_CA].wait(timeout=20)
        fleet.start_unit(6, f"https://127.0.0.1:{tls_port}", gpsd, ca_file=os.path.join(fleet.dir, "ca-b.pem"))
        # 3. (gpsd gone: the unit's gpsd never answered.)
        # 4. The backend refuses every change to the refused unit's task; the driver accepts it.
        http(backend, "PUT", "/sim/faults", {"errorRate": 1, "errorStatus": 422, "pathPrefix": "/api/v1/rider/tasks/task-8001/"})
        wait_for(lambda: "result" in rpc(sockets[REFUSED], "task.accept", {"taskId": "task-8001"}), timeout=30, what="the accept")
        # 5. A unit killed -9 and started again (as systemd would), three times.
        for _ in range(3):
            wait_for(lambda: os.path.exists(sockets[KILLED]), what="the killed unit's socket")
            time.sleep(6)
            os.killpg(fleet.processes[KILLED].pid, signal.SIGKILL)
            fleet.processes[KILLED].wait()
            fleet.start_unit(9, backend, gpsd)

        # The view names exactly those five, each with its reason (silence takes the unit's promise, 2 minutes, and a
        # minute's grace; GPS lost, 5 minutes on shift without a position), and none of the fifteen.
        def attention():
            return {unit["unit"]: [f["rule"] for f in unit["findings"] if f["severity"] == "attention"]
                    for unit in view()["units"] if any(f["severity"] == "attention" for f in unit["findings"])}
        started = time.monotonic()
        wait_for(lambda: set(attention()) == set(EXPECTED) and all(EXPECTED[u] in rules for u, rules in attention().items()),
                 timeout=420, interval=2, what=f"the view naming {sorted(EXPECTED)}")
        named = attention()
        print(f"fleet: the five named {time.monotonic() - started:.0f} s after the faults: {named}")
        assert set(named) == set(EXPECTED), named
        units = view()["units"]
        assert set(u["unit"] for u in units[:5]) == set(EXPECTED), "the five first"
        assert all(f["severity"] != "attention" for u in units[5:] for f in u["findings"]), units[5:]

        # The page an operator reads: the five first, in words; axe finds nothing serious.
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.goto(backend + "/fleet")
        assert page.title() == f"Fleet health: 5 of {UNITS} units need attention"
        rows = page.locator("tbody tr")
        assert rows.count() == UNITS
        first_five = {rows.nth(i).locator("th").inner_text() for i in range(5)}
        assert first_five == set(EXPECTED), first_five
        text = page.locator("body").inner_text()
        for words in ("storage full", "silent for", "no GPS position", "refused by the backend", "restarted 3 times"):
            assert words in text, words
        violations = [v for v in Axe().run(page).response["violations"] if v["impact"] in ("serious", "critical")]
        assert not violations, "; ".join(f"{v['id']}: {v['help']}" for v in violations)
        page.screenshot(path=os.path.join(screens_dir, "fleet-five-faults.png"), full_page=True)
        context.close()
    finally:
        fleet.stop()
