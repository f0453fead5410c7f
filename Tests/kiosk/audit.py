"""Checks every screen of the kiosk must pass: axe-core finds no serious or critical violation, every tappable
element is at least 48x48 CSS px, every visible text has at least 7:1 contrast against what it sits on; and
`check_in_view`: every action of the view inside the screen, no text cut off, no word broken."""
from axe_playwright_python.sync_playwright import Axe

# The head units' screens: 7" and 10" landscape, and a portrait tablet.
SIZES = [(800, 480), (1024, 600), (600, 1024)]

# Contrast of every visible text against the background it sits on (WCAG 2 relative luminance).
CONTRAST = """() => {
  const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(",").map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const background = (el) => { for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
    if (c && c.a > 0.5) return c; } return {r: 255, g: 255, b: 255, a: 1}; };
  const low = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim()) continue;
    const el = node.parentElement;
    if (el.closest("svg")) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || !el.checkVisibility()) continue;
    const fg = parse(getComputedStyle(el).color), bg = background(el);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 7) low.push(`${el.tagName}#${el.id} "${node.textContent.trim().slice(0, 30)}" ${ratio.toFixed(2)}`);
  }
  return low;
}"""

TAPPABLE = """() => [...document.querySelectorAll("button, a[href], input:not([type=hidden]), select, summary, [role=button]")]
  .filter((el) => el.checkVisibility())
  .map((el) => { const b = el.getBoundingClientRect(); return {what: `${el.tagName}#${el.id} ${el.textContent.trim().slice(0, 20)}`, w: b.width, h: b.height}; })
  .filter((b) => b.w < 48 || b.h < 48)"""


_axe = Axe()


def audit(page, name):
    violations = [v for v in _axe.run(page).response["violations"] if v["impact"] in ("serious", "critical")]
    assert not violations, f"{name}: " + "; ".join(f"{v['id']}: {v['help']} ({len(v['nodes'])})" for v in violations)
    small = page.evaluate(TAPPABLE)
    assert not small, f"{name}: tappable elements under 48x48: {small}"
    low = page.evaluate(CONTRAST)
    assert not low, f"{name}: text under 7:1: {low}"


# Every action of the current view: inside the screen without scrolling, its text neither cut off nor a word of it
# broken across lines; the page never wider than the screen.
IN_VIEW = """() => {
  const W = innerWidth, H = innerHeight, out = [];
  // A word on two lines (a button too narrow for "Português"): its characters' boxes on more than one line.
  const brokenWord = (el) => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.textContent.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        if (new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1) return match[0];
      }
    }
    return null;
  };
  const actions = document.querySelectorAll(
    "#strip button, #tabs button, #primary-button, #more > summary, .keys button, #drive-primary, #messages li:first-child button, #photo-pod button, "
    + "#reconnecting button, #more .choices > button, #more .choices > a, #outside-reasons button, #language-list button");
  for (const el of actions) {
    if (!el.checkVisibility()) continue;
    const b = el.getBoundingClientRect(), name = el.id || el.innerText.trim().slice(0, 24);
    if (b.left < -0.5 || b.top < -0.5 || b.right > W + 0.5 || b.bottom > H + 0.5)
      out.push(`${name} at ${Math.round(b.left)},${Math.round(b.top)}-${Math.round(b.right)},${Math.round(b.bottom)}`);
    if (el.scrollWidth > el.clientWidth + 1) out.push(`${name}: text cut off`);
    const word = brokenWord(el);
    if (word) out.push(`${name}: "${word}" broken across lines`);
  }
  for (const el of document.querySelectorAll(".chip, #primary-reason, #next-heading")) {
    if (el.checkVisibility() && el.scrollWidth > el.clientWidth + 1) out.push(`${el.id}: text cut off`);
  }
  if (document.documentElement.scrollWidth > W + 0.5) out.push(`the page is ${document.documentElement.scrollWidth} px wide`);
  return out;
}"""


def check_in_view(page, name):
    problems = page.evaluate(IN_VIEW)
    assert not problems, f"{name}: {problems}"
