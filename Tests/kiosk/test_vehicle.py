"""The vehicle on the screen: the status strip shows the check-engine light and the fuel when the car's OBD-II
adapter tells them, and follows them as they change (vehicle.changed), with no chip when nothing is known."""
from audit import audit
from conftest import open_page
from stack import Stack, parked_route, wait_for


def test_strip_shows_check_engine_and_fuel(browser):
    stack = Stack("vehicle", parked_route(), car={"rpm": 800, "speed_kmh": 0, "voltage": 14.0, "fuel_pct": 62}).start()
    try:
        stack.wait_standing()
        page = open_page(browser, stack)
        wait_for(lambda: page.is_visible("#chip-fuel"), what="the fuel chip")
        assert page.text_content("#chip-fuel") == "Fuel 62%"
        assert not page.is_visible("#chip-engine")
        # The engine unit stores a misfire: the strip says so without a reload.
        stack.set_car({"rpm": 800, "speed_kmh": 0, "voltage": 14.0, "fuel_pct": 61, "stored": ["P0301"]})
        wait_for(lambda: page.is_visible("#chip-engine"), timeout=60, what="the check-engine chip")
        assert page.text_content("#chip-engine") == "Check engine"
        audit(page, "vehicle-check-engine")
    finally:
        stack.stop()


def test_no_adapter_no_chips(browser, parked_stack):
    page = open_page(browser, parked_stack)
    wait_for(lambda: page.text_content("#chip-link") != "…", what="the strip")
    assert not page.is_visible("#chip-fuel") and not page.is_visible("#chip-engine")
