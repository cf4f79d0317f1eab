// What every part of the page shares: the state of the connection and small DOM helpers.

export const TERMINAL = new Set(["completed", "canceled", "failed", "rejected"]);
export const INTERRUPTED = new Set(["input-required", "auth-required"]);

export const state = {
  conn: null,        // connection id given by the backend
  card: null,        // the card as parley read it
  feed: null,        // EventSource of the wire log and push notifications
  contextId: null,   // the conversation's context
  taskId: null,      // the task of the conversation's latest turn
  tasks: new Map(),  // task id -> {contextId, state, lastSeq}
  running: null,     // AbortController of the stream being read
  wire: new Map(),   // wire entry number -> its element
};

export const $ = (id) => document.getElementById(id);

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clock(seconds) {
  const time = new Date(seconds * 1000);
  return el("time", {datetime: time.toISOString()}, time.toISOString().slice(11, 23));
}

export const pretty = (value) => JSON.stringify(value, null, 2);
export const short = (id) => (id || "").slice(0, 8);

export async function api(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok && !answer.error) answer.error = {type: "HTTP", message: `HTTP ${response.status}`};
  return answer;
}

export function errorBox(error) {
  return el("div", {class: "bubble error"},
    el("div", {class: "who"}, "error"),
    el("div", {class: "error-title"}, el("strong", {}, error.type || "Error"), error.code !== undefined ? ` (code ${error.code})` : ""),
    el("div", {class: "error-message"}, error.message),
    error.data !== undefined ? el("pre", {class: "json"}, pretty(error.data)) : null);
}
