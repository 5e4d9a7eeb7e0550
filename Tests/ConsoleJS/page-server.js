// A stand-in for muevald's GET /api/sessions/ID/page (docs/CONSOLE.md, "The page replayed"), answering from a list of
// records as the server's contract says, with a log of what was asked. Not a test file.

import { assetRefs } from "../../Sources/ConsoleServer/Resources/page-records.js";

export const PATH = "/api/sessions/7/page";

/** `records`: in order, with ids ascending; `assets`: {sha: css}; `cap`: records per answer before `more`. */
export function pageServer(records, { assets = {}, cap = Infinity, remoteAssets = "all" } = {}) {
  const log = [];
  const answer = (list, more) => {
    const named = {};
    for (const record of list) for (const sha of assetRefs(record)) if (assets[sha] !== undefined) named[sha] = assets[sha];
    return { records: structuredClone(list), assets: named, more, remoteAssets };
  };
  const upTo = (list, until) => {
    const within = list.filter((r) => r.t <= until);
    return within.length > cap ? answer(within.slice(0, cap), true) : answer(within, false);
  };
  async function fetchJSON(path) {
    const url = new URL(path, "http://console");
    assert(url.pathname === PATH, `asked for ${url.pathname}`);
    const query = Object.fromEntries(url.searchParams);
    log.push(query);
    await Promise.resolve();
    const until = Number(query.until);
    if (query.after !== undefined) return upTo(records.filter((r) => r.id > Number(query.after)), until);
    const at = Number(query.at);
    const snapshots = records.filter((r) => r.class === "DOMSnapshot");
    if (!snapshots.length) return answer([], false);
    const start = snapshots.filter((r) => r.t <= at).at(-1) ?? snapshots[0];
    return upTo(records.slice(records.indexOf(start)), until);
  }
  return { fetchJSON, log };
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}
