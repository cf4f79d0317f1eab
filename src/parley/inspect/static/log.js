// The wire log and the push notifications, fed live by the backend (server-sent events).
import {$, clock, el, pretty, short, state} from "./dom.js";

export function resetLog() {
  if (state.feed) state.feed.close();
  state.wire = new Map();
  $("wire-view").replaceChildren();
  for (const old of document.querySelectorAll(".push")) old.remove();
  $("push-hint").hidden = false;
  $("push-count").textContent = $("wire-count").textContent = "";
}

export function follow(connectionId) {
  state.feed = new EventSource(`/api/feed/${connectionId}`);
  state.feed.onmessage = (message) => {
    const entry = JSON.parse(message.data);
    if (state.wire.has(entry.n)) return;  // a reopened feed starts again from the first
    if (entry.kind === "push") showPush(entry);
    else showWire(entry);
  };
}

export const ARROWS = {request: "→", response: "←", body: "←", event: "⇠", end: "■", failure: "✗"};

export function showWire(entry) {
  const summary = el("summary", {}, clock(entry.time), el("span", {class: "dir"}, ARROWS[entry.kind] || "·"), wireTitle(entry));
  const node = el("details", {class: `wire ${entry.kind}`, "data-n": entry.n}, summary);
  if (entry.headers) node.append(el("pre", {class: "headers"}, Object.entries(entry.headers).map(([k, v]) => `${k}: ${v}`).join("\n")));
  if (entry.body) node.append(el("pre", {class: "body"}, jsonOrText(entry.body)));
  if (entry.error) node.append(el("pre", {class: "problem"}, entry.error));
  if (entry.curl) {
    node.append(el("button", {type: "button", class: "copy-curl", onclick: () => copy(entry.curl)}, "Copy as curl"),
      el("pre", {class: "curl"}, entry.curl));
  }
  state.wire.set(entry.n, node);
  $("wire-view").append(node);
  $("wire-count").textContent = `(${$("wire-view").children.length})`;
}

export function wireTitle(entry) {
  if (entry.kind === "request") return `${entry.binding === "grpc" ? "gRPC" : entry.method} ${entry.binding === "grpc" ? entry.method : entry.url}`;
  if (entry.kind === "response") return `${entry.status} (to #${entry.of})`;
  if (entry.kind === "body") return `answer of #${entry.of}`;
  if (entry.kind === "event") return `event of #${entry.of}`;
  if (entry.kind === "end") return `end of #${entry.of}${entry.note ? ` (${entry.note})` : ""}`;
  return `#${entry.of}: ${entry.error}`;
}

export function jsonOrText(text) {
  try { return pretty(JSON.parse(text)); } catch { return text; }
}

export async function copy(text) {
  try { await navigator.clipboard.writeText(text); } catch { /* the command stays shown below the button */ }
}

// -- push -------------------------------------------------------------------------------

export function showPush(entry) {
  state.wire.set(entry.n, null);
  $("push-hint").hidden = true;
  const count = document.querySelectorAll(".push").length + 1;
  $("push-count").textContent = `(${count})`;
  if (!entry.verified) {
    $("push-view").append(el("div", {class: "push refused"}, clock(entry.time),
      el("span", {class: "badge bad"}, `refused ${entry.status}`), entry.reason, el("pre", {class: "json"}, jsonOrText(entry.body))));
    return;
  }
  const task = entry.task;
  $("push-view").append(el("div", {class: "push"}, clock(entry.time),
    el("span", {class: "badge ok"}, "signature verified with the agent's keys"),
    `task ${short(task.id)} `, el("strong", {class: `state-${task.status.state}`}, task.status.state),
    el("details", {}, el("summary", {}, "the task as notified"), el("pre", {class: "json"}, pretty(task))),
    el("details", {}, el("summary", {}, "the JWT's claims"), el("pre", {class: "json"}, pretty(entry.claims)))));
}
