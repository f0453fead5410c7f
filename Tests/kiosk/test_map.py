"""The route's map: with no tile server (the default) a plain background with the stops, the line and a scale
bar; with `kiosk.tiles` set, tiles from that server behind them, and a tile that fails is dropped, never shown
broken."""
import http.server
import threading

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
        stops: document.querySelectorAll('#map svg circle').length,
        line: document.querySelectorAll('#map svg polyline').length,
        scale: [...document.querySelectorAll('#map svg text')].some((t) => / (m|km)$/.test(t.textContent)),
        tiles: [...document.querySelectorAll('#map svg image')].map((i) => i.getAttribute('href')),
    })""")


def test_plain_map_without_tiles(browser, parked_stack):
    page = open_page(browser, parked_stack)
    page.locator(".tab[data-tab='route']").tap()
    state = wait_for(lambda: (lambda s: s if s["stops"] >= 8 else None)(map_state(page)), what="the stops on the map")
    assert state["line"] == 1 and state["scale"] and state["tiles"] == []


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
