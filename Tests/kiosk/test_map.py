"""The route's map: with no tile server (the default) a plain background with the stops, the line and a scale
bar, stops at the same place set apart so none hides another; with `kiosk.tiles_file` tiles from a local MBTiles
file the kiosk serves itself (nothing fetched from elsewhere); with `kiosk.tiles` set, tiles from that server behind
them, and a tile that fails is dropped, never shown broken."""
import http.server
import math
import os
import shutil
import sqlite3
import tempfile
import threading
from urllib.parse import urlparse

from conftest import open_page
from stack import Stack, free_port, parked_route, wait_for
from test_journey import png

TILE = png(256, 256)


class Tiles(http.server.BaseHTTPRequestHandler):
    """Serves a tile for even x, 404 for odd x (a tile server with holes)."""
    requests = []

    def do_GET(self):
        Tiles.requests.append(self.path)
        z, x, y = self.path.strip("/").removesuffix(".png").split("/")
        if int(x) % 2:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(TILE)))
        self.end_headers()
        self.wfile.write(TILE)

    def log_message(self, *args):
        pass


def map_state(page):
    return page.evaluate("""() => ({
        stops: document.querySelectorAll('#map svg circle.stop-marker').length,
        markers: [...document.querySelectorAll('#map svg circle.stop-marker')].map((c) => [+c.getAttribute('cx'), +c.getAttribute('cy')]),
        line: document.querySelectorAll('#map svg polyline').length,
        scale: [...document.querySelectorAll('#map svg text')].some((t) => / (m|km)$/.test(t.textContent)),
        tiles: [...document.querySelectorAll('#map svg image')].map((i) => i.getAttribute('href')),
    })""")


def test_plain_map_without_tiles(browser, parked_stack):
    page = open_page(browser, parked_stack)
    page.locator(".tab[data-tab='route']").tap()
    state = wait_for(lambda: (lambda s: s if s["stops"] >= 8 else None)(map_state(page)), what="the stops on the map")
    assert state["line"] == 1 and state["scale"] and state["tiles"] == []
    # The scenario's four drop-offs stand within 15 m of each other: every marker in sight, none on another.
    markers = state["markers"]
    for i, a in enumerate(markers):
        for b in markers[i + 1:]:
            assert math.dist(a, b) >= 32, f"markers overlap: {a} {b}"


def test_tiles_from_the_configured_server(browser):
    port = free_port()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Tiles)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stack = Stack("tiles", parked_route(), kiosk_args=["--tiles", f"http://127.0.0.1:{port}/{{z}}/{{x}}/{{y}}.png"]).start()
    try:
        stack.wait_standing()
        page = open_page(browser, stack)
        page.locator(".tab[data-tab='route']").tap()
        wait_for(lambda: map_state(page)["stops"] >= 8, what="the stops on the map")
        wait_for(lambda: any("/" in r for r in Tiles.requests), what="tile requests")
        # Every failed tile is gone; the ones served stay.
        def settled():
            tiles = map_state(page)["tiles"]
            return tiles if tiles and all(int(t.split("/")[-2]) % 2 == 0 for t in tiles) else None
        tiles = wait_for(settled, timeout=15, what="the failed tiles dropped")
        assert all(t.startswith(f"http://127.0.0.1:{port}/") for t in tiles)
        odd = [r for r in Tiles.requests if int(r.strip("/").split("/")[1]) % 2]
        assert odd, "the test needs a failing tile"
        # The map is drawn again on changes; a tile that failed is not asked for again.
        page.locator(".tab[data-tab='next']").tap()
        page.locator(".tab[data-tab='route']").tap()
        page.wait_for_timeout(1000)
        odd = [r for r in Tiles.requests if int(r.strip("/").split("/")[1]) % 2]
        assert len(odd) == len(set(odd)), odd
    finally:
        stack.stop()
        server.shutdown()


def write_mbtiles(path, lat, lng, tile):
    """A small raster MBTiles around (lat, lng): every zoom level, a few tiles each way, the same PNG in each."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE metadata (name TEXT, value TEXT)")
    db.execute("CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)")
    db.executemany("INSERT INTO metadata VALUES (?, ?)", [("name", "test"), ("format", "png"), ("attribution", "Test tiles")])
    for z in range(0, 19):
        n = 2 ** z
        x = int((lng + 180) / 360 * n)
        y = int((1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * n)
        for tx in range(max(0, x - 4), min(n, x + 5)):
            for ty in range(max(0, y - 4), min(n, y + 5)):
                db.execute("INSERT INTO tiles VALUES (?, ?, ?, ?)", (z, tx, n - 1 - ty, tile))
    db.commit()
    db.close()


def test_tiles_from_a_local_mbtiles_file(browser):
    directory = tempfile.mkdtemp(prefix="mbtiles-")
    path = os.path.join(directory, "map.mbtiles")
    write_mbtiles(path, 49.018, 12.098, TILE)
    stack = Stack("mbtiles", parked_route(), kiosk_args=["--tiles-file", path]).start()
    try:
        stack.wait_standing()
        page = open_page(browser, stack)
        requests = []
        page.on("request", lambda request: requests.append(request.url))
        page.locator(".tab[data-tab='route']").tap()
        wait_for(lambda: map_state(page)["stops"] >= 8, what="the stops on the map")
        tiles = wait_for(lambda: map_state(page)["tiles"], what="tiles on the map")
        assert all(t.startswith("tiles/") for t in tiles), tiles
        # Served by the kiosk from the file, in the XYZ scheme; a tile the file lacks is a 404 the map drops.
        z, x, y = tiles[0].split("/")[1:]
        assert page.evaluate(f"fetch('tiles/{z}/{x}/{y}').then(r => r.status + ' ' + r.headers.get('content-type'))") == "200 image/png"
        assert page.evaluate("fetch('tiles/18/0/0').then(r => r.status)") == 404
        assert page.evaluate("fetch('tiles/40/0/0').then(r => r.status)") == 404
        wait_for(lambda: all(t.startswith("tiles/") for t in map_state(page)["tiles"]) and map_state(page)["tiles"], what="the tiles drawn")
        assert page.evaluate("[...document.querySelectorAll('#map svg text')].some((t) => t.textContent === 'Test tiles')"), "the file's attribution"
        # Nothing left the unit: every request went to the kiosk itself.
        origin = urlparse(stack.url).netloc
        assert requests and all(urlparse(url).netloc == origin for url in requests), [u for u in requests if urlparse(u).netloc != origin]
    finally:
        stack.stop()
        shutil.rmtree(directory, ignore_errors=True)
