"""The real stack for the kiosk's tests: dispatch-sim, gpsd fed by gpsfake, driverd and driverd-kiosk, each a
real process on loopback and Unix sockets, started from the binaries `swift build` made. Every process is
killed at the end and its directory removed (its logs copied to DRIVERD_TEST_LOG_DIR first; DRIVERD_KEEP_TEST_DIRS=1
keeps the directories); nothing outlives the test."""
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("DRIVERD_BIN_DIR") or os.path.join(ROOT, ".build", "debug")
# dispatch-sim and nmea-synth (the test's tools) may come from another build than driverd and the kiosk.
TOOLS = os.environ.get("DRIVERD_TOOLS_BIN_DIR") or BIN
LOG_DIR = os.environ.get("DRIVERD_TEST_LOG_DIR")
# Stacks started and not yet stopped: a failing test's report shows their processes and logs (conftest.py).
LIVE = []

# Where the van stands in the journey: on Dachauplatz, within a few metres of every drop-off.
PARKED_AT = {"lat": 49.01602, "lon": 12.10050}


def wait_for(predicate, timeout=30.0, interval=0.1, what="a condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _port_block():
    """This worker's ports: its share of the 6,000 just under the kernel's ephemeral range.

    Not port 0's pick: that comes from the ephemeral range, from which the kernel also picks the source port of
    every outgoing connection; between free_port() and gpsd's bind such a connection could hold it, and driverd,
    connecting to it meanwhile, could connect to itself. The integration tests take the 6,000 below these
    (GPSFake.freePort)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            ephemeral_low = int(f.read().split()[0])
    except OSError:
        ephemeral_low = 32768  # Linux's default
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").lstrip("gw") or 0)
    workers = max(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")), worker + 1)
    size = 6000 // workers
    low = ephemeral_low - 6000 + worker * size
    return range(low, low + size)


_ports = _port_block()
_next_port = [random.choice(_ports)]


def free_port():
    for _ in range(len(_ports)):
        port = _next_port[0]
        _next_port[0] = port + 1 if port + 1 < _ports.stop else _ports.start
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use, or lingering in TIME_WAIT
            return port
    raise RuntimeError(f"no free loopback port in {_ports}")


class RPC:
    """A raw JSON-RPC client of driverd's socket, line by line (the way any front end talks to it)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.file = self.sock.makefile("rwb")
        self.next_id = 1

    def call(self, method, params=None):
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            request["params"] = params
        self.next_id += 1
        self.file.write(json.dumps(request).encode() + b"\n")
        self.file.flush()
        while True:
            message = json.loads(self.file.readline())
            if message.get("id") == request["id"]:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message["result"]

    def read(self):
        return json.loads(self.file.readline())

    def close(self):
        self.sock.close()


class Stack:
    def __init__(self, name, route, kiosk_args=(), car=None):
        self.name = name
        # A car behind an OBD-II adapter (Tests/IntegrationTests/Support/obd_car.py): its state, or None for none.
        self.car = car
        self.dir = tempfile.mkdtemp(prefix=f"kiosk-{name}-")
        self.socket = os.path.join(self.dir, "driverd.sock")
        self.runtime = os.path.join(self.dir, "kiosk")
        self.wav_dir = os.path.join(self.dir, "voice")
        os.makedirs(self.wav_dir)
        self.processes = {}
        self.route = route
        self.kiosk_args = list(kiosk_args)

    # -- processes --------------------------------------------------------------------------------------
    def _spawn(self, name, argv, **kwargs):
        log = open(os.path.join(self.dir, f"{name}.log"), "ab")
        process = subprocess.Popen(argv, stdout=kwargs.pop("stdout", log), stderr=log, start_new_session=True, **kwargs)
        self.processes[name] = process
        return process

    def start(self):
        sim_out = os.path.join(self.dir, "sim.out")
        with open(sim_out, "wb") as out:
            self._spawn("dispatch-sim", [f"{TOOLS}/dispatch-sim", "--port", "0", "--scenario", os.path.join(ROOT, "Tests/kiosk/scenario.json")], stdout=out)
        line = wait_for(lambda: open(sim_out).read().strip(), what="dispatch-sim to listen")
        self.backend = line.split("listening on ")[-1].strip()

        route_file = os.path.join(self.dir, "route.json")
        with open(route_file, "w") as f:
            # Dated from now: the unit's clock is unsynchronised here, so driverd stamps from GPS time.
            json.dump(dict(self.route, startTime=int(time.time())), f)
        nmea = os.path.join(self.dir, "drive.nmea")
        subprocess.run([f"{TOOLS}/nmea-synth", "--route", route_file, "-o", nmea], check=True)
        self.gpsd_port = free_port()
        env = dict(os.environ, TMPDIR=self.dir)
        # -c 0.2: about real time for the synthesised log's sentences per epoch.
        self._spawn("gpsfake", ["gpsfake", "-q", "-n", "-P", str(self.gpsd_port), "-c", "0.2", nmea], env=env)
        wait_for(lambda: _port_open(self.gpsd_port), what="gpsfake's gpsd")

        vehicle = ""
        if self.car is not None:
            self.car_state = os.path.join(self.dir, "car.json")
            self.set_car(self.car)
            self.car_port = free_port()
            self._spawn("obd-car", [os.path.join(ROOT, ".build/tools/venv/bin/python"), os.path.join(ROOT, "Tests/IntegrationTests/Support/obd_car.py"),
                                    "--state", self.car_state, "--port", str(self.car_port)], cwd=self.dir)
            wait_for(lambda: _port_open(self.car_port), what="the OBD-II adapter")
            vehicle = f'[vehicle]\nadapter = "127.0.0.1:{self.car_port}"\nparked_poll_seconds = 5\nfault_check_seconds = 5\n'
        with open(os.path.join(self.dir, "driverd.toml"), "w") as f:
            f.write(f'[backend]\nurl = "{self.backend}"\nusername = "rider1"\npassword = "demo-password"\n' + vehicle)
        self.start_driverd()
        self.start_kiosk()
        LIVE.append(self)
        return self

    def start_driverd(self):
        self._spawn("driverd", [f"{BIN}/driverd", "--socket", self.socket, "--state-dir", os.path.join(self.dir, "state"),
                                "--config", os.path.join(self.dir, "driverd.toml"), "--gpsd", f"127.0.0.1:{self.gpsd_port}",
                                "--log-target", "stderr"])
        wait_for(lambda: _socket_answers(self.socket), what="driverd's socket")

    def set_car(self, car):
        """What the car reports from now on (the emulator reads the file at every request)."""
        with open(self.car_state + ".new", "w") as f:
            json.dump(car, f)
        os.replace(self.car_state + ".new", self.car_state)

    def wait_standing(self, timeout=60):
        """Until driverd has a fix and says the vehicle stands (the safety gate open)."""
        client = self.rpc()
        try:
            wait_for(lambda: client.call("agent.status")["safety"].get("open"), timeout=timeout, interval=0.5, what="the vehicle to stand")
        finally:
            client.close()

    def start_kiosk(self):
        self._spawn("driverd-kiosk", [f"{BIN}/driverd-kiosk", "--config", os.path.join(self.dir, "none.toml"), "--listen", "127.0.0.1:0",
                                      "--socket", self.socket, "--www", os.path.join(ROOT, "kiosk/www"), "--runtime-dir", self.runtime,
                                      "--voice-wav-dir", self.wav_dir] + self.kiosk_args)
        url_file = os.path.join(self.runtime, "url")
        self.url = wait_for(lambda: os.path.exists(url_file) and open(url_file).read().strip(), what="the kiosk's URL")
        self.token = self.url.split("token=")[1]
        self.origin = self.url.split("/?")[0]

    def kill(self, name, sig=signal.SIGKILL):
        process = self.processes.pop(name)
        process.send_signal(sig)
        process.wait(timeout=20)

    def health(self):
        """Each process: running, or how it ended (a test's own kills are not listed: `kill` forgets the process)."""
        lines = []
        for name, process in self.processes.items():
            code = process.poll()
            lines.append(f"{name} (pid {process.pid}): " + ("running" if code is None else _ended(code)))
        return "\n".join(lines)

    def tail(self, name, lines=60):
        path = os.path.join(self.dir, f"{name}.log")
        if not os.path.exists(path):
            return f"(no {name}.log)"
        with open(path, "rb") as f:
            return b"".join(f.readlines()[-lines:]).decode(errors="replace")

    def stop(self):
        """Stops every process; fails if one had ended by itself (a crash is never left unexplained)."""
        if self in LIVE:
            LIVE.remove(self)
        ended = {name: process.returncode for name, process in self.processes.items() if process.poll() is not None}
        for name, process in list(self.processes.items()):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 5
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        subprocess.run(["pkill", "-KILL", "-f", f"gpsd .*-S {self.gpsd_port}"], check=False)
        if LOG_DIR:
            os.makedirs(LOG_DIR, exist_ok=True)
            for name in ("driverd", "driverd-kiosk"):
                path = os.path.join(self.dir, f"{name}.log")
                if os.path.exists(path):
                    with open(path, "rb") as src, open(os.path.join(LOG_DIR, f"kiosk-{self.name}-{name}.log"), "ab") as dst:
                        dst.write(src.read())
        report = "\n\n".join(f"{name} {_ended(code)} during the test; its log ends:\n{self.tail(name, 30)}" for name, code in ended.items())
        # The voice's WAV files alone are tens of MB a run: a developer's /tmp must not fill up run by run.
        if not os.environ.get("DRIVERD_KEEP_TEST_DIRS"):
            shutil.rmtree(self.dir, ignore_errors=True)
        if ended:
            raise AssertionError(f"stack {self.name}: {report}")

    # -- the backend's test API ----------------------------------------------------------------------------
    def sim(self, path, body=None, method=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.backend + path, data=data, method=method or ("POST" if body is not None else "GET"),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read()
            return json.loads(text) if text else None

    def rpc(self):
        return RPC(self.socket)


def _ended(code):
    return f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"


def _port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _socket_answers(path):
    try:
        client = RPC(path)
        client.call("agent.describe")
        client.close()
        return True
    except (OSError, ValueError, RuntimeError):
        return False


def parked_route(seconds=1800):
    return {"start": PARKED_AT, "legs": [{"stop": seconds}], "noise": 1.5, "seed": 7}


def driving_route():
    """Stands 40 s (the page loads), drives east at 12 m/s for about two minutes (the driving view is shot in every
    language meanwhile), then stands."""
    return {"start": {"lat": 49.01602, "lon": 12.08800},
            "legs": [{"stop": 40}, {"to": {"lat": 49.01602, "lon": 12.10800}, "speed": 12}, {"stop": 1800}],
            "noise": 1.0, "seed": 11}
