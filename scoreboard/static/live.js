// Live pages: follow /api/stream (Server-Sent Events) and swap in server-rendered fragments.
(function () {
  "use strict";
  const root = document.getElementById("live-root");
  const status = document.getElementById("live-status");
  const KINDS = ["table", "deal", "correction", "play", "trick", "alert", "health", "deal_start", "board_start", "game_start", "stone", "long_think", "tourney", "clock", "bridge"];
  const timers = new Map();

  function setStatus(on) {
    if (status) { status.className = "status " + (on ? "on" : "off"); }
  }

  async function swap(url, target) {
    const res = await fetch(url, { credentials: "same-origin" });
    if (!res.ok) { return; }
    const html = await res.text();
    const tpl = document.createElement("template");
    tpl.innerHTML = html.trim();
    const fresh = tpl.content.firstElementChild;
    if (fresh && target && target.parentNode) { target.replaceWith(fresh); }
  }

  const dirty = new Set();
  async function refreshCards() {
    if (dirty.size === 0) { return; }
    const ids = Array.from(dirty);
    dirty.clear();
    const res = await fetch("/fragments/cards?ids=" + encodeURIComponent(ids.join(",")), { credentials: "same-origin" });
    if (!res.ok) { ids.forEach((id) => dirty.add(id)); return; }
    const tpl = document.createElement("template");
    tpl.innerHTML = (await res.text()).trim();
    tpl.content.querySelectorAll(".card-table").forEach((fresh) => {
      const old = document.getElementById(fresh.id);
      if (old) { old.replaceWith(fresh); }
    });
  }
  setInterval(() => { refreshCards().catch(() => {}); }, 1000);

  // A gomoku table's move clock: seconds since the last stone (the server's time), a warning five
  // seconds before the move's limit (25 s of 30), over once past it.
  function tickClocks() {
    document.querySelectorAll(".clock[data-clock-from]").forEach((el) => {
      const from = Date.parse(el.dataset.clockFrom);
      if (Number.isNaN(from)) { return; }
      const limit = Number(el.dataset.limit || "30");
      const s = Math.max(0, (Date.now() - from) / 1000);
      el.textContent = s.toFixed(0) + " s";
      el.classList.toggle("warn", s >= limit - 5 && s <= limit);
      el.classList.toggle("over", s > limit);
    });
  }
  setInterval(tickClocks, 250);

  function later(key, fn) {  // coalesce bursts of events (a trick is four plays)
    clearTimeout(timers.get(key));
    timers.set(key, setTimeout(fn, 150));
  }

  function onEvent(ev) {
    let data;
    try { data = JSON.parse(ev.data); } catch (e) { return; }
    root.dataset.cursor = String(data.id);
    const mode = root.dataset.live;
    if (mode === "tables") {
      if (data.table && document.getElementById("table-" + data.table)) {
        dirty.add(data.table);  // fetched together, at most once a second (scales to many tables)
      } else {
        later("all", () => swap(root.dataset.fragment, document.getElementById("tables")));
      }
    } else if (mode === "table") {
      later("table", () => swap(root.dataset.fragment, root.firstElementChild));
    } else if (mode === "tourney") {
      if (data.data && data.data.tourney === root.dataset.tourney) {
        later("tourney", () => swap(root.dataset.fragment, document.getElementById("tourney-view")));
      }
    } else if (mode === "bridge" && ["deal", "correction", "bridge"].includes(data.kind)) {
      later("bridge", () => swap(root.dataset.fragment, document.getElementById("bridge-view")));
    } else if (mode === "alerts" && (data.kind === "alert" || data.kind === "deal" || data.kind === "correction")) {
      later("alerts", () => swap(root.dataset.fragment, document.getElementById("alerts")));
    }
  }

  function connect() {
    if (!root || !window.EventSource) {  // a static page (a deal's versions): no live dot
      if (status) { status.hidden = true; }
      return;
    }
    let url = "/api/stream?after=" + encodeURIComponent(root.dataset.cursor || "0");
    if (root.dataset.table) { url += "&table=" + encodeURIComponent(root.dataset.table); }
    const source = new EventSource(url);
    source.onopen = () => setStatus(true);
    source.onerror = () => setStatus(false);  // the browser reconnects with Last-Event-ID
    KINDS.forEach((k) => source.addEventListener(k, onEvent));
    // Too far behind to replay: the server starts from now, so the page reloads its state.
    source.addEventListener("reset", () => { location.reload(); });
  }

  async function post(url, body) {
    const res = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Requested-With": "fetch" },
      body: JSON.stringify(body),
    });
    let payload = {};
    try { payload = await res.json(); } catch (e) { /* empty body */ }
    if (!res.ok) { throw new Error(payload.detail || res.statusText); }
    return payload;
  }

  const words = (text) => String(text || "").trim().split(/[\s,]+/).filter((c) => c);

  // A look: the plays whose cards the referee changed (and the bottom); none changed closes it.
  function lookSettlement(form) {
    const body = { reason: form.querySelector("[name=reason]").value };
    const fixes = [];
    form.querySelectorAll(".play-fix").forEach((row) => {
      const trick = row.querySelector("[name=trick]").value;
      const seat = row.querySelector("[name=seat]").value;
      const cards = words(row.querySelector("[name=cards]").value);
      if (!trick || !seat || !cards.length) { return; }
      if ([trick, seat, ...cards].join(" ") === words(row.dataset.orig).join(" ")) { return; }
      fixes.push({ trick: Number(trick), seat: seat, cards: cards });
    });
    const bottom = form.querySelector("[name=bottom]");
    if (bottom && words(bottom.value).length && words(bottom.value).join(" ") !== words(bottom.dataset.orig).join(" ")) {
      body.bottom = words(bottom.value);
    }
    if (fixes.length) { body.fixes = fixes; }
    if (fixes.length || body.bottom) { body.base_version = Number(form.dataset.base); }
    return body;
  }

  document.addEventListener("click", async (e) => {
    const button = e.target.closest("[data-action]");
    if (!button) { return; }
    e.preventDefault();
    const box = button.closest("[data-alert]");
    const out = box.querySelector(".result");
    const id = box.dataset.alert;
    const action = button.dataset.action;
    if (action === "ruling-cancel") {
      button.closest(".confirm").hidden = true;
      return;
    }
    let body = {};
    if (action === "resolve" && button.closest("form.look")) {
      body = lookSettlement(button.closest("form.look"));
    } else if (action === "resolve") {
      const f = new FormData(button.closest("form"));
      body = {
        reason: f.get("reason"),
        fix: { trick: Number(f.get("trick")), seat: f.get("seat"), cards: String(f.get("cards")).trim().split(/[\s,]+/) },
      };
    } else if (action === "ruling" || action === "ruling-preview") {
      const form = button.closest("form");
      for (const [k, v] of new FormData(form).entries()) {
        if (v === "") { continue; }
        if (k === "points" || k === "levels") { body[k] = Number(v); }
        else if (k === "deals_next") { body[k] = v === "true"; }
        else { body[k] = v; }
      }
    }
    if (action === "ruling-preview") {  // say what the ruling does, then ask to confirm it
      const form = button.closest("form");
      const box = form.querySelector(".confirm");
      try {
        const p = await post("/api/alerts/" + id + "/ruling/preview", body);
        form.querySelector(".effect").textContent = rulingEffect(p);
        box.hidden = false;
      } catch (err) { out.textContent = "Refused: " + err.message; }
      return;
    }
    try {
      const url = action === "ruling" ? "/api/alerts/" + id + "/ruling" : "/api/alerts/" + id + "/" + action;
      const res = await post(url, body);
      out.textContent = action === "ruling" ? "Ruling recorded: deal version " + res.version
        : action === "resolve" && res.kind === "look" ? "Closed: no change"
        : action === "resolve" && button.closest("form.look") ? "Saved as version " + res.version + " of deal " + res.deal
        : action === "resolve" ? "Counted as deal " + res.deal : "Done";
    } catch (err) { out.textContent = "Refused: " + err.message; }
  });

  function levelsText(levels) {
    return levels ? "NS " + levels.NS + " · EW " + levels.EW : "–";
  }

  // A ruling's effect in words: the points and outcome of the deal, the levels before and after.
  function rulingEffect(p) {
    const r = p.ruling;
    let text = r.kind.replace("_", " ") + " by " + r.seat + ": " + r.points + " points, " + r.levels + " level(s)"
      + (r.deals_next ? ", the non-offending side deals next" : "") + ". ";
    text += "Defenders " + p.defender_total.before + " → " + p.defender_total.after + ". ";
    if (p.counts) {
      text += "Levels " + levelsText(p.levels.before) + " → " + levelsText(p.levels.after)
        + "; next dealer " + (p.dealer.before || "–") + " → " + (p.dealer.after || "–") + ".";
    } else {
      text += "The deal counts in no game now: the levels do not move.";
    }
    return text;
  }

  // The event file chosen on the import page fills its text box (no upload: the form posts text).
  document.addEventListener("change", (e) => {
    const input = e.target.closest("input[type=file][data-fill]");
    if (!input || !input.files.length) { return; }
    const target = document.querySelector("textarea[name=" + input.dataset.fill + "]");
    const reader = new FileReader();
    reader.onload = () => { target.value = String(reader.result); };
    reader.readAsText(input.files[0]);
  });

  document.addEventListener("submit", async (e) => {
    const form = e.target.closest("form.correction-log");
    if (!form) { return; }
    e.preventDefault();
    const f = new FormData(form);
    const out = form.querySelector(".result");
    try {
      const log = JSON.parse(String(f.get("log")));
      const res = await post(form.dataset.url, { base_version: Number(form.dataset.base), reason: f.get("reason"), log: log });
      out.textContent = "Saved version " + res.version;
      setTimeout(() => location.reload(), 800);
    } catch (err) { out.textContent = "Refused: " + err.message; }
  });

  document.addEventListener("submit", async (e) => {
    const form = e.target.closest("form.bridge-round");
    if (!form) { return; }
    e.preventDefault();
    const out = form.querySelector(".result");
    try {
      await post(form.dataset.url, { round: Number(form.dataset.round) });
      location.reload();
    } catch (err) { out.textContent = "Refused: " + err.message; }
  });

  document.addEventListener("submit", async (e) => {
    const form = e.target.closest("form.correction");
    if (!form) { return; }
    e.preventDefault();
    const f = new FormData(form);
    const cards = (name) => String(f.get(name) || "").trim().split(/[\s,]+/).filter((c) => c);
    const body = {
      base_version: Number(form.dataset.base),
      reason: f.get("reason"),
      fix: { trick: Number(f.get("trick")), seat: f.get("seat"), cards: cards("cards") },
    };
    if (cards("bottom").length) { body.bottom = cards("bottom"); }
    const out = form.querySelector(".result");
    try {
      const res = await post(form.dataset.url, body);
      out.textContent = "Saved version " + res.version + (res.result.score
        ? "; NS now " + res.result.score.NS : "; defenders now " + res.result.defender_total);
      setTimeout(() => location.reload(), 800);
    } catch (err) { out.textContent = "Refused: " + err.message; }
  });

  // The round clock counts down between events (the server's figures come with each fragment).
  function tickClock() {
    const clock = document.getElementById("clock");
    if (!clock || !clock.dataset.ends) { return; }
    const left = Math.max(0, Math.floor((Date.parse(clock.dataset.ends) - Date.now()) / 1000));
    const out = clock.querySelector(".clock-left");
    if (out) { out.textContent = Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0"); }
  }
  setInterval(tickClock, 1000);

  connect();
})();
