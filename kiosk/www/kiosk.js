// The driver's screen: one WebSocket to driverd-kiosk, which bridges it to driverd's JSON-RPC socket.
// Everything shown comes from driverd: state at (re)connect, then notifications (events.subscribe), never a
// polling loop. While the connection is down the screen says so instead of showing stale data.
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const token = params.get("token") || sessionStorage.getItem("kiosk-token") || "";
if (params.get("token")) {
  // Keep the token out of the address bar (and out of anything that might show or log it).
  sessionStorage.setItem("kiosk-token", token);
  history.replaceState(null, "", location.pathname);
}

// route.updated carries the route and the card whole after every change: the screen renders from it, asking nothing.
const TOPICS = ["route.updated", "push", "push.summary", "safety.changed", "gps.fix", "stop.leftUnfinished", "pod.verdict",
  "pod.progress", "outbox.refused", "task.conflict", "sos.changed", "auth.required", "vehicle.changed"];
const ACTION_METHOD = {
  "Accept": "task.accept", "Arrived": "task.arrive", "Picked up": "task.pickup", "Arrived at destination": "task.arrive",
  "Delivered": "task.deliver", "Return to vendor": "task.returnToVendor",
};
const KIND_WORD = { pickup: "Pickup", dropoff: "Drop-off" };

const state = {
  socket: null, connected: false, nextId: 1, pending: new Map(), kiosk: {},
  status: null, route: null, next: null, fix: null, safety: null, pushes: new Map(), held: null,
  otp: "", tab: "next", theme: localStorage.getItem("kiosk-theme") || "auto", lastStatusAt: 0, lastNextAt: 0,
  pendingOutside: null, busy: false, vehicle: null,
};
window.kioskState = state; // for the tests and for support, read only by convention

// ---- connection ------------------------------------------------------------------------------------------
let backoff = 500;
function connect() {
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/rpc?token=${encodeURIComponent(token)}`;
  const socket = new WebSocket(url);
  state.socket = socket;
  socket.onopen = async () => {
    backoff = 500;
    try {
      // driverd sends every unacknowledged push again to a new subscriber: start from none.
      state.pushes.clear();
      state.kiosk = await call("kiosk.describe");
      await call("events.subscribe", { topics: TOPICS });
      await refreshAll();
      state.connected = true;
      render();
    } catch (error) {
      socket.close();
    }
  };
  socket.onmessage = (message) => receive(message.data);
  socket.onclose = (event) => {
    state.connected = false;
    for (const { reject } of state.pending.values()) reject({ code: 1002, message: "the connection to driverd closed" });
    state.pending.clear();
    $("reconnecting-why").textContent = event.reason ? `${event.reason}. Trying again…` : "The unit does not answer. Trying again…";
    render();
    setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 5000);
  };
}

function call(method, params) {
  return new Promise((resolve, reject) => {
    const socket = state.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) { reject({ code: 1002, message: "not connected to driverd" }); return; }
    const id = state.nextId++;
    state.pending.set(id, { resolve, reject });
    socket.send(JSON.stringify(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }));
  });
}

function receive(text) {
  let message;
  try { message = JSON.parse(text); } catch { return; }
  if (message.id !== undefined && message.id !== null && state.pending.has(message.id)) {
    const { resolve, reject } = state.pending.get(message.id);
    state.pending.delete(message.id);
    if (message.error) reject(message.error); else resolve(message.result);
    return;
  }
  if (message.method) notified(message.method, message.params || {});
}

async function refreshAll() {
  const [status, route, next, pending, vehicle] = await Promise.all([
    call("agent.status"), call("route.get"), call("route.next"), call("events.pending"),
    // A daemon without the vehicle (before API 1.11) shows no vehicle chips rather than no screen.
    call("vehicle.status").catch(() => null)]);
  state.status = status;
  state.vehicle = vehicle;
  state.safety = status.safety || null;
  const last = status.gps && status.gps.lastFix;
  if (last && !state.fix) state.fix = { lat: last.latitude, lng: last.longitude, speed: last.speed, error: last.horizontalError };
  state.route = route;
  state.next = next;
  state.held = pending;
  state.lastStatusAt = Date.now();
}

// The card's distance and local ETA age with the van's position, the strip's link with time: read again on the
// fix's rhythm. Changes of tasks and stops come by themselves (route.updated).
async function refreshStatus() {
  try {
    const [next, status] = await Promise.all([call("route.next"), call("agent.status")]);
    state.next = next; state.status = status; state.safety = status.safety || state.safety;
    state.lastStatusAt = state.lastNextAt = Date.now();
    render();
  } catch { /* the connection's close handler shows it */ }
}

// ---- notifications --------------------------------------------------------------------------------------
function notified(topic, params) {
  switch (topic) {
    case "gps.fix":
      state.fix = { lat: params.latitude, lng: params.longitude, speed: params.speed, error: params.horizontalError };
      // The strip's link and queue, the card's ETA: refreshed on the fix's own rhythm, at most every 10 s.
      if (Date.now() - state.lastStatusAt > 10000) { state.lastStatusAt = Date.now(); refreshStatus(); }
      renderDrive(); renderTheme(); renderStrip();
      break;
    case "safety.changed":
      state.safety = params;
      if (params.open && state.held) state.held = { ...state.held, held: 0 };
      render();
      break;
    case "push":
    case "stop.leftUnfinished":
      state.pushes.set(params.id, params);
      render();
      break;
    case "push.summary":
      state.held = params;
      // What another front end acknowledged (driverctl, the voice, a second screen) leaves this one too.
      if (Array.isArray(params.ids)) {
        const left = new Set(params.ids);
        for (const id of [...state.pushes.keys()]) if (!left.has(id)) state.pushes.delete(id);
      }
      render();
      break;
    case "pod.verdict":
      say(params.accepted ? "Proof accepted." : `Proof refused: ${params.message || "capture it again"}`);
      break;
    case "pod.progress":
      $("pod-status").textContent = `Sending photo: ${Math.round((100 * params.sentBytes) / Math.max(1, params.totalBytes))} %`;
      break;
    case "outbox.refused":
      say(`The office refused a change to ${params.taskId}: the screen shows the office's state.`);
      break;
    case "task.conflict":
      say(`Dispatch changed ${params.taskId}: ${params.reason}`);
      break;
    case "sos.changed":
      say(params.state === "acknowledged" ? "SOS received by the office." : "SOS sent. Help is being called.");
      break;
    case "auth.required":
      say("The unit must log in again: call the office.");
      break;
    case "vehicle.changed":
      state.vehicle = params;
      renderStrip();
      break;
    case "route.updated":
      state.route = params.route;
      state.next = params.next;
      state.lastNextAt = Date.now();
      render();
      break;
  }
}

function say(text) { $("notice").textContent = text; }

// ---- rendering -----------------------------------------------------------------------------------------
function gateOpen() {
  const safety = state.safety;
  if (!safety) return true;
  if (safety.open !== undefined) return safety.open;
  return safety.state === "stationary";
}

function render() {
  $("reconnecting").hidden = state.connected;
  const driving = state.connected && !gateOpen();
  $("drive-view").hidden = !driving;
  $("stand-view").hidden = !state.connected || driving;
  $("strip").hidden = !state.connected;
  if (!state.connected) return;
  renderStrip();
  renderTheme();
  if (driving) renderDrive(); else { renderNext(); renderRoute(); renderMessages(); }
}

function fixText(fix) {
  const error = fix && fix.horizontalError;
  return error ? `fix ±${Math.round(error)} m` : "fix";
}

function renderStrip() {
  const status = state.status;
  if (!status) return;
  const shift = status.shiftStatus;
  $("chip-shift").textContent = shift && shift.onShift ? "On shift" : "Off shift";
  const gps = status.gps || {};
  const fresh = gps.lastFixAge !== undefined && gps.lastFixAge !== null && gps.lastFixAge < 30;
  $("chip-gps").textContent = `GPS: ${gps.link === "connected" ? (fresh ? fixText(gps.lastFix) : "no fix") : gps.link || "unknown"}`;
  const uplink = status.uplink || {};
  $("chip-link").textContent = `Link: ${uplink.enabled === false ? "no backend" : uplink.link || "unknown"}`;
  // Orders with changes the backend has not confirmed, from the route (route.updated keeps it current).
  const waiting = state.route ? state.route.tasks.filter((task) => task.sync === "pending").length : 0;
  $("chip-queue").textContent = waiting ? `${waiting} waiting` : "All sent";
  const clock = status.clock || {};
  $("chip-clock").textContent = `Clock: ${clock.source === "ntp" ? "network" : clock.source === "gps" ? "GPS" : "unsynced"}`;
  // The vehicle's check-engine light and fuel, when its adapter tells them (absent: no chip).
  const vehicle = state.vehicle || {};
  $("chip-engine").hidden = vehicle.checkEngine !== true;
  const fuel = vehicle.fuelPercent;
  $("chip-fuel").hidden = fuel === undefined || fuel === null;
  if (!$("chip-fuel").hidden) $("chip-fuel").textContent = `Fuel ${Math.round(fuel)} %`;
  $("theme-button").textContent = state.theme === "auto" ? "Auto" : state.theme === "night" ? "Night" : "Day";
  $("theme-button").setAttribute("aria-label", `Theme: ${$("theme-button").textContent}. Tap to change.`);
}

// Night by itself from sunset to sunrise at the van's position (on the daemon's clock: the unit's own may
// be wrong), or as the driver chose.
function renderTheme() {
  let night = state.theme === "night";
  if (state.theme === "auto") {
    const position = state.fix || (state.route && state.route.stops[0]);
    const clock = state.status && state.status.clock;
    const now = clock && clock.now ? new Date(clock.now * 1000 + (Date.now() - state.lastStatusAt)) : new Date();
    night = position ? Sun.isNight(now, position.lat, position.lng) : false;
  }
  document.body.classList.toggle("night", night);
  document.body.classList.toggle("day", !night);
}

function currentNext() { return state.next && state.next.next; }

function metersText(meters) {
  return meters >= 1000 ? `${(meters / 1000).toFixed(1)} km` : `${Math.round(meters / 10) * 10} m`;
}

function etaText(eta) {
  if (!eta) return "no ETA without a fix";
  const minutes = Math.max(1, Math.round(eta.seconds / 60));
  const distance = typeof eta.distanceMeters === "number" ? ` · ${metersText(eta.distanceMeters)}` : "";
  return `${minutes} min${distance} · ${eta.source === "server" ? "from dispatch" : "estimated here"}`;
}

function syncText(task) {
  return { pending: "Saved here, sending…", synced: "Sent to dispatch", rejected: "Refused by dispatch" }[task.sync] || task.sync;
}

function renderNext() {
  const next = currentNext();
  const shiftOn = state.status && state.status.shiftStatus && state.status.shiftStatus.onShift;
  $("shift-button").textContent = shiftOn ? "End shift" : "Start shift";
  const primary = $("primary-button");
  $("outside-reasons").hidden = !state.pendingOutside;
  if (!next) {
    $("next-kind").textContent = "";
    $("next-heading").textContent = shiftOn ? "No stop waiting" : "Off shift";
    $("next-address").textContent = shiftOn ? "New orders appear here." : "Start the shift to see your orders.";
    $("next-eta").textContent = ""; $("next-sync").textContent = "";
    primary.hidden = shiftOn;
    primary.textContent = "Start shift";
    primary.dataset.method = "shift.start";
    primary.disabled = false;
    $("pod-panel").hidden = true;
    $("tab-next").classList.remove("capturing");
    $("more").hidden = true;
    return;
  }
  $("more").hidden = false;
  const { stop, task, primaryAction, eta } = next;
  $("next-kind").textContent = `${KIND_WORD[stop.kind] || stop.kind}${state.next.remainingStops > 1 ? ` · ${state.next.remainingStops} stops left` : ""}`;
  $("next-heading").textContent = stop.name;
  $("next-address").textContent = stop.address;
  $("next-eta").textContent = `ETA ${etaText(eta)}`;
  $("next-sync").textContent = syncText(task);
  const capture = primaryAction === "Capture POD" || (task.status === "ARRIVED_AT_DESTINATION" && task.pod === "rejected");
  // Off shift nothing is recorded or sent: starting the shift comes first. At the proof step the keypad or
  // the camera and signature pad are the action: no button above them.
  const shown = !shiftOn ? "Start shift" : capture ? null : primaryAction;
  primary.hidden = !shown;
  primary.disabled = state.busy;
  primary.textContent = shown || "";
  primary.dataset.method = !shiftOn ? "shift.start" : ACTION_METHOD[primaryAction] || "";
  $("primary-reason").textContent = "";
  $("pod-panel").hidden = !capture;
  $("tab-next").classList.toggle("capturing", capture);
  $("otp-pad").hidden = !(capture && task.podType === "OTP");
  $("photo-pod").hidden = !(capture && task.podType !== "OTP");
  $("otp-display").textContent = (state.otp + "____").slice(0, 4).replace(/[0-9]/g, "•");
  $("fail-reasons").hidden = !task.allowedActions.includes("fail");
  const links = next.navigation || {};
  $("navigate-link").href = links.googleWeb || links.geo || "#";
  $("call-link").href = stop.phone ? `tel:${stop.phone.replace(/\s/g, "")}` : "#";
  $("call-link").hidden = !stop.phone;
}

function distanceMeters(a, b) {
  const rad = Math.PI / 180, r = 6371000;
  const dLat = (b.lat - a.lat) * rad, dLng = (b.lng - a.lng) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * r * Math.asin(Math.sqrt(h));
}

function renderDrive() {
  if ($("drive-view").hidden) return;
  const next = currentNext();
  $("drive-kind").textContent = next ? KIND_WORD[next.stop.kind] || next.stop.kind : "";
  $("drive-name").textContent = next ? next.stop.name : "No stop waiting";
  const distance = next && state.fix ? distanceMeters(state.fix, next.stop) : null;
  $("drive-distance").textContent = distance === null ? "–" : metersText(distance);
  $("drive-eta").textContent = next && next.eta ? `${Math.max(1, Math.round(next.eta.seconds / 60))} min` : "–";
  const held = state.held && state.held.held > 0 ? state.held : null;
  $("drive-held").hidden = !held;
  if (held) $("drive-held").textContent = `${held.summary} waiting — pull over to read`;
  const button = $("drive-primary");
  button.hidden = !(next && next.primaryAction);
  button.textContent = next && next.primaryAction ? next.primaryAction : "";
  button.disabled = true;
  const reason = (state.safety && state.safety.reason) || "pull over to complete";
  $("drive-reason").textContent = reason.charAt(0).toUpperCase() + reason.slice(1);
  button.setAttribute("aria-description", reason);
}

const STOP_STATUS = { pending: "Waiting", "en-route": "Next", arrived: "Arrived", "picked-up": "Picked up", delivered: "Delivered", failed: "Failed" };
function renderRoute() {
  const route = state.route;
  const list = $("stops");
  list.textContent = "";
  const stops = route ? route.stops : [];
  for (const stop of stops) {
    const item = document.createElement("li");
    const task = route.tasks.find((t) => t.id === stop.taskId);
    item.innerHTML = "<span class=\"status\"></span> · <span class=\"kind\"></span><br><strong></strong><br><span class=\"address\"></span>";
    item.querySelector(".status").textContent = STOP_STATUS[stop.status] || stop.status;
    item.querySelector(".kind").textContent = `${KIND_WORD[stop.kind]}${task && task.sync === "pending" ? " · sending" : ""}`;
    item.querySelector("strong").textContent = stop.name;
    item.querySelector(".address").textContent = stop.address;
    list.appendChild(item);
  }
  if (state.tab === "route") RouteMap.render($("map"), stops, state.fix, state.kiosk.tiles || null, state.kiosk.tilesAttribution || "");
}

function renderMessages() {
  const list = $("messages");
  list.textContent = "";
  const pushes = [...state.pushes.values()].sort((a, b) => a.id - b.id);
  $("no-messages").hidden = pushes.length > 0;
  $("message-count").textContent = pushes.length ? `(${pushes.length})` : "";
  for (const push of pushes) {
    const item = document.createElement("li");
    const title = document.createElement("strong");
    title.textContent = push.title;
    item.appendChild(title);
    if (push.message) {
      const text = document.createElement("p");
      text.textContent = push.message;
      item.appendChild(text);
    }
    const ack = document.createElement("button");
    ack.type = "button";
    ack.textContent = push.kind === "TASK_ASSIGNED" ? "Seen: show the order" : "Acknowledge";
    ack.dataset.ack = String(push.id);
    item.appendChild(ack);
    list.appendChild(item);
  }
}

// ---- actions --------------------------------------------------------------------------------------------
async function act(method, params) {
  if (state.busy) return;
  state.busy = true;
  // A second tap while the first is on its way is refused visibly, not dropped silently.
  $("primary-button").disabled = true;
  say("");
  try {
    const result = await call(method, params);
    state.pendingOutside = null;
    return result;
  } catch (error) {
    if (error.code === 1007) {
      state.pendingOutside = { method, params };
      $("outside-text").textContent = `${Math.round((error.data && error.data.distanceMeters) || 0)} m from the stop. Why here?`;
    } else {
      say(error.message || "That did not work");
    }
  } finally {
    state.busy = false;
    // What the action changed comes as route.updated (published as it is committed): nothing to ask for here.
    render();
  }
}

$("primary-button").addEventListener("click", () => {
  const method = $("primary-button").dataset.method;
  const next = currentNext();
  if (method === "shift.start") { act("shift.start"); return; }
  if (method && next) act(method, { taskId: next.task.id });
});
$("outside-reasons").addEventListener("click", (event) => {
  const reason = event.target.dataset && event.target.dataset.outside;
  if (!reason || !state.pendingOutside) return;
  const { method, params } = state.pendingOutside;
  act(method, { ...params, outsideReason: reason });
});
$("fail-reasons").addEventListener("click", (event) => {
  const reason = event.target.dataset && event.target.dataset.fail;
  const next = currentNext();
  if (reason && next) { $("more").open = false; act("task.fail", { taskId: next.task.id, reason }); }
});
$("shift-button").addEventListener("click", () => {
  const on = state.status && state.status.shiftStatus && state.status.shiftStatus.onShift;
  act(on ? "shift.end" : "shift.start");
});
document.querySelector(".keys").addEventListener("click", async (event) => {
  const key = event.target.dataset && event.target.dataset.key;
  if (!key) return;
  if (key === "back") state.otp = state.otp.slice(0, -1);
  else if (key === "ok") {
    const next = currentNext();
    if (state.otp.length === 4 && next) {
      const otp = state.otp;
      state.otp = "";
      const result = await act("pod.otp", { taskId: next.task.id, otp });
      $("pod-status").textContent = result ? "Code accepted" : "";
    }
  } else if (state.otp.length < 4) state.otp += key;
  $("otp-display").textContent = (state.otp + "____").slice(0, 4).replace(/[0-9]/g, "•");
});

async function sendImage(dataURL) {
  const next = currentNext();
  if (!next) return;
  const image = dataURL.slice(dataURL.indexOf(",") + 1);
  $("pod-status").textContent = "Saving proof…";
  const result = await act("kiosk.photo", { taskId: next.task.id, image });
  $("pod-status").textContent = result ? "Proof saved" : "";
}
$("photo-button").addEventListener("click", () => $("photo-input").click());
$("photo-input").addEventListener("change", () => {
  const file = $("photo-input").files[0];
  if (!file) return;
  const reader = new FileReader();
  reader.onload = () => sendImage(reader.result);
  reader.readAsDataURL(file);
  $("photo-input").value = "";
});

// The signature pad: black ink on white whatever the theme, saved as a PNG.
const pad = $("signature");
const ink = pad.getContext("2d");
let drawing = false, signed = false;
function clearPad() { ink.fillStyle = "#ffffff"; ink.fillRect(0, 0, pad.width, pad.height); signed = false; }
clearPad();
function padPoint(event) {
  const box = pad.getBoundingClientRect();
  return [((event.clientX - box.left) * pad.width) / box.width, ((event.clientY - box.top) * pad.height) / box.height];
}
pad.addEventListener("pointerdown", (event) => {
  drawing = true; pad.setPointerCapture(event.pointerId);
  ink.strokeStyle = "#000000"; ink.lineWidth = 4; ink.lineCap = "round";
  ink.beginPath(); ink.moveTo(...padPoint(event));
});
pad.addEventListener("pointermove", (event) => { if (drawing) { ink.lineTo(...padPoint(event)); ink.stroke(); signed = true; } });
pad.addEventListener("pointerup", () => { drawing = false; });
$("signature-clear").addEventListener("click", clearPad);
$("signature-save").addEventListener("click", () => {
  if (!signed) { $("pod-status").textContent = "The customer signs first"; return; }
  sendImage(pad.toDataURL("image/png"));
  clearPad();
});

$("messages").addEventListener("click", async (event) => {
  const id = event.target.dataset && event.target.dataset.ack;
  if (!id) return;
  const result = await act("events.ack", { id: Number(id) });
  if (result) { state.pushes.delete(Number(id)); state.held = result; render(); }
});
$("tabs").addEventListener("click", (event) => {
  const button = event.target.closest("button");
  if (!button) return;
  state.tab = button.dataset.tab;
  for (const tab of document.querySelectorAll(".tab")) tab.setAttribute("aria-pressed", String(tab === button));
  for (const name of ["next", "route", "messages"]) $(`tab-${name}`).hidden = name !== state.tab;
  render();
});
$("theme-button").addEventListener("click", () => {
  state.theme = { auto: "night", night: "day", day: "auto" }[state.theme];
  localStorage.setItem("kiosk-theme", state.theme);
  renderStrip(); renderTheme();
});
let sosArmed = 0;
$("sos-button").addEventListener("click", async () => {
  // Two taps within 5 s: a pocket or a sleeve must not call for help.
  if (Date.now() - sosArmed > 5000) { sosArmed = Date.now(); say("Tap SOS again to call for help"); return; }
  sosArmed = 0;
  try { await call("sos.raise", {}); say("SOS sent. Help is being called."); } catch (error) { say(error.message); }
});

render();
connect();
