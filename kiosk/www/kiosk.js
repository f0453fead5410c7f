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
  "pod.progress", "outbox.refused", "task.conflict", "sos.changed", "auth.required", "vehicle.changed", "shift.changed"];
// The daemon's action names (route.next's primaryAction), each with its method and its words on the button.
const ACTIONS = {
  "Accept": { method: "task.accept", text: () => t("action.accept") }, "Arrived": { method: "task.arrive", text: () => t("action.arrived") },
  "Picked up": { method: "task.pickup", text: () => t("action.pickedUp") },
  "Arrived at destination": { method: "task.arrive", text: () => t("action.arrivedAtDestination") },
  "Delivered": { method: "task.deliver", text: () => t("action.delivered") }, "Return to vendor": { method: "task.returnToVendor", text: () => t("action.returnToVendor") },
  "Capture POD": { method: "", text: () => t("action.capture") },
};
const { t } = I18n;
const actionText = (action) => (ACTIONS[action] ? ACTIONS[action].text() : t("action.unknown"));
const kindWord = (kind) => (kind === "pickup" ? t("kind.pickup") : t("kind.dropoff"));

const state = {
  socket: null, connected: false, nextId: 1, pending: new Map(), kiosk: {},
  status: null, route: null, next: null, fix: null, safety: null, pushes: new Map(), held: null,
  otp: "", tab: "next", theme: localStorage.getItem("kiosk-theme") || "auto", lastStatusAt: 0, lastNextAt: 0,
  pendingOutside: null, busy: false, vehicle: null, refusal: null,
  // Stop names by order, from every route seen: messages and cancellations name the place, never an order's id.
  places: new Map(), noticeTask: null,
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
      I18n.units = state.kiosk.units;
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
    for (const { reject } of state.pending.values()) reject({ name: "unavailable", message: "the connection to driverd closed" });
    state.pending.clear();
    $("reconnecting-why").textContent = t("reconnect.retry");
    render();
    setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 5000);
  };
}

// An error's name in the local API's one declaration of them (DriverAPI's APIError, served by kiosk.describe): the
// page never copies their numbers. A failure of the page's own (no connection) carries its name already.
function errorName(error) {
  if (error.name) return error.name;
  const errors = state.kiosk.errors || {};
  return Object.keys(errors).find((name) => errors[name] === error.code) || "";
}

function call(method, params) {
  return new Promise((resolve, reject) => {
    const socket = state.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) { reject({ name: "unavailable", message: "not connected to driverd" }); return; }
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
  await followDriver(status);
  state.vehicle = vehicle;
  state.safety = status.safety || null;
  const last = status.gps && status.gps.lastFix;
  if (last && !state.fix) state.fix = { lat: last.latitude, lng: last.longitude, speed: last.speed, track: last.track, error: last.horizontalError };
  state.route = route;
  learnPlaces(route);
  state.next = next;
  state.held = pending;
  state.lastStatusAt = Date.now();
  await refreshHealth();
}

// What the driver can act on in the unit's health (agent.health's findings for the driver), read once a minute: it
// changes slowly (its rules wait minutes), and the store's own line follows agent.status.
async function refreshHealth() {
  state.healthAt = Date.now();
  // A daemon before API 1.18 has no agent.health: no office line rather than no screen.
  state.health = await call("agent.health").catch(() => null);
}

// The card's distance and local ETA age with the van's position, the strip's link with time: read again on the
// fix's rhythm. Changes of tasks and stops come by themselves (route.updated).
async function refreshStatus() {
  try {
    const [next, status] = await Promise.all([call("route.next"), call("agent.status")]);
    state.next = next; state.status = status; state.safety = status.safety || state.safety;
    state.lastStatusAt = state.lastNextAt = Date.now();
    await followDriver(status);
    if (!state.healthAt || Date.now() - state.healthAt >= 60000) await refreshHealth();
    render();
  } catch { /* the connection's close handler shows it */ }
}

// ---- notifications --------------------------------------------------------------------------------------
function notified(topic, params) {
  switch (topic) {
    case "gps.fix":
      state.fix = { lat: params.latitude, lng: params.longitude, speed: params.speed, track: params.track, error: params.horizontalError };
      // The way the van faces: its course while it moved (a standing receiver's course means nothing).
      if (params.speed >= 1 && Number.isFinite(params.track)) state.heading = params.track;
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
      say(params.accepted ? t("pod.accepted") : t("pod.refused"), params.taskId);
      break;
    case "pod.progress":
      $("pod-status").textContent = t("pod.sending", { percent: I18n.percent((100 * params.sentBytes) / Math.max(1, params.totalBytes)) });
      break;
    case "outbox.refused":
      say(t("notice.officeRefused", { place: placeOf(params.taskId) }), params.taskId);
      // A refused change is a dead letter now: the strip's office line counts it without waiting for the minute.
      refreshHealth().then(render);
      break;
    case "task.conflict":
      say(t("notice.officeChanged", { place: placeOf(params.taskId) }), params.taskId);
      break;
    case "sos.changed":
      say(params.state === "acknowledged" ? t("sos.received") : t("sos.sent"));
      break;
    case "auth.required":
      say(t("notice.login"));
      break;
    case "shift.changed":
      if (state.status) state.status = { ...state.status, shiftStatus: params };
      render();
      break;
    case "vehicle.changed":
      state.vehicle = params;
      renderStrip();
      break;
    case "route.updated":
      state.route = params.route;
      learnPlaces(params.route);
      state.next = params.next;
      state.lastNextAt = Date.now();
      render();
      break;
  }
}

// A notice about an order (a proof's verdict, the office's change) leaves when the card moves to another order:
// it must not sit above the next, unrelated one.
function say(text, taskId) {
  $("notice").textContent = text;
  state.noticeTask = taskId || null;
}

function learnPlaces(route) {
  for (const stop of (route && route.stops) || []) {
    const known = state.places.get(stop.taskId) || {};
    known[stop.kind] = { name: stop.name, address: stop.address };
    state.places.set(stop.taskId, known);
  }
}

// The stop an order is about, as the driver knows it: where it is delivered, else where it is picked up.
function stopOf(taskId, prefer) {
  const known = state.places.get(taskId);
  return known ? (prefer && known[prefer]) || known.dropoff || known.pickup : null;
}
function placeOf(taskId, prefer) {
  const stop = stopOf(taskId, prefer);
  return stop ? stop.name : t("place.unknown");
}

// ---- rendering -----------------------------------------------------------------------------------------
function gateOpen() {
  const safety = state.safety;
  if (!safety) return true;
  if (safety.open !== undefined) return safety.open;
  return safety.state === "stationary";
}

// The driving view is for driving: a gate closed only because the speed is not known yet (a unit just started in
// a parked van) keeps the stand view, its actions disabled with the reason.
function drivingView() {
  return state.connected && !gateOpen() && (!state.safety || state.safety.state === "moving");
}

function render() {
  $("reconnecting").hidden = state.connected;
  const next = currentNext();
  if (state.noticeTask && (!next || next.task.id !== state.noticeTask)) say("");
  if (state.refusal && (!next || next.task.id !== state.refusal.taskId)) state.refusal = null;
  const driving = drivingView();
  $("drive-view").hidden = !driving;
  $("stand-view").hidden = !state.connected || driving;
  // Nothing but SOS is tappable while driving: the language and the theme wait for the van to stand.
  $("language-button").disabled = driving;
  $("theme-button").disabled = driving;
  if (driving) $("languages").hidden = true;
  $("strip").hidden = !state.connected;
  if (!state.connected) return;
  renderStrip();
  renderTheme();
  if (driving) renderDrive(); else { renderNext(); renderRoute(); renderMessages(); }
}


function renderStrip() {
  const status = state.status;
  if (!status) return;
  const shift = status.shiftStatus;
  $("chip-shift").textContent = shift && shift.onShift ? t("strip.onShift") : t("strip.offShift");
  const gps = status.gps || {};
  const fresh = gps.lastFixAge !== undefined && gps.lastFixAge !== null && gps.lastFixAge < 30;
  const error = gps.lastFix && gps.lastFix.horizontalError;
  $("chip-gps").textContent = gps.link !== "connected" ? t("strip.gpsNoReceiver")
    : !fresh ? t("strip.gpsNoPosition") : error ? t("strip.gpsAccuracy", { distance: I18n.distance(error) }) : t("strip.gpsPosition");
  // Orders with changes the office has not confirmed, from the route (route.updated keeps it current).
  const waiting = state.route ? state.route.tasks.filter((task) => task.sync === "pending").length : 0;
  $("chip-link").textContent = linkText(status.uplink || {}, waiting);
  // Only what needs the driver's eye: changes on their way while connected, a clock not set (times are then the
  // receiver's). "All sent" and "clock set" are the normal state: no chip, room for the driver's language.
  $("chip-queue").hidden = waiting === 0 || !status.uplink || status.uplink.link !== "online";
  $("chip-queue").textContent = t("strip.waiting", { count: I18n.number(waiting, 0) });
  const clock = status.clock || {};
  $("chip-clock").hidden = clock.source === "ntp" || clock.source === "gps";
  $("chip-clock").textContent = t("strip.clockUnset");
  // A store that cannot save: the driver's taps would be refused, so the strip says it before they tap.
  const store = status.store || {};
  const unsaved = store.canSave === false ? storeWords(store.condition) : "";
  $("chip-store").hidden = !unsaved;
  if (unsaved) $("chip-store").textContent = unsaved;
  const office = officeWords(state.health);
  $("chip-office").hidden = !office;
  if (office) $("chip-office").textContent = office;
  // The vehicle's check-engine light and fuel, when its adapter tells them (absent: no chip).
  const vehicle = state.vehicle || {};
  $("chip-engine").hidden = vehicle.checkEngine !== true;
  const fuel = vehicle.fuelPercent;
  $("chip-fuel").hidden = fuel === undefined || fuel === null;
  if (!$("chip-fuel").hidden) $("chip-fuel").textContent = t("strip.fuel", { percent: I18n.percent(fuel) });
  $("theme-button").textContent = state.theme === "night" ? t("theme.night") : state.theme === "day" ? t("theme.day") : t("theme.auto");
  $("theme-button").setAttribute("aria-label", t("theme.label", { theme: $("theme-button").textContent }));
  $("language-code").textContent = I18n.code.toUpperCase();
}

// The first thing the driver can act on by calling the office (agent.health's findings marked for the driver), in
// their words; a store that cannot save is chip-store's, current with agent.status.
function officeWords(health) {
  const rules = new Set(((health && health.findings) || []).filter((finding) => finding.forDriver).map((finding) => finding.rule));
  if (rules.has("certificate-refused") || rules.has("certificate-expiring")) return t("office.certificate");
  if (rules.has("dead-letters")) return t("office.refused", { count: I18n.number(health.health.queue.deadLetters, 0) });
  if (rules.has("gps-lost")) return t("office.gps");
  return "";
}

// The office link in plain words: what a driver needs is whether what they did is on its way.
function linkText(uplink, waiting) {
  if (uplink.enabled === false || uplink.link === "disabled") return t("link.none");
  if (uplink.link === "online") return t("link.online");
  if (uplink.link === "authRequired") return t("link.login");
  if (uplink.link === "backingOff") return waiting ? t("link.offlineSaved", { count: I18n.number(waiting, 0) }) : t("link.offline");
  return t("link.connecting");
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

const etaMinutes = (eta) => I18n.minutes(Math.max(1, Math.round(eta.seconds / 60)));

function etaText(eta) {
  if (!eta) return t("eta.noPosition");
  const distance = typeof eta.distanceMeters === "number" ? ` · ${I18n.distance(eta.distanceMeters)}` : "";
  return t("eta.line", { eta: `${etaMinutes(eta)}${distance}`, source: eta.source === "server" ? t("eta.fromOffice") : t("eta.estimated") });
}

// What happened to the driver's own changes; an order nobody touched yet has nothing to say.
function syncText(task) {
  if (task.sync === "pending") return t("sync.pending");
  if (task.sync === "rejected") return t("sync.rejected");
  return task.status === "ASSIGNED" ? "" : t("sync.synced");
}

function renderNext() {
  const next = currentNext();
  const shiftOn = state.status && state.status.shiftStatus && state.status.shiftStatus.onShift;
  $("shift-button").textContent = shiftOn ? t("action.endShift") : t("action.startShift");
  const primary = $("primary-button");
  // A sheet opened for one order closes when the card moves on to another (cancelled, delivered elsewhere).
  const cardTask = next ? next.task.id : null;
  if (cardTask !== state.cardTask) { state.cardTask = cardTask; state.pendingOutside = null; $("more").open = false; }
  $("outside-reasons").hidden = !state.pendingOutside;
  if (state.pendingOutside) $("outside-text").textContent = t("outside.question", { distance: I18n.distance(state.pendingOutside.distanceMeters) });
  if (!next) {
    $("next-kind").textContent = "";
    $("next-heading").textContent = shiftOn ? t("next.noStop") : t("strip.offShift");
    $("next-address").textContent = shiftOn ? t("next.ordersAppearHere") : t("next.startShiftHint");
    $("next-eta").textContent = ""; $("next-sync").textContent = ""; $("next-arrival").hidden = true;
    primary.hidden = shiftOn;
    primary.textContent = t("action.startShift");
    primary.dataset.method = "shift.start";
    primary.disabled = false;
    $("pod-panel").hidden = true;
    $("tab-next").classList.remove("capturing");
    $("more").hidden = true;
    return;
  }
  $("more").hidden = false;
  const { stop, task, primaryAction, eta } = next;
  $("next-kind").textContent = kindWord(stop.kind)
    + (state.next.remainingStops > 1 ? ` · ${t("next.stopsLeft", { count: I18n.number(state.next.remainingStops, 0) })}` : "");
  $("next-heading").textContent = stop.name;
  // The sheets name the stop they are about: the card they cover named it.
  $("more-subject").textContent = $("outside-subject").textContent = stop.name;
  $("next-address").textContent = stop.address;
  $("next-eta").textContent = etaText(eta);
  $("next-sync").textContent = syncText(task);
  // The geofence saw the van arrive: said on the card, not only by the voice.
  const arrival = next.arrivalDetected;
  $("next-arrival").hidden = !arrival;
  const where = arrival && { distance: I18n.distance(arrival.distanceMeters) };
  if (arrival) $("next-arrival").textContent = arrival.mode === "auto" ? t("arrival.recorded", where) : t("arrival.detected", where);
  const capture = primaryAction === "Capture POD" || (task.status === "ARRIVED_AT_DESTINATION" && task.pod === "rejected");
  // Off shift nothing is recorded or sent: starting the shift comes first. At the proof step the keypad or
  // the camera and signature pad are the action: no button above them.
  const label = !shiftOn ? t("action.startShift") : capture || !primaryAction ? "" : actionText(primaryAction);
  const closed = shiftOn && !gateOpen();
  primary.hidden = !label;
  primary.disabled = state.busy || closed;
  primary.textContent = label;
  primary.dataset.method = !shiftOn ? "shift.start" : (ACTIONS[primaryAction] || {}).method || "";
  if (closed) $("primary-reason").textContent = gateReason();
  else $("primary-reason").textContent = refusalShown();
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
  $("drive-kind").textContent = next ? kindWord(next.stop.kind) : "";
  $("drive-name").textContent = next ? next.stop.name : t("next.noStop");
  const distance = next && state.fix ? distanceMeters(state.fix, next.stop) : null;
  $("drive-distance").textContent = distance === null ? "–" : I18n.distance(distance);
  $("drive-eta").textContent = next && next.eta ? etaMinutes(next.eta) : "–";
  const held = state.held && state.held.held > 0 ? state.held : null;
  $("drive-held").hidden = !held;
  if (held) $("drive-held").textContent = t("drive.held", { count: I18n.number(held.held, 0) });
  const button = $("drive-primary");
  button.hidden = !(next && next.primaryAction);
  button.textContent = next && next.primaryAction ? actionText(next.primaryAction) : "";
  button.disabled = true;
  const reason = gateReason();
  $("drive-reason").textContent = reason;
  button.setAttribute("aria-description", reason);
}

// Why the buttons wait, in the driver's words and units (the daemon's reason is for engineers: m/s).
function gateReason() {
  const safety = state.safety || {};
  if (safety.state === "moving" && typeof safety.speed === "number") return t("gate.moving", { speed: I18n.speed(safety.speed) });
  if (safety.state === "moving" || safety.state === "stopping") return t("gate.stopFirst");
  return t("gate.checkingSpeed");
}

function stopStatusText(status) {
  switch (status) {
    case "en-route": return t("stop.next");
    case "arrived": return t("stop.arrived");
    case "picked-up": return t("stop.pickedUp");
    case "delivered": return t("stop.delivered");
    case "failed": return t("stop.failed");
    default: return t("stop.waiting");
  }
}
function renderRoute() {
  const route = state.route;
  const list = $("stops");
  list.textContent = "";
  const stops = route ? route.stops : [];
  for (const stop of stops) {
    const item = document.createElement("li");
    const task = route.tasks.find((t) => t.id === stop.taskId);
    item.innerHTML = "<span class=\"status\"></span> · <span class=\"kind\"></span><br><strong></strong><br><span class=\"address\"></span>";
    item.querySelector(".status").textContent = stopStatusText(stop.status);
    item.querySelector(".kind").textContent = `${kindWord(stop.kind)}${task && task.sync === "pending" ? ` · ${t("stop.sending")}` : ""}`;
    item.querySelector("strong").textContent = stop.name;
    item.querySelector(".address").textContent = stop.address;
    list.appendChild(item);
  }
  const van = state.fix && Object.assign({}, state.fix, { heading: state.heading });
  if (state.tab === "route") RouteMap.render($("map"), stops, van, state.kiosk.tiles || null, state.kiosk.tilesAttribution || "");
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
    title.textContent = pushTitle(push);
    item.appendChild(title);
    // When it came, on the unit's clock in the language's way, and the address under the name (two customers of
    // one name, or a name the driver does not know yet).
    const stop = push.taskId && stopOf(push.taskId, push.kind === "TASK_ASSIGNED" ? "pickup" : null);
    const meta = document.createElement("p");
    meta.className = "message-meta";
    meta.textContent = [I18n.time(push.receivedAt), stop && stop.address].filter(Boolean).join(" · ");
    item.appendChild(meta);
    if (push.message) {
      const text = document.createElement("p");
      text.textContent = push.message;
      item.appendChild(text);
    }
    const ack = document.createElement("button");
    ack.type = "button";
    ack.textContent = push.kind === "TASK_ASSIGNED" ? t("messages.showOrder") : t("messages.acknowledge");
    ack.dataset.ack = String(push.id);
    item.appendChild(ack);
    list.appendChild(item);
  }
}

// A message's title by the place it is about (the stop's name), never the order's id.
function pushTitle(push) {
  const known = push.taskId && state.places.has(push.taskId);
  switch (push.kind) {
    case "TASK_ASSIGNED": return known ? t("push.newOrderAt", { place: placeOf(push.taskId, "pickup") }) : t("push.newOrder");
    case "TASK_CANCELLED": return known ? t("push.cancelledAt", { place: placeOf(push.taskId) }) : t("push.cancelled");
    case "ROUTE_CHANGED": return t("push.routeChanged");
    case "CUSTOMER_MESSAGE": return known ? t("push.messageAbout", { place: placeOf(push.taskId) }) : t("push.messageFromOffice");
    case "STOP_LEFT_UNFINISHED": return known ? t("push.leftUnfinishedAt", { place: placeOf(push.taskId) }) : t("push.leftUnfinished");
    default: return t("push.messageFromOffice");
  }
}

// ---- actions --------------------------------------------------------------------------------------------
async function act(method, params) {
  if (state.busy) return;
  state.busy = true;
  // A second tap while the first is on its way is refused visibly, not dropped silently.
  $("primary-button").disabled = true;
  say("");
  refuse(null);
  try {
    const result = await call(method, params);
    state.pendingOutside = null;
    return result;
  } catch (error) {
    if (errorName(error) === "outsideGeofence") {
      state.pendingOutside = { method, params, distanceMeters: (error.data && error.data.distanceMeters) || 0 };
    } else {
      refuse(() => refusalText(error, method));
    }
  } finally {
    state.busy = false;
    // What the action changed comes as route.updated (published as it is committed): nothing to ask for here.
    render();
  }
}

// A refusal shows on the card, where the driver's eyes are, in place of nothing: never a banner above it that
// pushes the keypad below the screen's edge. `words` makes its text at each render, so a change of language
// says it in the new one.
function refuse(words) {
  const next = currentNext();
  state.refusal = words ? { words, taskId: next && next.task.id } : null;
  $("primary-reason").textContent = refusalShown();
}

const refusalShown = () => (state.refusal ? state.refusal.words() : "");

// The store's condition in the driver's words (agent.status's store.condition, a refusal's data.reason): only what
// keeps the unit from saving; a nearly full store is the office's business, not the driver's.
function storeWords(condition, refusal) {
  if (condition === "full") return refusal ? t("refusal.notSavedFull") : t("store.full");
  if (condition === "read-only" || condition === "failing") return refusal ? t("refusal.notSavedFault") : t("store.fault");
  return "";
}

function refusalText(error, method) {
  switch (errorName(error)) {
    case "notSaved": return storeWords(error.data && error.data.reason, true) || t("refusal.notSavedFault");
    case "proofRejected": {
      if (method !== "pod.otp") return t("refusal.proof");
      const left = error.data && error.data.attemptsLeft;
      if (left === 0) return t("refusal.codeLocked");
      return typeof left === "number" ? t("refusal.wrongCodeLeft", { count: I18n.number(left, 0) }) : t("refusal.wrongCode");
    }
    case "drivingGate": return t("gate.stopFirst");
    case "unavailable": return t("refusal.notConnected");
    case "actionRefused": case "notFound": return t("refusal.notNow");
    default: return t("refusal.failed");
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
$("outside-close").addEventListener("click", () => { state.pendingOutside = null; render(); });
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
      $("pod-status").textContent = result ? t("pod.codeAccepted") : "";
    }
  } else if (state.otp.length < 4) state.otp += key;
  $("otp-display").textContent = (state.otp + "____").slice(0, 4).replace(/[0-9]/g, "•");
});

async function sendImage(dataURL) {
  const next = currentNext();
  if (!next) return;
  const image = dataURL.slice(dataURL.indexOf(",") + 1);
  $("pod-status").textContent = t("pod.saving");
  const result = await act("kiosk.photo", { taskId: next.task.id, image });
  $("pod-status").textContent = result ? t("pod.saved") : "";
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
  if (!signed) { $("pod-status").textContent = t("pod.signFirst"); return; }
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
  if (Date.now() - sosArmed > 5000) { sosArmed = Date.now(); say(t("sos.confirm")); return; }
  sosArmed = 0;
  try { await call("sos.raise", {}); say(t("sos.sent")); } catch (error) { say(t("sos.failed")); }
});

// The language: the globe button opens the list of languages, each in its own name; one tap on one applies it.
$("language-button").addEventListener("click", () => {
  const list = $("language-list");
  list.textContent = "";
  for (const language of I18n.LANGUAGES) {
    const button = document.createElement("button");
    button.type = "button";
    button.lang = language.code;
    button.dataset.language = language.code;
    button.textContent = language.name;
    button.setAttribute("aria-pressed", String(language.code === I18n.code));
    list.appendChild(button);
  }
  $("languages").hidden = !$("languages").hidden;
});
// The driver's language follows the driver: at each status, a new login (or a profile's language learnt) switches
// the screen and the voice, unless this driver chose one here.
async function followDriver(status) {
  const uplink = status.uplink || {};
  if (!I18n.follow(uplink.driverId, uplink.driverLanguage)) return;
  await I18n.load().catch(() => {});
  tellVoiceLanguage();
}

// The voice (driverd-kiosk itself) speaks the screen's language: told at each load and each change.
function tellVoiceLanguage() {
  fetch(`language?code=${encodeURIComponent(I18n.tag)}&token=${encodeURIComponent(token)}`, { method: "PUT" }).catch(() => {});
}

$("language-list").addEventListener("click", async (event) => {
  const code = event.target.dataset && event.target.dataset.language;
  if (!code) return;
  await I18n.choose(code);
  tellVoiceLanguage();
  $("languages").hidden = true;
  render();
});

// The sheets start below the status strip, whose height changes with the language and the screen.
new ResizeObserver(() => document.documentElement.style.setProperty("--strip-height", `${$("strip").getBoundingClientRect().bottom}px`))
  .observe($("strip"));

I18n.load().catch(() => {}).then(() => {
  tellVoiceLanguage();
  render();
  connect();
});
