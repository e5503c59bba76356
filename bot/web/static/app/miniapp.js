// The family overview: reads /app/api/overview with Telegram's signed init data and shows it.
"use strict";
(function () {
  const tg = window.Telegram && window.Telegram.WebApp;
  // Telegram's script reads the launch fragment itself; where it did not load (a stand-in
  // without the internet), the same fragment is read here.
  const launch = new URLSearchParams(window.location.hash.slice(1));
  const initData = (tg && tg.initData) || launch.get("tgWebAppData") || "";
  let launchTheme = {};
  try { launchTheme = JSON.parse(launch.get("tgWebAppThemeParams") || "{}"); } catch (e) { /* none */ }
  const main = document.getElementById("main");
  let texts = {};
  let lang = "en";

  function applyTheme() {
    const theme = (tg && tg.themeParams && Object.keys(tg.themeParams).length)
      ? tg.themeParams : launchTheme;
    for (const [key, value] of Object.entries(theme)) {
      document.documentElement.style.setProperty("--tg-theme-" + key.replace(/_/g, "-"), value);
    }
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  }

  function day(iso) {
    const [y, m, d] = iso.split("-").map(Number);
    return new Date(Date.UTC(y, m - 1, d));
  }

  function fullDate(iso) {
    return new Intl.DateTimeFormat(lang, {
      weekday: "long", day: "numeric", month: "long", timeZone: "UTC",
    }).format(day(iso));
  }

  async function api(path, options) {
    const response = await fetch(path, {
      ...(options || {}),
      headers: { "Authorization": "tma " + initData, "Content-Type": "application/json" },
    });
    if (!response.ok) {
      const error = new Error(response.status === 401 ? "unauthorized"
        : response.status === 429 ? "busy" : "failed");
      // A refusal says what to do in the patron's language, before any texts are loaded.
      try { error.text = (await response.json()).text; } catch (e) { /* not JSON */ }
      throw error;
    }
    return response.json();
  }

  function cover(title, url) {
    if (url) return el("img", { class: "cover", src: url, alt: "" });
    const initial = (title || "?").trim().charAt(0) || "?";
    return el("div", { class: "cover placeholder", "aria-hidden": "true" }, initial);
  }

  // Today and the 30 days after it: a loan due on day 30 is "in the next 30 days" too.
  const DAYS = 31;

  function timeline(cards, today) {
    const start = day(today);
    const counts = new Array(DAYS).fill(0);
    for (const card of cards) {
      for (const loan of card.loans || []) {
        if (!loan.due) continue;
        const offset = Math.round((day(loan.due) - start) / 86400000);
        if (offset >= 0 && offset < DAYS) counts[offset] += 1;
      }
    }
    const box = el("section", { class: "card", id: "timeline-box", "aria-labelledby": "timeline" },
      el("h2", { id: "timeline" }, texts.timeline));
    // Overdue loans lie before the strip's first day: the page is told how many, above it.
    if (texts.overdue) box.append(el("p", { class: "warn", id: "overdue" }, texts.overdue));
    if (!counts.some(Boolean)) {
      if (texts.overdue) return box;
      // Empty when no card could be read: nothing is known to be due, nor that nothing is.
      if (!texts.nothing_due) return null;
      box.append(el("p", { class: "note" }, texts.nothing_due));
      return box;
    }
    // Each day shows its day of the month; its full date (and how many are due) is read out.
    const strip = el("ol", { class: "timeline" });
    counts.forEach((count, offset) => {
      const when = new Date(start.getTime() + offset * 86400000).toISOString().slice(0, 10);
      const label = fullDate(when) + (count ? ": " + count : "");
      strip.append(el("li", { class: count ? "day due" : "day", title: label },
        el("span", { class: "sr" }, label),
        el("time", { datetime: when, "aria-hidden": "true" }, String(day(when).getUTCDate())),
        count ? el("b", { "aria-hidden": "true" }, String(count)) : null));
    });
    box.append(strip);
    return box;
  }

  function loanItem(loan) {
    const due = loan.due_text ? el("div", { class: "due" }, loan.due_text) : null;
    const body = el("div", { class: "body" },
      el("div", { class: "title" }, loan.title),
      loan.creator ? el("div", { class: "meta" }, loan.creator) : null,
      due);
    if (loan.refused) {
      body.append(el("div", { class: "warn" }, loan.refused));
    } else if (loan.tried) {
      // Its id is spent (tried from an earlier view): what became of it, and no button.
      body.append(el("div", { class: "meta result", role: "status" }, texts.already));
    } else if (loan.renew) {
      const button = el("button", { type: "button" }, texts.renew);
      const note = el("div", { class: "meta result", role: "status" }, "");
      button.addEventListener("click", () => renew(loan, button, note, due));
      body.append(button, note);
    }
    return el("li", { class: "item loan" }, cover(loan.title, loan.cover), body);
  }

  function holdItem(hold) {
    const lines = [hold.status, ...(hold.lines || [])];
    if (hold.hours) lines.push(hold.hours);
    return el("li", { class: "item hold" }, cover(hold.title, hold.cover),
      el("div", { class: "body" }, el("div", { class: "title" }, hold.title),
        hold.creator ? el("div", { class: "meta" }, hold.creator) : null,
        ...lines.filter(Boolean).map((line, index) =>
          el("div", { class: hold.ready ? "due" : "meta", "data-part": index ? "detail" : "status" },
            line))));
  }

  function list(title, items, empty, render) {
    const part = [el("h3", {}, title)];
    if (!items.length) part.push(el("p", { class: "note" }, empty));
    else part.push(el("ul", {}, ...items.map(render)));
    return part;
  }

  let current = null;

  function show(data) {
    current = data;
    texts = data.texts;
    lang = data.lang;
    document.documentElement.lang = lang;
    document.title = texts.title;
    main.replaceChildren(el("h1", {}, texts.title));
    if (!data.cards.length) {
      main.append(el("p", { class: "note" }, texts.no_cards));
      return;
    }
    const strip = timeline(data.cards, data.today);
    if (strip) main.append(strip);
    for (const card of data.cards) {
      const box = el("section", { class: "card" }, el("h2", {}, "👤 " + card.name));
      if (card.error) {
        box.append(el("p", { class: "warn" }, card.error));
        // A lapsed card: its own login, as the chat's button.
        if (card.login) {
          box.append(el("p", {}, el("a", { class: "login", href: card.login, target: "_blank",
            rel: "noopener" }, texts.login)));
        }
      }
      else {
        box.append(...list(texts.loans, card.loans, texts.no_loans, loanItem));
        box.append(...list(texts.holds, card.holds, texts.no_holds, holdItem));
        box.append(...list(texts.fees, card.fees, texts.no_fees, (fee) =>
          el("li", { class: "item fee" }, el("div", { class: "body" },
            el("div", { class: "title" }, fee.title),
            el("div", { class: "meta amount" }, fee.amount)))));
        if (card.fees_total) box.append(el("p", { class: "note total" }, card.fees_total));
      }
      // The shelf watches live in the chat (/watches); the page only shows them.
      if (card.watches && card.watches.length) {
        box.append(el("h3", {}, texts.watches),
          el("ul", {}, ...card.watches.map((line) =>
            el("li", { class: "item watch" }, el("div", { class: "body" }, line)))));
      }
      main.append(box);
    }
  }

  // The answer is told on the loan itself, which keeps its place in the list: the chat's line
  // for it (the new due date, the library's refusal, or no answer). An answer that spends the
  // loan's id, or whose card is gone, takes its button away, so the answer stays in view; the
  // others ("try again later", "log in again", "a moment") leave the button to press again.
  async function renew(loan, button, note, due) {
    button.disabled = true;
    button.textContent = texts.renewing;
    let answer;
    try {
      answer = await api("api/renew", { method: "POST", body: JSON.stringify({ id: loan.renew }) });
    } catch (error) {
      note.textContent = error.message === "busy" ? (error.text || texts.busy) : texts.unknown;
      return;
    } finally {
      button.disabled = false;
      button.textContent = texts.renew;
    }
    note.textContent = answer.text;
    // A lapsed login leaves the id unspent: pressed after logging in again, it renews.
    if (answer.result !== "failed" && answer.result !== "login") button.remove();
    if (answer.result === "renewed" && answer.due) {
      loan.due = answer.due;
      if (due && answer.due_text) due.textContent = answer.due_text;
      const old = document.getElementById("timeline-box");
      const strip = current && timeline(current.cards, current.today);
      if (old && strip) old.replaceWith(strip);
    }
  }

  async function load() {
    try {
      show(await api("api/overview"));
    } catch (error) {
      main.replaceChildren(el("p", { class: "warn", id: "status" }, typeof error.text === "string"
        ? error.text : (texts.card_failed || "The library could not be reached.")));
    }
  }

  applyTheme();
  if (tg) {
    tg.ready();
    if (tg.onEvent) tg.onEvent("themeChanged", applyTheme);
  }
  load();
})();
