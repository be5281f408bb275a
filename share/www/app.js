/*
 * app.js - heartwood's browser UI.  It renders the projection hw-serve
 * sends and submits typed commands; it never reduces events itself.
 * Live updates come over a WebSocket, then (once) server-sent events,
 * then "degraded" with a Reconnect control.
 */
"use strict";

(function () {
  const base = document.querySelector('meta[name="heartwood-gateway-base"]')
    .content.replace(/\/$/, "");
  const $ = (id) => document.getElementById(id);
  const state = {
    sid: "session-main", proj: null, epoch: null, stream: null,
    transport: null, mode: "connecting", fellBack: false, tab: "conversation",
    pendingFocus: false, editors: [],
  };

  /* ---- the gateway ---- */

  async function api(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const r = await fetch(base + path, init);
    const data = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(data.error || ("HTTP " + r.status));
    return data;
  }

  function hex(n) {
    const a = new Uint8Array(n);
    crypto.getRandomValues(a);
    return Array.from(a, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  async function command(kind, payload) {
    const env = {
      schema_version: "heartwood.session-command.v1",
      command_id: state.sid + "-" + kind + "-" + hex(16),
      session_id: state.sid, kind, actor_id: "human",
      created_at: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      payload: payload || {},
    };
    const ans = await api("POST", "/sessions/" + state.sid + "/commands", env);
    take(ans.projection);
    return ans;
  }

  /* ---- the projection: newer ones replace older ones ---- */

  function newer(p) {
    const q = state.proj;
    if (!q || p.sessionId !== q.sessionId) return true;
    if (p.streamEpoch !== q.streamEpoch) return true;
    if (p.revision !== q.revision) return p.revision > q.revision;
    return (p.streamRevision || 0) >= (q.streamRevision || 0);
  }

  function take(p) {
    if (!p || !newer(p)) return;
    const ws = state.proj && state.proj.workspaceRevision;
    const count = state.proj && state.proj.eventCount;
    state.proj = p;
    if (count !== p.eventCount) loadSessions().catch(() => {});
    render();
    if (ws !== p.workspaceRevision && state.tab !== "conversation")
      loadTab(state.tab);
  }

  /* ---- live updates ---- */

  function setMode(m) {
    state.mode = m;
    const text = { connecting: "Connecting", connected: "Live",
      reconnecting: "Reconnecting (event stream)", degraded: "Disconnected" };
    $("connection").textContent = text[m] || m;
    $("reconnect").hidden = m !== "degraded";
  }

  function after() {
    return state.proj && state.proj.sessionId === state.sid ?
      state.proj.revision : -1;
  }

  function frame(text) {
    const f = JSON.parse(text);
    take(f.projection);
  }

  function closeTransport() {
    const t = state.transport;
    state.transport = null;
    if (t) { t.onclose = t.onerror = null; t.close(); }
  }

  function connect() {
    closeTransport();
    setMode(state.fellBack ? "reconnecting" : "connecting");
    if (state.fellBack || !("WebSocket" in window)) return connectSse();
    const url = location.origin.replace(/^http/, "ws") + base + "/sessions/" +
      state.sid + "/events?after=" + after();
    let ws;
    try { ws = new WebSocket(url); } catch (e) { return fallBack(); }
    state.transport = ws;
    ws.onopen = () => setMode("connected");
    ws.onmessage = (m) => {
      try { frame(m.data); } catch (e) { fallBack(); }
    };
    ws.onerror = ws.onclose = () => { if (state.transport === ws) fallBack(); };
  }

  function fallBack() {
    closeTransport();
    state.fellBack = true;
    connectSse();
  }

  function connectSse() {
    setMode("reconnecting");
    const es = new EventSource(base + "/sessions/" + state.sid +
      "/events/stream?after=" + after());
    state.transport = es;
    es.addEventListener("heartwood-session-events", (m) => {
      setMode("connected");
      try { frame(m.data); } catch (e) { degrade(); }
    });
    es.onerror = () => { if (state.transport === es) degrade(); };
  }

  function degrade() {
    closeTransport();
    setMode("degraded");
  }

  /* ---- rendering ---- */

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const k of kids) if (k != null) e.append(k);
    return e;
  }

  const md = () => window.markdownit({ html: false, linkify: false,
    typographer: false });
  let mdi = null;

  /* untrusted Markdown: no HTML, no images, no remote links, capped */
  function markdown(text) {
    const box = el("div", { class: "md" });
    text = String(text || "").slice(0, 200000);
    if (!window.markdownit || !window.DOMPurify) {
      box.textContent = text;
      return box;
    }
    mdi = mdi || md();
    let html = mdi.render(text).replace(/<(\/?)h([1-6])>/g,
      (m, s, n) => "<" + s + "h" + Math.min(6, +n + 2) + ">");
    box.innerHTML = window.DOMPurify.sanitize(html, {
      FORBID_TAGS: ["img", "style", "form", "input", "iframe"],
      ALLOWED_URI_REGEXP: /^(?:https?:|#)/i,
    });
    box.querySelectorAll("a").forEach((a) => {
      a.setAttribute("rel", "noopener noreferrer");
      a.setAttribute("referrerpolicy", "no-referrer");
      a.setAttribute("target", "_blank");
    });
    return box;
  }

  function renderConversation(p) {
    const box = $("conversation");
    box.replaceChildren();
    const conv = p.conversation || [];
    if (!conv.length && !p.streamingText) {
      box.append(el("p", { class: "empty" }, "Start an analysis: ask " +
        "Heartwood about this project."));
    }
    for (const m of conv) {
      const who = m.role === "user" ? "You" : m.role === "agent" ?
        "Heartwood" : "Activity";
      const body = m.role === "agent" ? markdown(m.content) :
        el("div", null, String(m.content || ""));
      box.append(el("article", { class: "msg " + m.role },
        el("div", { class: "who" }, who), body));
    }
    for (const a of p.actions || []) {
      if (["proposed", "awaiting-review"].includes(a.state)) continue;
      box.append(el("article", { class: "msg trace action" },
        el("div", { class: "who" }, (a.toolName || a.tool || "action") +
          " · " + a.state),
        el("div", null, a.summary || ""),
        a.outcome && a.outcome.output ? el("pre", null,
          String(a.outcome.output).slice(0, 4000)) : null));
    }
    if (p.streamingText)
      box.append(el("article", { class: "msg agent streaming" },
        el("div", { class: "who" }, "Heartwood (writing)"),
        el("div", null, p.streamingText)));
    if (p.researcherNotice && p.researcherNotice.title)
      box.append(el("p", { class: "note", role: "status" },
        p.researcherNotice.title + ": " + (p.researcherNotice.detail || "")));
  }

  function argsText(a) {
    try { return JSON.stringify(a.arguments, null, 2); }
    catch (e) { return String(a.arguments); }
  }

  // a delegation's specialist, capability and objective (else nothing)
  function taskLine(a) {
    const d = a.details || {};
    if (a.toolName !== "task") return "";
    return el("div", { class: "specialist" },
      "Specialist: " + (d.roleLabel || "not in the catalogue") +
      (d.capability ? " · " + d.capability : "") +
      " · Objective: " + (d.description || d.prompt || ""));
  }

  function renderReview(p) {
    const box = $("review");
    const pend = p.pendingApproval;
    if (!pend) {
      if (!box.hidden) state.pendingFocus = true;
      box.hidden = true;
      box.replaceChildren();
      return;
    }
    if (box.dataset.group === pend.groupId && !box.hidden) return;
    box.dataset.group = pend.groupId;
    const n = pend.actions.length;
    const list = el("ol");
    for (const a of pend.actions) {
      const risk = String(a.risk || "unknown").toLowerCase();
      list.append(el("li", null,
        el("strong", null, a.toolName || a.tool || "action"), " ",
        el("span", { class: "risk " + risk }, risk === "unknown" ?
          "Not Classified" : risk[0].toUpperCase() + risk.slice(1) + " risk"),
        el("div", null, a.summary || ""),
        taskLine(a),
        el("details", null, el("summary", null, "Exact arguments"),
          el("pre", null, argsText(a)))));
    }
    const reject = el("button", { type: "button", id: "reject" },
      "Reject " + n + (n === 1 ? " action" : " actions"));
    const allow = el("button", { type: "button", id: "allow", class: "primary" },
      "Allow " + n + (n === 1 ? " action" : " actions") + " once");
    reject.addEventListener("click", () => decide("deny", pend.groupId));
    allow.addEventListener("click", () => decide("approve", pend.groupId));
    box.replaceChildren(
      el("h2", { id: "review-title" }, "One Decision for This Action Set"),
      el("p", null, n + (n === 1 ? " action" : " actions") +
        " · Paused by Review Every Action · the decision applies to all"),
      list, el("div", { class: "decide" }, reject, allow));
    box.hidden = false;
    box.focus();
  }

  async function decide(kind, group) {
    $("review").querySelectorAll("button").forEach((b) => { b.disabled = true; });
    try {
      await command(kind, { target_type: "action-set", target_id: group });
    } catch (e) { notice(e.message); }
  }

  function label(k, v) {
    return el("div", null, el("dt", null, k), el("dd", null, v || "—"));
  }

  function renderHeader(p) {
    const rs = p.researcherStatus || {};
    $("status").textContent = rs.label || (p.lifecycle || {}).status || "";
    const ctx = p.context || {};
    const mode = (state.settings && state.settings.confirmation_mode) ===
      "confirm-risky" ? "Low-Risk Automation" : "Review Every Action";
    $("context").replaceChildren(
      label("Project", state.project || ""),
      label("Platform", "Workstation or container"),
      label("Model", ctx.modelEndpoint || ctx.model || ""),
      label("Action review", mode));
    const avail = p.availableCommands || [];
    $("send").disabled = !!p.pendingApproval || !avail.includes("chat");
    $("prompt").disabled = !!p.pendingApproval;
    const pause = $("pause");
    pause.textContent = avail.includes("resume") ? "Resume" : "Pause";
    pause.disabled = !avail.includes("pause") && !avail.includes("resume");
  }

  function render() {
    const p = state.proj;
    if (!p) return;
    renderHeader(p);
    renderConversation(p);
    renderReview(p);
    if (state.pendingFocus) {
      state.pendingFocus = false;
      $("prompt").focus();
    }
  }

  function notice(text) {
    $("conversation").append(el("p", { class: "note", role: "alert" }, text));
  }

  /* ---- sessions ---- */

  const statusDot = { idle: "idle", empty: "idle", waiting: "waiting",
    paused: "paused", error: "error", "recovery-required": "recovery-required" };
  const statusText = { idle: "Ready", empty: "Ready", waiting:
    "Action review needed", paused: "Paused", error: "Needs attention",
    "recovery-required": "Recovery required" };

  async function loadSessions() {
    const list = (await api("GET", "/sessions")).sessions;
    const ul = $("sessions");
    ul.replaceChildren();
    for (const s of list) {
      const b = el("button", { type: "button", "aria-current":
        String(s.session_id === state.sid) },
        el("span", { class: "dot " + (statusDot[s.status] || "idle"),
          "aria-hidden": "true" }),
        el("span", null, s.title),
        el("small", null, (statusText[s.status] || s.status) + " · " +
          s.event_count + " events"));
      b.addEventListener("click", () => open(s.session_id, s.title));
      ul.append(el("li", null, b));
    }
    return list;
  }

  function open(sid, title) {
    state.sid = sid;
    state.proj = null;
    state.fellBack = false;
    $("title").value = title || sid;
    $("review").hidden = true;
    connect();
    loadSessions().catch(() => {});
    if (state.tab !== "conversation") loadTab(state.tab);
  }

  /* ---- files and changes ---- */

  function viewer(box, text, name) {
    if (!window.CodeMirror) {
      box.append(el("pre", null, text));
      return;
    }
    const cm = window.CodeMirror(box, { value: text, readOnly: true,
      lineNumbers: true, lineWrapping: true });
    cm.getWrapperElement().setAttribute("aria-label", name);
  }

  async function loadTab(tab) {
    const ws = "/sessions/" + state.sid + "/workspace/";
    try {
      if (tab === "files") {
        const t = await api("GET", ws + "tree?depth=2");
        const ul = $("tree");
        ul.replaceChildren();
        for (const e of t.entries || []) {
          const b = el("button", { type: "button" },
            "  ".repeat(e.depth - 1) + e.name + (e.kind === "dir" ? "/" : ""));
          if (e.kind === "file") b.addEventListener("click", () => showFile(e.path));
          ul.append(el("li", null, b));
        }
      } else if (tab === "changes") {
        const c = await api("GET", ws + "changes");
        $("changes-source").textContent = c.status !== "available" ?
          (c.message || c.status) : c.source === "git" ? "Git" :
          "Session actions";
        const ul = $("changes");
        ul.replaceChildren();
        for (const e of c.changes || []) {
          const b = el("button", { type: "button" }, e.status[0].toUpperCase() +
            "  " + e.path);
          b.addEventListener("click", () => showDiff(e.path));
          ul.append(el("li", null, b));
        }
        if (!(c.changes || []).length) ul.append(el("li", { class: "note" },
          "No changes."));
      }
    } catch (e) { notice(e.message); }
  }

  async function showFile(path) {
    const f = await api("GET", "/sessions/" + state.sid +
      "/workspace/file?path=" + encodeURIComponent(path));
    const box = $("file-view");
    box.replaceChildren(el("h3", null, path + " · " + f.status));
    if (f.content != null) viewer(box, f.content, path);
    else box.append(el("p", { class: "note" }, f.message || f.status));
  }

  async function showDiff(path) {
    const d = await api("GET", "/sessions/" + state.sid +
      "/workspace/diff?path=" + encodeURIComponent(path));
    const box = $("diff-view");
    box.replaceChildren();
    const left = el("div", null, el("h3", null, "Before · " + path));
    const right = el("div", null, el("h3", null, "After · " + d.status));
    box.append(left, right);
    viewer(left, d.original || "", "Before " + path);
    viewer(right, d.modified || "", "After " + path);
  }

  function selectTab(tab) {
    state.tab = tab;
    for (const t of ["conversation", "files", "changes"]) {
      $("tab-" + t).setAttribute("aria-selected", String(t === tab));
      $("panel-" + t).hidden = t !== tab;
    }
    if (tab !== "conversation") loadTab(tab);
  }

  /* ---- theme: the system's, unless one was chosen here ---- */

  function applyTheme() {
    const t = localStorage.getItem("heartwood.color-theme");
    if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
    else delete document.documentElement.dataset.theme;
  }

  function toggleTheme() {
    const dark = document.documentElement.dataset.theme ?
      document.documentElement.dataset.theme === "dark" :
      matchMedia("(prefers-color-scheme: dark)").matches;
    localStorage.setItem("heartwood.color-theme", dark ? "light" : "dark");
    applyTheme();
  }

  /*
   * ---- the ChatGPT account: the gateway's non-secret status and its
   * device-code sign-in (the tokens stay with hw-model, never here) ----
   */

  const SUB = "openai-subscription";
  const sub = { login: null, timer: null, gen: 0 };

  async function loadAccount() {
    let text, signedIn = false;
    try {
      const c = await api("GET", "/settings/credentials");
      const rec = (c.credentials || []).find((x) =>
        x.connection_id === SUB) || {};
      signedIn = rec.status === "signed-in";
      text = signedIn ? "Signed in with ChatGPT" : "Not signed in";
    } catch (e) {
      text = "The sign-in cannot be read: " + e.message;
    }
    $("account-status").textContent = text;
    $("account-status").dataset.status = signedIn ? "signed-in" : "signed-out";
    $("sign-in").hidden = signedIn;
    $("sign-out").hidden = !signedIn;
    return signedIn;
  }

  function stopPolling() {
    sub.gen++;
    clearTimeout(sub.timer);
    sub.timer = null;
    sub.login = null;
  }

  // ask the gateway to stop the sign-in it runs for this page (its child
  // hw-model); only that login id, so a newer sign-in is left alone
  async function cancelLogin(login) {
    try {
      await api("DELETE", "/settings/models/subscription/device",
        { connection_id: SUB, login_id: login });
    } catch (e) { notice(e.message); }
    await loadAccount();
  }

  // Cancel and Escape close the panel: the polling stops, and the sign-in
  // in progress is cancelled (a code still on its way, when it comes)
  function closedSignIn() {
    const login = sub.login;
    stopPolling();
    if (login) cancelLogin(login);
  }

  // stage: "start" (explain, accept), "code" (enter it), "error"
  function signinStage(stage, message) {
    $("signin-start").hidden = stage !== "start";
    $("signin-code").hidden = stage !== "code";
    $("signin-go").hidden = stage !== "start";
    $("signin-retry").hidden = stage !== "error";
    $("signin-error").hidden = stage !== "error";
    $("signin-error").textContent = stage === "error" ? message : "";
    $("signin-progress").textContent = stage === "code" ? message : "";
    $("signin-go").disabled = !$("signin-terms").checked;
  }

  function openSignIn() {
    stopPolling();
    $("signin-terms").checked = false;
    signinStage("start");
    $("signin").showModal();
    $("signin-terms").focus();
  }

  async function startSignIn() {
    if (!$("signin-terms").checked) return;
    stopPolling();
    const gen = sub.gen;
    $("signin-go").disabled = true;
    $("signin-progress").textContent = "Asking ChatGPT for a code";
    let d;
    try {
      d = await api("POST", "/settings/models/subscription/device",
        { connection_id: SUB, terms_accepted: true });
    } catch (e) {
      if (gen === sub.gen) failSignIn(e.message);
      return;
    }
    if (gen !== sub.gen) {  // closed while the code was on its way
      cancelLogin(d.login_id);
      return;
    }
    sub.login = d.login_id;
    $("signin-url").href = /^https?:\/\//i.test(d.verification_url) ?
      d.verification_url : "about:blank";
    $("signin-url").textContent = d.verification_url;
    $("signin-user-code").textContent = d.user_code;
    $("signin-copy").textContent = "Copy code";
    signinStage("code", "Waiting for you to enter the code at that address");
    $("signin-url").focus();
    schedulePoll(gen, d.poll_interval_seconds);
  }

  function schedulePoll(gen, seconds) {
    const ms = Math.min(60, Math.max(1, Number(seconds) || 5)) * 1000;
    sub.timer = setTimeout(() => pollSignIn(gen, seconds), ms);
  }

  async function pollSignIn(gen, seconds) {
    if (gen !== sub.gen || !sub.login) return;
    let p;
    try {
      p = await api("POST", "/settings/models/subscription/device/poll",
        { connection_id: SUB, login_id: sub.login });
    } catch (e) {
      if (gen === sub.gen) failSignIn(e.message);
      return;
    }
    if (gen !== sub.gen) return;
    if (p.status !== "complete") return schedulePoll(gen, seconds);
    stopPolling();
    $("signin").close();
    await loadAccount();
    $("sign-out").focus();
  }

  function failSignIn(message) {
    stopPolling();
    signinStage("error", "The sign-in did not complete: " + message);
    $("signin-retry").focus();
  }

  async function copyCode() {
    const code = $("signin-user-code").textContent;
    try {
      await navigator.clipboard.writeText(code);
      $("signin-copy").textContent = "Copied";
    } catch (e) {
      getSelection().selectAllChildren($("signin-user-code"));
      $("signin-copy").textContent = "Select and copy";
    }
  }

  async function signOut() {
    $("sign-out").disabled = true;
    try {
      await api("DELETE", "/settings/credentials/" + SUB);
    } catch (e) { notice(e.message); }
    $("sign-out").disabled = false;
    await loadAccount();
    if (!$("sign-in").hidden) $("sign-in").focus();
  }

  function wireAccount() {
    $("sign-in").addEventListener("click", openSignIn);
    $("sign-out").addEventListener("click", signOut);
    $("signin-terms").addEventListener("change", () => {
      $("signin-go").disabled = !$("signin-terms").checked;
    });
    $("signin-go").addEventListener("click", startSignIn);
    $("signin-retry").addEventListener("click", () => {
      signinStage("start");
      $("signin-terms").focus();
    });
    $("signin-copy").addEventListener("click", copyCode);
    $("signin-cancel").addEventListener("click", () => $("signin").close());
    // Cancel, Escape and a completed sign-in all close it: no more polling,
    // and a sign-in still in progress is cancelled at the gateway
    $("signin").addEventListener("close", closedSignIn);
  }

  /* ---- the controls ---- */

  async function exportAudit() {
    try {
      await command("audit.export", {});
      const x = await api("GET", "/sessions/" + state.sid + "/audit-export");
      const a = el("a", { href: URL.createObjectURL(new Blob([x.content],
        { type: "application/jsonl" })), download: x.filename });
      document.body.append(a);
      a.click();
      a.remove();
    } catch (e) { notice(e.message); }
  }

  function wire() {
    $("composer").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const text = $("prompt").value.trim();
      if (!text || $("send").disabled) return;
      $("send").disabled = true;
      try {
        await command("chat", { prompt: text });
        $("prompt").value = "";
      } catch (e) { notice(e.message); }
      loadSessions().catch(() => {});
    });
    $("prompt").addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey) {
        ev.preventDefault();
        $("composer").requestSubmit();
      }
    });
    $("pause").addEventListener("click", () => {
      const avail = (state.proj && state.proj.availableCommands) || [];
      command(avail.includes("resume") ? "resume" : "pause", {})
        .catch((e) => notice(e.message));
    });
    $("title").addEventListener("keydown", async (ev) => {
      if (ev.key === "Escape") { ev.target.blur(); loadSessions(); }
      if (ev.key !== "Enter") return;
      try {
        await api("PATCH", "/sessions/" + state.sid, { title: ev.target.value });
        await loadSessions();
      } catch (e) { notice(e.message); }
    });
    $("new-session").addEventListener("click", async () => {
      try {
        const s = await api("POST", "/sessions", {});
        open(s.session_id, s.title);
      } catch (e) { notice(e.message); }
    });
    $("export-audit").addEventListener("click", exportAudit);
    $("reconnect").addEventListener("click", () => {
      state.fellBack = false;
      connect();
    });
    $("theme").addEventListener("click", toggleTheme);
    wireAccount();
    for (const t of ["conversation", "files", "changes"])
      $("tab-" + t).addEventListener("click", () => selectTab(t));
  }

  async function start() {
    applyTheme();
    wire();
    try {
      const plan = await api("GET", "/project/startup?interface=web");
      state.project = plan.project_root;
      state.settings = await api("GET", "/settings/actions");
    } catch (e) { notice(e.message); }
    loadAccount();
    const list = await loadSessions().catch(() => []);
    const main = list.find((s) => s.session_id === "session-main");
    const sid = new URLSearchParams(location.search).get("session");
    open(sid && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(sid) ? sid :
      "session-main", main ? main.title : "Main session");
  }

  if (document.readyState === "loading")
    document.addEventListener("DOMContentLoaded", start);
  else start();
})();
