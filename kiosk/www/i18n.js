// The driver's language: one message catalog per language (i18n/<code>.json, the same keys in each, checked by
// Tests/kiosk/test_i18n.py), numbers, distances and speeds formatted for that language in the fleet's units
// (kiosk.units: they follow the road signs, not the language), right to left where it is written so. Which one:
// the driver's own choice on this screen (two taps: the language button, then the language; kept in localStorage
// for that driver), else the language of their profile at the backend, else the browser's. Before the daemon says who drives, the language last shown (so a reload does not flicker).
"use strict";

const I18n = (() => {
  // The languages there are catalogs for, as driverd-kiosk lists them (English first); each by its own name, so a
  // driver who cannot read the current one still finds theirs, and its direction, both from the browser's own data.
  let languages = [{ code: "en", name: "English", rtl: false }];
  let listed = null;
  let code = "en";
  let units = "metric";
  let messages = {};
  // The logged-in driver and the language their profile names (agent.status), once known.
  let driver = null;
  let profile = null;

  function described(code) {
    const name = new Intl.DisplayNames([code], { type: "language", languageDisplay: "standard" }).of(code) || code;
    const locale = new Intl.Locale(code);
    const info = locale.getTextInfo ? locale.getTextInfo() : locale.textInfo;
    return { code, name: name.charAt(0).toLocaleUpperCase(code) + name.slice(1), rtl: Boolean(info && info.direction === "rtl") };
  }

  // Once a page's life: the list cannot change under a running kiosk (a package update restarts it).
  async function list() {
    listed = listed || fetch("languages", { cache: "no-cache" }).then((response) => {
      if (!response.ok) throw new Error(`no language list (${response.status})`);
      return response.json();
    }).then((answer) => { languages = answer.languages.map(described); });
    return listed.catch((error) => { listed = null; throw error; });
  }

  // A catalog's code for a BCP 47 tag, or null: the region's own where there is one ("pt-BR"), else the language's
  // ("pt-PT" and "es-MX" are Portuguese and Spanish).
  function supported(tag) {
    if (typeof tag !== "string") return null;
    const regional = languages.find((language) => language.code.toLowerCase() === tag.toLowerCase());
    const base = tag.toLowerCase().split("-")[0];
    return regional ? regional.code : languages.some((language) => language.code === base) ? base : null;
  }

  function chosen() {
    const first = driver ? [localStorage.getItem(`kiosk-language:${driver}`), profile] : [localStorage.getItem("kiosk-language")];
    for (const tag of [...first, navigator.language]) if (supported(tag)) return supported(tag);
    return "en";
  }

  // Loads the chosen language, layered by driverd-kiosk (a region's words over its language's over English's, so a
  // missing text is English, never a key), and applies it to the page's fixed text: elements with data-i18n (their
  // text) and data-i18n-label (their aria-label).
  async function load(language) {
    await list();
    const next = language || chosen();
    const response = await fetch(`catalog?code=${encodeURIComponent(next)}`, { cache: "no-cache" });
    if (!response.ok) throw new Error(`no catalog for ${next}`);
    messages = await response.json();
    code = next;
    const entry = languages.find((candidate) => candidate.code === code);
    localStorage.setItem("kiosk-language", code);
    document.documentElement.lang = code;
    document.documentElement.dir = entry && entry.rtl ? "rtl" : "ltr";
    for (const element of document.querySelectorAll("[data-i18n]")) element.textContent = t(element.dataset.i18n);
    for (const element of document.querySelectorAll("[data-i18n-label]")) element.setAttribute("aria-label", t(element.dataset.i18nLabel));
  }

  function choose(language) {
    if (driver) localStorage.setItem(`kiosk-language:${driver}`, language);
    return load(language);
  }

  // The language shown with the region the driver's profile (else the browser) names for it: `es-MX` while Spanish
  // is shown to a driver whose profile says so, `pt-BR` while Brazilian Portuguese is; the voice takes that region's
  // accent.
  function tag() {
    const regional = [profile, navigator.language].find((candidate) => supported(candidate) === code && /^[a-z]{2}-([a-z]{2}|\d{3})$/i.test(candidate));
    return regional || code;
  }

  // The driver logged in and their profile's language; true when that changes the language to show.
  function follow(driverId, profileLanguage) {
    driver = driverId || null;
    profile = profileLanguage || null;
    return chosen() !== code;
  }

  // The message for `key` with {placeholders} filled in.
  function t(key, params) {
    const text = messages[key] !== undefined ? messages[key] : key;
    return params ? text.replace(/\{(\w+)\}/g, (whole, name) => (params[name] !== undefined ? String(params[name]) : whole)) : text;
  }

  // Intl's formatters are slow to make (each reads its locale's data) and quick to use: one per language and options,
  // kept, so a list of fifty messages, each with its time, renders without making fifty.
  const formatters = new Map();
  function format(Kind, options, value) {
    const key = `${code} ${Kind.name} ${JSON.stringify(options)}`;
    if (!formatters.has(key)) formatters.set(key, new Kind(code, options));
    return formatters.get(key).format(value);
  }
  const number = (value, digits) => format(Intl.NumberFormat, { maximumFractionDigits: digits, minimumFractionDigits: digits }, value);
  const unit = (value, name, digits) => format(Intl.NumberFormat, { style: "unit", unit: name, unitDisplay: "short", maximumFractionDigits: digits }, value);
  const METERS_PER_MILE = 1609.344;

  // Near distances by the step a driver reads (GPS ±4 m, 350 m), not by the metre the receiver guesses at.
  function near(value, name, small, large) {
    const step = value < 100 ? small : large;
    return unit(Math.round(value / step) * step, name, 0);
  }

  // 4 m, 350 m, 1,2 km: a tenth of a kilometre from 1 km on. In miles (0.3 mi) from a tenth of a mile on; nearer,
  // yards in the UK, feet in the US, as their road signs and navigators count.
  function distance(meters) {
    if (units === "metric") return meters >= 1000 ? unit(meters / 1000, "kilometer", 1) : near(meters, "meter", 1, 10);
    if (meters >= METERS_PER_MILE / 10) return unit(meters / METERS_PER_MILE, "mile", 1);
    return units === "uk" ? near(meters / 0.9144, "yard", 1, 10) : near(meters / 0.3048, "foot", 5, 50);
  }

  function speed(metersPerSecond) {
    return units === "metric" ? unit(Math.round(metersPerSecond * 3.6), "kilometer-per-hour", 0)
      : unit(Math.round((metersPerSecond * 3600) / METERS_PER_MILE), "mile-per-hour", 0);
  }

  return {
    load, choose, follow, t,
    get LANGUAGES() { return languages; },
    get code() { return code; },
    get tag() { return tag(); },
    // The fleet's units (kiosk.describe): metric, uk or us; anything else is metric.
    set units(name) { units = name === "uk" || name === "us" ? name : "metric"; },
    distance, speed,
    minutes: (minutes) => unit(minutes, "minute", 0),
    // A clock time (Unix seconds) as the language writes one: 14:05, 2:05 PM; "" for none.
    time: (seconds) => (Number.isFinite(seconds) ? format(Intl.DateTimeFormat, { hour: "numeric", minute: "2-digit" }, new Date(seconds * 1000)) : ""),
    percent: (value) => format(Intl.NumberFormat, { style: "percent", maximumFractionDigits: 0 }, value / 100),
    number,
  };
})();
