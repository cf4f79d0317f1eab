// parley inspect: the page. It talks only to its own backend (/api/...), which talks to
// the agent through parley's client; nothing here is fetched from anywhere else.
import {$} from "./dom.js";
import {applySession, connect} from "./card.js";
import {cancel, detach, resume, send, startConversation} from "./chat.js";

for (const nav of document.querySelectorAll("nav.tabs")) {
  nav.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-view]");
    if (!button) return;
    for (const other of nav.querySelectorAll("button")) other.classList.toggle("active", other === button);
    for (const view of $(nav.dataset.for).children) view.classList.toggle("active", view.id === button.dataset.view);
  });
}

$("connect").addEventListener("submit", (event) => {
  event.preventDefault();
  connect($("agent-url").value.trim(), $("fetch-version").value);
});

$("session").addEventListener("submit", (event) => { event.preventDefault(); applySession(); });
$("message").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("composer").requestSubmit(); }
});
$("composer").addEventListener("submit", (event) => { event.preventDefault(); send(); });
$("cancel").addEventListener("click", cancel);
$("detach").addEventListener("click", detach);
$("resume").addEventListener("click", resume);
$("new-conversation").addEventListener("click", startConversation);

// -- start: the page's own address may name the agent ----------------------------------

(function start() {
  const query = new URLSearchParams(location.search);
  const agent = query.get("agent");
  if (agent) {
    $("agent-url").value = agent;
    connect(agent, query.get("card") || "", {version: query.get("version"), binding: query.get("binding")});
  }
})();
