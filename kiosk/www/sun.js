// Sunrise and sunset at a position (the almanac algorithm of the US Naval Observatory, good to a minute or
// two), so the screen turns dark by itself at dusk wherever the van is.
"use strict";
const Sun = (() => {
  const rad = Math.PI / 180;
  const zenith = 90.833; // the sun's upper limb on the horizon, with refraction
  function event(dayOfYear, lat, lng, rising) {
    const lngHour = lng / 15;
    const t = dayOfYear + ((rising ? 6 : 18) - lngHour) / 24;
    const M = 0.9856 * t - 3.289;
    let L = M + 1.916 * Math.sin(M * rad) + 0.020 * Math.sin(2 * M * rad) + 282.634;
    L = ((L % 360) + 360) % 360;
    let RA = Math.atan(0.91764 * Math.tan(L * rad)) / rad;
    RA = ((RA % 360) + 360) % 360;
    RA = (RA + Math.floor(L / 90) * 90 - Math.floor(RA / 90) * 90) / 15;
    const sinDec = 0.39782 * Math.sin(L * rad);
    const cosDec = Math.cos(Math.asin(sinDec));
    const cosH = (Math.cos(zenith * rad) - sinDec * Math.sin(lat * rad)) / (cosDec * Math.cos(lat * rad));
    if (cosH > 1) return { always: "night" };
    if (cosH < -1) return { always: "day" };
    const H = (rising ? 360 - Math.acos(cosH) / rad : Math.acos(cosH) / rad) / 15;
    const T = H + RA - 0.06571 * t - 6.622;
    return { hoursUTC: ((T - lngHour) % 24 + 24) % 24 };
  }
  // Sunrise and sunset (Dates) of the local solar day that holds `now`.
  function times(now, lat, lng) {
    const solar = new Date(now.getTime() + (lng / 15) * 3600e3); // the date where the van is, near enough
    const start = Date.UTC(solar.getUTCFullYear(), 0, 0);
    const day = Math.floor((Date.UTC(solar.getUTCFullYear(), solar.getUTCMonth(), solar.getUTCDate()) - start) / 86400e3);
    const midnight = Date.UTC(solar.getUTCFullYear(), solar.getUTCMonth(), solar.getUTCDate()) - (lng / 15) * 3600e3;
    const rise = event(day, lat, lng, true);
    const set = event(day, lat, lng, false);
    if (rise.always || set.always) return { always: rise.always || set.always };
    const at = (e) => {
      // UT hours belong to the solar day: shift by a day when they fall outside it.
      let ms = Date.UTC(solar.getUTCFullYear(), solar.getUTCMonth(), solar.getUTCDate()) + e.hoursUTC * 3600e3;
      while (ms < midnight) ms += 86400e3;
      while (ms >= midnight + 86400e3) ms -= 86400e3;
      return new Date(ms);
    };
    return { sunrise: at(rise), sunset: at(set) };
  }
  function isNight(now, lat, lng) {
    const t = times(now, lat, lng);
    if (t.always) return t.always === "night";
    return now < t.sunrise || now >= t.sunset;
  }
  return { times, isNight };
})();
