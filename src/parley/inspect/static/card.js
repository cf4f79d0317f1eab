// Connecting: the card, its checks, and the session (version, binding, credentials).
import {$, api, el, errorBox, pretty, state} from "./dom.js";
import {resetChat, updateButtons} from "./chat.js";
import {follow, resetLog} from "./log.js";

export async function connect(url, fetchVersion, wanted) {
  $("connection-status").textContent = "reading the card…";
  resetLog();
  resetChat();
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

export function renderCard(answer) {
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

export function adviceList(advice) {
  return advice.length
    ? el("div", {}, el("h3", {}, "Advice"), el("ul", {}, advice.map((a) => el("li", {class: "check-warning"}, a.text))))
    : null;
}

export const VERDICT = {pass: ["ok", "pass"], fail: ["bad", "FAIL"], skip: ["muted", "skip"]};

export async function runChecks(connectionId, advice) {
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

export function renderSkill(skill) {
  return el("div", {class: "skill"},
    el("strong", {}, skill.name), " ", el("span", {class: "hint"}, (skill.tags || []).join(", ")),
    el("div", {}, skill.description),
    el("div", {}, (skill.examples || []).map((text) =>
      el("span", {class: "example", title: "put it in the message box", onclick: () => { $("message").value = text; $("message").focus(); }}, text))));
}

export function renderSession(answer, wanted) {
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

export function credentialInput(scheme) {
  const asked = {required: " (required)", "one of": " (one of the ways in the card allows)"}[scheme.asked] || "";
  const label = `${scheme.name}: ${scheme.label}${asked}`;
  if (scheme.kind === "basic") {
    return el("label", {}, label,
      el("input", {type: "text", "data-scheme": scheme.name, "data-part": "user", placeholder: "user"}),
      el("input", {type: "password", "data-scheme": scheme.name, "data-part": "password", placeholder: "password"}));
  }
  return el("label", {}, label,
    el("input", {type: "password", "data-scheme": scheme.name, disabled: scheme.kind === "mtls"}));
}

export function credentials() {
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

export async function applySession() {
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

export function enableChat(on) {
  for (const id of ["message", "file", "send"]) $(id).disabled = !on;
  updateButtons();
}
