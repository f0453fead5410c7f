// The route's map: the stops in order, the line through them from the van (an arrow the way it faces: its last
// course), and a scale bar, drawn in SVG in Web Mercator. Tiles come from the kiosk's own MBTiles file
// (`kiosk.tiles_file`) or `kiosk.tiles` when one is configured; without one (the default) the background is
// plain, never a blank or broken map. Stops closer than a marker's width are set apart around their place, each
// with a line to it, so none hides another.
"use strict";
const RouteMap = (() => {
  const TILE = 256;
  const svgNS = "http://www.w3.org/2000/svg";
  const worldX = (lng, z) => ((lng + 180) / 360) * TILE * 2 ** z;
  const worldY = (lat, z) => {
    const s = Math.sin((Math.max(-85, Math.min(85, lat)) * Math.PI) / 180);
    return (0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI)) * TILE * 2 ** z;
  };
  function el(name, attributes, text) {
    const node = document.createElementNS(svgNS, name);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function niceDistance(meters) {
    const steps = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000];
    let best = steps[0];
    for (const step of steps) if (step <= meters) best = step;
    return best;
  }
  // Tiles that failed once are not asked for again (a tile server with holes, or none reachable).
  const failed = new Set();
  let drawn = "";
  // Where each marker goes: at its stop, or (when an earlier marker is there) on a ring around it.
  const MARKER_GAP = 36;
  function placeMarkers(positions) {
    const placed = [];
    for (const [x, y] of positions) {
      let spot = [x, y];
      for (let ring = 1; ring <= 3 && placed.some(([px, py]) => Math.hypot(px - spot[0], py - spot[1]) < MARKER_GAP); ring++) {
        const free = Array.from({ length: 6 * ring }, (_, i) => (2 * Math.PI * i) / (6 * ring) - Math.PI / 2)
          .map((angle) => [x + MARKER_GAP * ring * Math.cos(angle), y + MARKER_GAP * ring * Math.sin(angle)])
          .find(([cx, cy]) => !placed.some(([px, py]) => Math.hypot(px - cx, py - cy) < MARKER_GAP));
        if (free) spot = free;
      }
      placed.push(spot);
    }
    return placed;
  }
  // points: [{lat, lng, label, kind, status}], vehicle: {lat, lng, heading} or null (heading: the course it last
  // moved along, degrees). Drawn again only when something it shows changed.
  function render(container, points, vehicle, tiles, attribution) {
    const width = container.clientWidth || 600;
    const height = container.clientHeight || 240;
    const heading = vehicle && Number.isFinite(vehicle.heading) ? Math.round(vehicle.heading / 5) * 5 : null;
    const key = JSON.stringify([points.map((p) => [p.lat, p.lng, p.kind]), vehicle && [vehicle.lat.toFixed(5), vehicle.lng.toFixed(5), heading],
      width, height, tiles, attribution]);
    if (key === drawn && container.firstChild) return;
    drawn = key;
    const all = points.concat(vehicle ? [vehicle] : []);
    container.textContent = "";
    const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, "aria-hidden": "true" });
    container.appendChild(svg);
    if (all.length === 0) {
      svg.appendChild(el("text", { x: width / 2, y: height / 2, "text-anchor": "middle", class: "map-text" }, "No stops to show"));
      return;
    }
    // The largest zoom (fractional: the plain map scales freely) at which everything fits with a margin;
    // tiles are drawn from the whole zoom level below, scaled.
    const pad = 36;
    const spanX = Math.max(...all.map((p) => worldX(p.lng, 0))) - Math.min(...all.map((p) => worldX(p.lng, 0)));
    const spanY = Math.max(...all.map((p) => worldY(p.lat, 0))) - Math.min(...all.map((p) => worldY(p.lat, 0)));
    const fit = Math.min(Math.log2((width - 2 * pad) / Math.max(spanX, 1e-9)), Math.log2((height - 2 * pad) / Math.max(spanY, 1e-9)));
    const zoom = Math.max(1, Math.min(18, fit));
    const xs = all.map((p) => worldX(p.lng, zoom));
    const ys = all.map((p) => worldY(p.lat, zoom));
    const originX = (Math.max(...xs) + Math.min(...xs)) / 2 - width / 2;
    const originY = (Math.max(...ys) + Math.min(...ys)) / 2 - height / 2;
    const px = (p) => [worldX(p.lng, zoom) - originX, worldY(p.lat, zoom) - originY];
    if (tiles) {
      const level = Math.floor(zoom);
      const size = TILE * 2 ** (zoom - level);
      const n = 2 ** level;
      for (let tx = Math.floor(originX / size); tx <= Math.floor((originX + width) / size); tx++) {
        for (let ty = Math.floor(originY / size); ty <= Math.floor((originY + height) / size); ty++) {
          if (ty < 0 || ty >= n) continue;
          const x = ((tx % n) + n) % n;
          const href = tiles.replace("{z}", level).replace("{x}", x).replace("{y}", ty);
          if (failed.has(href)) continue;
          const image = el("image", { href, x: tx * size - originX, y: ty * size - originY, width: size, height: size });
          // A tile that cannot load leaves the plain background, never a broken-image icon.
          image.addEventListener("error", () => { failed.add(href); image.remove(); });
          svg.appendChild(image);
        }
      }
    }
    const line = (vehicle ? [vehicle] : []).concat(points).map(px);
    if (line.length > 1) {
      svg.appendChild(el("polyline", { points: line.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" "),
        fill: "none", stroke: "var(--map-line)", "stroke-width": 5, "stroke-linejoin": "round" }));
    }
    const spots = placeMarkers(points.map(px));
    points.forEach((point, index) => {
      const [sx, sy] = px(point);
      const [x, y] = spots[index];
      if (x !== sx || y !== sy) {
        // Set apart from a stop at the same place: a line to where it is.
        svg.appendChild(el("line", { x1: sx, y1: sy, x2: x, y2: y, stroke: "var(--fg)", "stroke-width": 2 }));
        svg.appendChild(el("circle", { cx: sx, cy: sy, r: 4, fill: "var(--fg)" }));
      }
      svg.appendChild(el("circle", { class: "stop-marker", cx: x, cy: y, r: 16, fill: point.kind === "pickup" ? "var(--primary-bg)" : "var(--bg)",
        stroke: "var(--fg)", "stroke-width": 3 }));
      svg.appendChild(el("text", { x, y: y + 7, "text-anchor": "middle", "font-size": 20, "font-weight": 700,
        fill: point.kind === "pickup" ? "var(--primary-fg)" : "var(--fg)" }, String(index + 1)));
    });
    if (vehicle) {
      const [x, y] = px(vehicle);
      if (heading === null) {
        // No course known yet (it has not moved since the page opened): a square.
        svg.appendChild(el("rect", { class: "van", x: x - 10, y: y - 10, width: 20, height: 20, fill: "var(--danger-bg)", stroke: "var(--fg)", "stroke-width": 3 }));
      } else {
        // An arrow along the course it last moved (degrees clockwise from north, as the receiver gives it).
        svg.appendChild(el("polygon", { class: "van", points: "0,-16 12,12 0,5 -12,12", transform: `translate(${x.toFixed(1)} ${y.toFixed(1)}) rotate(${heading})`,
          fill: "var(--danger-bg)", stroke: "var(--fg)", "stroke-width": 3, "data-heading": heading }));
      }
    }
    if (tiles && attribution) {
      svg.appendChild(el("rect", { x: width - 12 - attribution.length * 8.5, y: height - 28, width: attribution.length * 8.5 + 8, height: 24, fill: "var(--bg)" }));
      svg.appendChild(el("text", { x: width - 8, y: height - 10, "text-anchor": "end", "font-size": 14, fill: "var(--fg)" }, attribution));
    }
    // Scale bar: about a quarter of the width, at the map's centre latitude.
    const centreLat = all.reduce((sum, p) => sum + p.lat, 0) / all.length;
    const metersPerPixel = (156543.03392 * Math.cos((centreLat * Math.PI) / 180)) / 2 ** zoom;
    const meters = niceDistance((width / 4) * metersPerPixel);
    const barPixels = meters / metersPerPixel;
    const label = meters >= 1000 ? `${meters / 1000} km` : `${meters} m`;
    svg.appendChild(el("rect", { x: 10, y: height - 34, width: barPixels + 16 + label.length * 11, height: 28, fill: "var(--bg)", stroke: "var(--fg)" }));
    svg.appendChild(el("line", { x1: 16, y1: height - 14, x2: 16 + barPixels, y2: height - 14, stroke: "var(--fg)", "stroke-width": 4 }));
    svg.appendChild(el("text", { x: 22 + barPixels, y: height - 12, "font-size": 18, fill: "var(--fg)" }, label));
  }
  return { render };
})();
