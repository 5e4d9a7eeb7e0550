// Small values kept in localStorage across reloads, and the device's random id.

import { STORAGE_PREFIX } from "./constants.js";

/** Reads `key` (no `value`), removes it (`value` null) or writes it. Storage may be off (a locked-down WebView):
 * capture goes on without it. */
export function stored(key, value) {
  try {
    if (value === undefined) return localStorage.getItem(STORAGE_PREFIX + key);
    if (value === null) localStorage.removeItem(STORAGE_PREFIX + key);
    else localStorage.setItem(STORAGE_PREFIX + key, value);
  } catch { /* no storage: nothing kept */ }
  return value;
}

/** A random UUID (crypto.randomUUID needs a secure context; getRandomValues does not). */
export const randomId = () => (crypto.randomUUID ? crypto.randomUUID()
  : [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join(""));
