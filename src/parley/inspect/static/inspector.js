// parley inspect: the page. It talks only to its own backend (/api/...), which talks to
// the agent through parley's client; nothing here is fetched from anywhere else.
"use strict";

const TERMINAL = new Set(["completed", "canceled", "failed", "rejected"]);
const INTERRUPTED = new Set(["input-required", "auth-required"]);

const state = {
  conn: null,        // connection id given by the backend
  card: null,        // the card as parley read it
  feed: null,        // EventSource of the wire log and push notifications
  contextId: null,   // the conversation's context
  taskId: null,      // the task of the conversation's latest turn
  tasks: new Map(),  // task id -> {contextId, state, lastSeq}
  running: null,     // AbortController of the stream being read
  wire: new Map(),   // wire entry number -> its element
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
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

function clock(seconds) {
  const time = new Date(seconds * 1000);
  return el("time", {datetime: time.toISOString()}, time.toISOString().slice(11, 23));
}

const pretty = (value) => JSON.stringify(value, null, 2);
const short = (id) => (id || "").slice(0, 8);

async function api(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok && !answer.error) answer.error = {type: "HTTP", message: `HTTP ${response.status}`};
  return answer;
}

// -- tabs -------------------------------------------------------------------------------

for (const nav of document.querySelectorAll("nav.tabs")) {
  nav.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-view]");
    if (!button) return;
    for (const other of nav.querySelectorAll("button")) other.classList.toggle("active", other === button);
    for (const view of $(nav.dataset.for).children) view.classList.toggle("active", view.id === button.dataset.view);
  });
}

// -- connecting -------------------------------------------------------------------------

$("connect").addEventListener("submit", (event) => {
  event.preventDefault();
  connect($("agent-url").value.trim(), $("fetch-version").value);
});

async function connect(url, fetchVersion, wanted) {
  $("connection-status").textContent = "reading the card…";
  if (state.feed) state.feed.close();
  if (state.running) state.running.abort();
  Object.assign(state, {contextId: null, taskId: null, tasks: new Map(), wire: new Map()});
  for (const id of ["wire-view", "timeline-view", "messages"]) $(id).replaceChildren();
  for (const old of document.querySelectorAll(".push")) old.remove();
  $("push-hint").hidden = false;
  $("push-count").textContent = $("wire-count").textContent = "";
  updateTaskLine();
  const answer = await api("/api/card", {url, protocol: fetchVersion || null, previous: state.conn});
  state.conn = null;
  if (answer.id) follow(answer.id);
  if (answer.error) {
    $("connection-status").textContent = "no card";
    $("card-view").replaceChildren(errorBox(answer.error));
    $("session").hidden = true;
    return;
  }
  state.conn = answer.id;
  state.card = answer.card;
  $("connection-status").textContent = `card of ${answer.card.name}`;
  renderCard(answer);
  renderSession(answer, wanted || {});
  history.replaceState(null, "", `/?agent=${encodeURIComponent(url)}`);
  await applySession();
  runChecks(answer.id, answer.advice || []);
}

function follow(connectionId) {
  state.feed = new EventSource(`/api/feed/${connectionId}`);
  state.feed.onmessage = (message) => {
    const entry = JSON.parse(message.data);
    if (state.wire.has(entry.n)) return;  // a reopened feed starts again from the first
    if (entry.kind === "push") showPush(entry);
    else showWire(entry);
  };
}

function renderCard(answer) {
  const card = answer.card;
  const signature = answer.signature || {};
  const signed = {
    verified: ["ok", `signature verified (key ${signature.keyId})`],
    unsigned: ["muted", "not signed"],
    invalid: ["bad", `signature does not verify: ${signature.reason}`],
  }[signature.status] || ["muted", `signature ${signature.status || "not checked"}`];
  const capabilities = card.capabilities || {};
  const view = el("div", {},
    el("h2", {id: "card-name"}, card.name, " ", el("span", {class: "hint"}, card.version)),
    el("p", {}, card.description),
    el("p", {},
      el("span", {id: "signature", class: `badge ${signed[0]}`}, signed[1]),
      ...["streaming", "pushNotifications", "stateTransitionHistory"].map((name) =>
        el("span", {class: `badge ${capabilities[name] ? "ok" : "muted"}`}, `${capabilities[name] ? "" : "no "}${name}`))),
    card.provider ? el("p", {class: "hint"}, `by ${card.provider.organization}`) : null,
    el("h3", {}, "Interfaces"),
    el("table", {id: "interfaces"},
      el("tr", {}, el("th", {}, "version"), el("th", {}, "binding"), el("th", {}, "URL")),
      answer.options.map((o) => el("tr", {}, el("td", {}, o.protocol), el("td", {}, o.transport), el("td", {}, o.url)))),
    el("h3", {}, "Skills"),
    el("div", {id: "skills"}, (card.skills || []).map(renderSkill)),
  );
  $("card-view").replaceChildren(view);
  $("raw-view").textContent = pretty(answer.raw ?? answer.card);
  $("checks-count").textContent = "…";
  $("checks-view").replaceChildren(el("p", {class: "hint"}, "Running the card checks of parley check…"),
    adviceList(answer.advice || []));
}

function adviceList(advice) {
  return advice.length
    ? el("div", {}, el("h3", {}, "Advice"), el("ul", {}, advice.map((a) => el("li", {class: "check-warning"}, a.text))))
    : null;
}

const VERDICT = {pass: ["ok", "pass"], fail: ["bad", "FAIL"], skip: ["muted", "skip"]};

async function runChecks(connectionId, advice) {
  const report = await api("/api/checks", {id: connectionId});
  if (connectionId !== state.conn) return;  // connected elsewhere meanwhile
  if (report.error) {
    $("checks-count").textContent = "";
    $("checks-view").replaceChildren(errorBox(report.error), adviceList(advice));
    return;
  }
  const failed = report.results.filter((r) => r.status === "fail");
  $("checks-count").textContent = failed.length ? `(${failed.length} failed)` : "✓";
  $("checks-view").replaceChildren(
    el("p", {}, failed.length ? `${failed.length} of ${report.results.length} checks failed.` : `The card passes every check (${report.results.length} run).`),
    el("table", {id: "check-results"}, report.results.map((r) => el("tr", {class: `check ${r.status}`},
      el("td", {}, el("span", {class: `badge ${VERDICT[r.status][0]}`}, VERDICT[r.status][1])),
      el("td", {}, el("strong", {}, r.id), ` ${r.level} · ${r.section}${r.version ? ` · ${r.version} ${r.binding || ""}` : ""}`,
        el("div", {}, r.title), r.reason ? el("div", {class: r.status === "fail" ? "problem" : "hint"}, r.reason) : null,
        r.evidence.length ? el("details", {}, el("summary", {}, "evidence"), el("pre", {class: "json"}, pretty(r.evidence))) : null)))),
    adviceList(advice));
}

function renderSkill(skill) {
  return el("div", {class: "skill"},
    el("strong", {}, skill.name), " ", el("span", {class: "hint"}, (skill.tags || []).join(", ")),
    el("div", {}, skill.description),
    el("div", {}, (skill.examples || []).map((text) =>
      el("span", {class: "example", title: "put it in the message box", onclick: () => { $("message").value = text; $("message").focus(); }}, text))));
}

function renderSession(answer, wanted) {
  const select = $("interface");
  select.replaceChildren(...answer.options.map((o, index) =>
    el("option", {value: index, selected: o.protocol === wanted.version && o.transport === wanted.binding},
      `A2A ${o.protocol} · ${o.transport} · ${o.url}`)));
  select.options.length || select.append(el("option", {value: ""}, "no interface parley speaks"));
  state.options = answer.options;
  $("credentials").replaceChildren(...(answer.schemes || []).map(credentialInput));
  $("streaming").checked = Boolean((answer.card.capabilities || {}).streaming);
  $("streaming").disabled = !$("streaming").checked;
  $("push").disabled = !(answer.card.capabilities || {}).pushNotifications;
  $("session").hidden = false;
}

function credentialInput(scheme) {
  const label = `${scheme.name}: ${scheme.label}${scheme.required ? " (required)" : ""}`;
  if (scheme.kind === "basic") {
    return el("label", {}, label,
      el("input", {type: "text", "data-scheme": scheme.name, "data-part": "user", placeholder: "user"}),
      el("input", {type: "password", "data-scheme": scheme.name, "data-part": "password", placeholder: "password"}));
  }
  return el("label", {}, label,
    el("input", {type: "password", "data-scheme": scheme.name, disabled: scheme.kind === "mtls"}));
}

function credentials() {
  const found = {};
  for (const input of $("credentials").querySelectorAll("input[data-scheme]")) {
    const name = input.dataset.scheme;
    if (input.dataset.part === "user") found[name] = `${input.value}:${found[name] || ""}`;
    else if (input.dataset.part === "password") found[name] = `${found[name] || ""}${input.value}`;
    else if (input.value) found[name] = input.value;
  }
  for (const [name, value] of Object.entries(found)) if (value === ":") delete found[name];
  return found;
}

$("session").addEventListener("submit", (event) => { event.preventDefault(); applySession(); });

async function applySession() {
  const option = state.options[Number($("interface").value)] || {};
  const answer = await api("/api/connect", {
    id: state.conn, protocol: option.protocol, transport: option.transport, credentials: credentials(),
  });
  if (answer.error) {
    $("session-status").textContent = `${answer.error.type}: ${answer.error.message}`;
    enableChat(false);
    return;
  }
  const face = answer.interface;
  $("session-status").textContent = `talking A2A ${face.protocol} over ${face.transport}`;
  $("connection-status").textContent = `connected to ${state.card.name} (A2A ${face.protocol}, ${face.transport})`;
  enableChat(true);
}

function enableChat(on) {
  for (const id of ["message", "file", "send"]) $(id).disabled = !on;
  updateButtons();
}

// -- chat -------------------------------------------------------------------------------

$("message").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("composer").requestSubmit(); }
});
$("composer").addEventListener("submit", (event) => { event.preventDefault(); send(); });
$("cancel").addEventListener("click", cancel);
$("detach").addEventListener("click", detach);
$("resume").addEventListener("click", resume);
$("new-conversation").addEventListener("click", () => {
  state.contextId = null; state.taskId = null;
  $("messages").append(el("div", {class: "hint"}, "— a new conversation —"));
  updateButtons();
});

async function send() {
  const text = $("message").value;
  const files = await Promise.all([...$("file").files].map(readFile));
  if (!text.trim() && !files.length) return;
  const task = state.tasks.get(state.taskId);
  const continuing = task && INTERRUPTED.has(task.state);
  bubble("user", "you", [text, ...files.map((f) => `📎 ${f.name}`)].filter(Boolean).join("\n"));
  $("message").value = "";
  $("file").value = "";
  const body = {
    id: state.conn, text, files,
    contextId: state.contextId,
    taskId: continuing ? state.taskId : null,
    stream: $("streaming").checked,
    push: $("push").checked,
  };
  await read("/api/send", body);
}

function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve({name: file.name, mimeType: file.type || "application/octet-stream", bytes: reader.result.split(",", 2)[1]});
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

// Reads the backend's answer: one JSON object a line, each handled as it arrives.
async function read(path, body) {
  const controller = new AbortController();
  state.running = controller;
  updateButtons();
  try {
    const response = await fetch(path, {
      method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body), signal: controller.signal,
    });
    if (!response.ok) {
      const answer = await response.json().catch(() => ({error: {type: "HTTP", message: `HTTP ${response.status}`}}));
      showError(answer.error);
      return;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, {stream: true});
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.trim()) handle(JSON.parse(line));
      }
    }
  } catch (error) {
    if (error.name === "AbortError") {
      $("messages").append(el("div", {class: "hint dropped"}, "— stream dropped; the task runs on: resume it to read on —"));
    } else {
      showError({type: "network", message: String(error)});
    }
  } finally {
    if (state.running === controller) state.running = null;
    updateButtons();
  }
}

function handle(line) {
  if (line.type === "error") showError(line.error);
  else if (line.type === "event") showEvent(line.event, line.time, line.seq);
}

function showEvent(event, time, seq) {
  const taskId = event.kind === "task" ? event.id : event.taskId;
  if (event.contextId) state.contextId = event.contextId;
  if (taskId) {
    const task = track(taskId, event.contextId);
    if (seq !== null && seq !== undefined) task.lastSeq = seq;
    state.taskId = taskId;
  }
  if (event.kind === "message") {
    bubble("agent", "agent (message)", partsView(event.parts));
    step(taskId || "(no task)", event.contextId, time, "message", textOf(event.parts));
  } else if (event.kind === "task") {
    showStatus(event.id, event.status, time, false);
    for (const artifact of event.artifacts || []) showArtifact(event.id, artifact, false, time);
  } else if (event.kind === "status-update") {
    showStatus(event.taskId, event.status, time, event.final);
  } else if (event.kind === "artifact-update") {
    showArtifact(event.taskId, event.artifact, event.append, time, event.lastChunk);
  }
  updateTaskLine();
}

function track(taskId, contextId) {
  if (!state.tasks.has(taskId)) state.tasks.set(taskId, {contextId, state: null, lastSeq: null, artifacts: new Map()});
  return state.tasks.get(taskId);
}

function showStatus(taskId, status, time, final) {
  const task = track(taskId);
  const changed = task.state !== status.state;
  task.state = status.state;
  const said = status.message ? textOf(status.message.parts) : "";
  if (changed || said) step(taskId, task.contextId, time, status.state + (final ? " (final)" : ""), said);
  if (status.message && (changed || said)) bubble("agent", `agent · ${status.state}`, partsView(status.message.parts));
  else if (changed && TERMINAL.has(status.state)) $("messages").append(el("div", {class: `hint state-${status.state}`}, `task ${short(taskId)} ${status.state}`));
}

function showArtifact(taskId, artifact, append, time, lastChunk) {
  const task = track(taskId);
  const key = artifact.artifactId;
  let box = task.artifacts.get(key);
  if (!box || !append) {
    const body = el("div", {class: "parts"});
    const fresh = el("div", {class: "artifact", "data-artifact": key},
      el("div", {class: "name"}, artifact.name || key, artifact.description ? el("span", {class: "hint"}, ` — ${artifact.description}`) : null),
      body);
    if (box) box.node.replaceWith(fresh);
    else bubble("agent", `agent · artifact of task ${short(taskId)}`, fresh);
    box = {node: fresh, body};
    task.artifacts.set(key, box);
  }
  appendParts(box.body, artifact.parts);
  step(taskId, task.contextId, time, append ? "artifact chunk" : "artifact", `${artifact.name || key}${lastChunk ? " (last chunk)" : ""}`);
}

function appendParts(body, parts) {
  for (const part of parts || []) {
    const last = body.lastElementChild;
    if (part.kind === "text" && last && last.classList.contains("text")) last.textContent += part.text;
    else body.append(partView(part));
  }
}

function partsView(parts) {
  const body = el("div", {class: "parts"});
  appendParts(body, parts);
  return body;
}

function partView(part) {
  if (part.kind === "text") return el("pre", {class: "text"}, part.text);
  if (part.kind === "file") return fileView(part.file);
  if (part.kind === "data") return el("div", {class: "data"}, tree("data", part.data, true));
  return el("pre", {class: "json"}, pretty(part));
}

function fileView(file) {
  const name = file.name || "file";
  if (file.uri) return el("a", {href: file.uri, target: "_blank", rel: "noopener", class: "file"}, `⬇ ${name} (${file.uri})`);
  const bytes = Uint8Array.from(atob(file.bytes), (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bytes], {type: file.mimeType || "application/octet-stream"}));
  return el("a", {href: url, download: name, class: "file"}, `⬇ ${name} (${bytes.length} bytes, ${file.mimeType || "no type"})`);
}

function tree(name, value, open) {
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    return el("details", {class: "tree", open},
      el("summary", {}, `${name} ${Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`}`),
      entries.map(([key, inner]) => tree(key, inner, false)));
  }
  return el("div", {class: "leaf"}, `${name}: ${JSON.stringify(value)}`);
}

const textOf = (parts) => (parts || []).filter((p) => p.kind === "text").map((p) => p.text).join("");

function bubble(who, label, content) {
  const node = el("div", {class: `bubble ${who}`}, el("div", {class: "who"}, label),
    typeof content === "string" ? el("pre", {class: "text"}, content) : content);
  $("messages").append(node);
  node.scrollIntoView({block: "end"});
  return node;
}

function errorBox(error) {
  return el("div", {class: "bubble error"},
    el("div", {class: "who"}, "error"),
    el("div", {class: "error-title"}, el("strong", {}, error.type || "Error"), error.code !== undefined ? ` (code ${error.code})` : ""),
    el("div", {class: "error-message"}, error.message),
    error.data !== undefined ? el("pre", {class: "json"}, pretty(error.data)) : null);
}

function showError(error) {
  const node = errorBox(error);
  $("messages").append(node);
  node.scrollIntoView({block: "end"});
}

async function cancel() {
  const taskId = state.taskId;
  const answer = await api("/api/cancel", {id: state.conn, taskId});
  if (answer.error) showError(answer.error);
  else showEvent(answer.task, answer.time, null);
}

function detach() {
  if (state.running) state.running.abort();
}

async function resume() {
  const task = state.tasks.get(state.taskId);
  await read("/api/resubscribe", {id: state.conn, taskId: state.taskId, lastEventId: task ? task.lastSeq : null});
}

function updateButtons() {
  const task = state.tasks.get(state.taskId);
  const open = Boolean(task && task.state && !TERMINAL.has(task.state));
  const running = open && !INTERRUPTED.has(task.state);  // events still to come
  $("cancel").disabled = !state.conn || !open;
  $("detach").disabled = !state.running;
  $("resume").disabled = Boolean(state.running) || !running || !$("streaming").checked;
}

function updateTaskLine() {
  const task = state.tasks.get(state.taskId);
  $("task-line").replaceChildren(task
    ? el("span", {}, `task ${short(state.taskId)} · `, el("strong", {id: "task-state", class: `state-${task.state}`}, task.state || "?"), ` · context ${short(state.contextId)}`)
    : "No task yet.");
  updateButtons();
}

// -- timeline ---------------------------------------------------------------------------

function step(taskId, contextId, time, what, detail) {
  const context = contextId || (state.tasks.get(taskId) || {}).contextId || "(none)";
  let group = document.querySelector(`.context[data-context="${CSS.escape(context)}"]`);
  if (!group) {
    group = el("div", {class: "context", "data-context": context},
      el("div", {class: "label"}, `context ${context}`), el("div", {class: "lanes"}));
    $("timeline-view").append(group);
  }
  let lane = group.querySelector(`.lane[data-task="${CSS.escape(taskId)}"]`);
  if (!lane) {
    lane = el("div", {class: "lane", "data-task": taskId}, el("h3", {title: taskId}, `task ${short(taskId)}`));
    group.querySelector(".lanes").append(lane);
  }
  for (const other of document.querySelectorAll(".lane.current")) other.classList.remove("current");
  lane.classList.add("current");
  lane.append(el("div", {class: "step"}, clock(time), el("span", {class: `state-${what.split(" ")[0]}`}, what), detail ? ` ${detail.slice(0, 80)}` : ""));
}

// -- wire log ---------------------------------------------------------------------------

const ARROWS = {request: "→", response: "←", body: "←", event: "⇠", end: "■", failure: "✗"};

function showWire(entry) {
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

function wireTitle(entry) {
  if (entry.kind === "request") return `${entry.binding === "grpc" ? "gRPC" : entry.method} ${entry.binding === "grpc" ? entry.method : entry.url}`;
  if (entry.kind === "response") return `${entry.status} (to #${entry.of})`;
  if (entry.kind === "body") return `answer of #${entry.of}`;
  if (entry.kind === "event") return `event of #${entry.of}`;
  if (entry.kind === "end") return `end of #${entry.of}${entry.note ? ` (${entry.note})` : ""}`;
  return `#${entry.of}: ${entry.error}`;
}

function jsonOrText(text) {
  try { return pretty(JSON.parse(text)); } catch { return text; }
}

async function copy(text) {
  try { await navigator.clipboard.writeText(text); } catch { /* the command stays shown below the button */ }
}

// -- push -------------------------------------------------------------------------------

function showPush(entry) {
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

// -- start: the page's own address may name the agent ----------------------------------

(function start() {
  const query = new URLSearchParams(location.search);
  const agent = query.get("agent");
  if (agent) {
    $("agent-url").value = agent;
    connect(agent, query.get("card") || "", {version: query.get("version"), binding: query.get("binding")});
  }
})();
