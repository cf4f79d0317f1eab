// The chat: messages out, events in as they arrive, artifacts by kind, cancel and resume;
// and the timeline of each task.
import {$, INTERRUPTED, TERMINAL, api, clock, el, errorBox, pretty, short, state} from "./dom.js";

export function resetChat() {
  if (state.running) state.running.abort();
  Object.assign(state, {contextId: null, taskId: null, tasks: new Map()});
  for (const id of ["timeline-view", "messages"]) $(id).replaceChildren();
  updateTaskLine();
}

export function startConversation() {
  state.contextId = null;
  state.taskId = null;
  $("messages").append(el("div", {class: "hint"}, "— a new conversation —"));
  updateButtons();
}

export async function send() {
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

export function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve({name: file.name, mimeType: file.type || "application/octet-stream", bytes: reader.result.split(",", 2)[1]});
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

// Reads the backend's answer: one JSON object a line, each handled as it arrives.
export async function read(path, body) {
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

export function handle(line) {
  if (line.type === "error") showError(line.error);
  else if (line.type === "event") showEvent(line.event, line.time, line.seq);
}

export function showEvent(event, time, seq) {
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

export function track(taskId, contextId) {
  if (!state.tasks.has(taskId)) state.tasks.set(taskId, {contextId, state: null, lastSeq: null, artifacts: new Map()});
  return state.tasks.get(taskId);
}

export function showStatus(taskId, status, time, final) {
  const task = track(taskId);
  const changed = task.state !== status.state;
  task.state = status.state;
  const said = status.message ? textOf(status.message.parts) : "";
  if (changed || said) step(taskId, task.contextId, time, status.state + (final ? " (final)" : ""), said);
  if (status.message && (changed || said)) bubble("agent", `agent · ${status.state}`, partsView(status.message.parts));
  else if (changed && TERMINAL.has(status.state)) $("messages").append(el("div", {class: `hint state-${status.state}`}, `task ${short(taskId)} ${status.state}`));
}

export function showArtifact(taskId, artifact, append, time, lastChunk) {
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

export function appendParts(body, parts) {
  for (const part of parts || []) {
    const last = body.lastElementChild;
    if (part.kind === "text" && last && last.classList.contains("text")) last.textContent += part.text;
    else body.append(partView(part));
  }
}

export function partsView(parts) {
  const body = el("div", {class: "parts"});
  appendParts(body, parts);
  return body;
}

export function partView(part) {
  if (part.kind === "text") return el("pre", {class: "text"}, part.text);
  if (part.kind === "file") return fileView(part.file);
  if (part.kind === "data") return el("div", {class: "data"}, tree("data", part.data, true));
  return el("pre", {class: "json"}, pretty(part));
}

export function fileView(file) {
  const name = file.name || "file";
  if (file.uri) return el("a", {href: file.uri, target: "_blank", rel: "noopener", class: "file"}, `⬇ ${name} (${file.uri})`);
  const bytes = Uint8Array.from(atob(file.bytes), (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bytes], {type: file.mimeType || "application/octet-stream"}));
  return el("a", {href: url, download: name, class: "file"}, `⬇ ${name} (${bytes.length} bytes, ${file.mimeType || "no type"})`);
}

export function tree(name, value, open) {
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    return el("details", {class: "tree", open},
      el("summary", {}, `${name} ${Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`}`),
      entries.map(([key, inner]) => tree(key, inner, false)));
  }
  return el("div", {class: "leaf"}, `${name}: ${JSON.stringify(value)}`);
}

export const textOf = (parts) => (parts || []).filter((p) => p.kind === "text").map((p) => p.text).join("");

export function bubble(who, label, content) {
  const node = el("div", {class: `bubble ${who}`}, el("div", {class: "who"}, label),
    typeof content === "string" ? el("pre", {class: "text"}, content) : content);
  $("messages").append(node);
  node.scrollIntoView({block: "end"});
  return node;
}

export function showError(error) {
  const node = errorBox(error);
  $("messages").append(node);
  node.scrollIntoView({block: "end"});
}

export async function cancel() {
  const taskId = state.taskId;
  const answer = await api("/api/cancel", {id: state.conn, taskId});
  if (answer.error) showError(answer.error);
  else showEvent(answer.task, answer.time, null);
}

export function detach() {
  if (state.running) state.running.abort();
}

export async function resume() {
  const task = state.tasks.get(state.taskId);
  await read("/api/resubscribe", {id: state.conn, taskId: state.taskId, lastEventId: task ? task.lastSeq : null});
}

export function updateButtons() {
  const task = state.tasks.get(state.taskId);
  const open = Boolean(task && task.state && !TERMINAL.has(task.state));
  const running = open && !INTERRUPTED.has(task.state);  // events still to come
  $("cancel").disabled = !state.conn || !open;
  $("detach").disabled = !state.running;
  $("resume").disabled = Boolean(state.running) || !running || !$("streaming").checked;
}

export function updateTaskLine() {
  const task = state.tasks.get(state.taskId);
  $("task-line").replaceChildren(task
    ? el("span", {}, `task ${short(state.taskId)} · `, el("strong", {id: "task-state", class: `state-${task.state}`}, task.state || "?"), ` · context ${short(state.contextId)}`)
    : "No task yet.");
  updateButtons();
}

// -- timeline ---------------------------------------------------------------------------

export function step(taskId, contextId, time, what, detail) {
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
