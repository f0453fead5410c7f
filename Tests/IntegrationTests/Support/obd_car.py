#!/usr/bin/env python3
"""A car behind an ELM327 adapter, for driverd's tests and demo: ELM327-emulator (PyPI `ELM327-emulator`,
`python -m elm`) on a loopback TCP port, with a scenario whose values follow a JSON state file the test rewrites
as it drives.

State file keys (all optional): speed_kmh, rpm, voltage, fuel_pct, odometer_km, run_s, stored ["P0301"],
pending ["P0420"], mode: "ok" (default), "off" (no engine unit answers: ignition off), "nodata" (the vehicle
claims PIDs and answers NO DATA to each), "garbage" (noise instead of answers). After ATLP the adapter sleeps as the
chip does: the next command is lost (listed in elm-lost.log) and answered with the reset's banner.

--no-odometer: a car without PID A6. --silent: a socket that accepts and never answers (a dead adapter).
Without --port the adapter is a pseudo-terminal (a USB or Bluetooth serial adapter): its path is the first line of
elm-batch-pty.out beside the state file.
"""
import argparse, copy, json, os, socket, sys, time

parser = argparse.ArgumentParser()
parser.add_argument("--state", required=True)
parser.add_argument("--port", type=int)
parser.add_argument("--no-odometer", action="store_true")
parser.add_argument("--silent", action="store_true")
args = parser.parse_args()
args.state = os.path.abspath(args.state)
# ELM327-emulator writes its elm.log in the working directory: beside the state file, not wherever the caller runs.
os.chdir(os.path.dirname(args.state))

if args.silent:
    server = socket.create_server(("127.0.0.1", args.port))
    print("silent adapter listening", flush=True)
    clients = []
    server.settimeout(1)
    deadline = time.time() + 3600
    while time.time() < deadline:
        try:
            client, _ = server.accept()
            clients.append(client)  # read nothing, answer nothing
        except socket.timeout:
            pass
    sys.exit(0)

from elm import obd_message
from elm.obd_message import ST, HD, SZ, DT, ECU_R_ADDR_E, ELM_FOOTER, dtc_frames


def state():
    try:
        with open(args.state) as file:
            return json.load(file)
    except (OSError, ValueError):
        return {}


def obd(answer):
    """An OBD answer unless the state's mode says the vehicle cannot give one."""
    def respond(self, cmd, pid, uc_val):
        mode = state().get("mode", "ok")
        if mode == "off":
            return ST("NO DATA")
        if mode == "nodata" and not pid.startswith("ELM_PIDS"):
            return ST("NO DATA")
        if mode == "garbage":
            return ST("#~!%x7F q")
        return answer(state())
    return respond


def data(text):
    return HD(ECU_R_ADDR_E) + SZ("%02X" % len(text.split())) + DT(text)


def status_byte(s):
    stored = s.get("stored", [])
    return "%02X" % ((0x80 if stored else 0) | min(len(stored), 0x7F))


def codes(s, key, sid):
    return dtc_frames(_emulator_stub, [c[1:] if c[0] == "P" else c for c in s.get(key, [])], sid)


class _Stub:
    counters = {}


_emulator_stub = _Stub()

scenario = copy.deepcopy(obd_message.ObdMessage["car"])
# ATRV: the 'AT' group answers it before any scenario does.
obd_message.ObdMessage["AT"]["AT_R_VOLT"] = {
    "Request": "^ATRV$", "Descr": "AT read volt",
    "ResponseFooter": lambda self, cmd, pid, uc_val: ST("%.1fV" % state().get("voltage", 12.6)),
}
scenario.pop("ELM_VOLTAGE", None)
overrides = {
    "SPEED": ("^010D", lambda s: data("41 0D %02X" % int(round(s.get("speed_kmh", 0))))),
    "RPM": ("^010C", lambda s: data("41 0C %02X %02X" % divmod(int(round(s.get("rpm", 0) * 4)), 256))),
    "FUEL_LEVEL": ("^012F", lambda s: data("41 2F %02X" % int(round(s.get("fuel_pct", 50) * 255 / 100)))),
    "RUN_TIME": ("^011F", lambda s: data("41 1F %02X %02X" % divmod(int(s.get("run_s", 0)), 256))),
    "STATUS": ("^0101", lambda s: data("41 01 %s 07 A1 00" % status_byte(s))),
    # The engine unit's supply voltage (PID 42): the battery's, as ATRV reads it, while the engine unit answers.
    "CONTROL_MODULE_VOLTAGE": ("^0142", lambda s: data("41 42 %02X %02X" % divmod(int(round(s.get("voltage", 12.6) * 1000)), 256))),
    "ODOMETER": ("^01A6", lambda s: data("41 A6 %02X %02X %02X %02X" % tuple(int(round(s.get("odometer_km", 0) * 10)).to_bytes(4, "big")))),
}
for name, (request, answer) in overrides.items():
    scenario[name] = {"Request": request + ELM_FOOTER, "Descr": name, "ResponseFooter": obd(answer)}
for name, entry in list(scenario.items()):
    if entry.get("Request", "").startswith("^03") :
        scenario[name] = {"Request": entry["Request"], "Descr": name, "ResponseFooter": obd(lambda s: codes(s, "stored", "43"))}
    elif entry.get("Request", "").startswith("^07"):
        scenario[name] = {"Request": entry["Request"], "Descr": name, "ResponseFooter": obd(lambda s: codes(s, "pending", "47"))}
if args.no_odometer:
    del scenario["ODOMETER"]
obd_message.update_scenario_with_dynamic_pids(scenario, service="01")
# The supported-PID answers go through the same modes (a car with the ignition off answers nothing).
for name, entry in list(scenario.items()):
    if name.startswith("ELM_PIDS") or name.startswith("PIDS_"):
        fixed = entry.get("Response")
        if isinstance(fixed, str):
            def respond(self, cmd, pid, uc_val, fixed=fixed):
                mode = state().get("mode", "ok")
                if mode == "off":
                    return ST("UNABLE TO CONNECT")
                if mode == "garbage":
                    return ST("#~!%x7F q")
                return fixed
            entry.pop("Response")
            entry.pop("ResponseHeader", None)
            entry["ResponseFooter"] = respond
obd_message.ObdMessage["driverd"] = scenario

# A noisy line garbles every answer, a request for several PIDs at once (SAE J1979, CAN) as well as one for one.
from elm import elm as elm_core
_several = elm_core.Elm.multi_pid_answer
def several_pids(self, cmd, header):
    if state().get("mode", "ok") == "garbage" and cmd.startswith("01") and len(cmd) > 4:
        return ST("#~!%x7F q")
    return _several(self, cmd, header)
elm_core.Elm.multi_pid_answer = several_pids

# A real ELM327 after ATLP sleeps: the first character it receives wakes it, the command that character began is
# lost, and the chip restarts as after ATZ (its banner, its settings back to the defaults). ELM327-emulator answers
# ATLP with OK and keeps serving; this is the chip. Each lost command is written to elm-lost.log beside the state.
lost_log = os.path.join(os.path.dirname(args.state), "elm-lost.log")
_handle_request = elm_core.Elm.handle_request
def handle_request(self, cmd, do_write=False):
    if getattr(self, "asleep", False):
        self.asleep = False
        with open(lost_log, "a") as file:
            file.write((cmd or "").strip() + "\n")
        return _handle_request(self, "ATZ", do_write)
    if (cmd or "").replace(" ", "").upper() == "ATLP":
        self.asleep = True
    return _handle_request(self, cmd, do_write)
elm_core.Elm.handle_request = handle_request

from elm import interpreter
batch = os.path.join(os.path.dirname(os.path.abspath(args.state)), "elm-batch-%s.out" % (args.port or "pty"))
sys.argv = ["elm", "-s", "driverd", "-b", batch] + (["-n", str(args.port)] if args.port else [])
interpreter.main()
