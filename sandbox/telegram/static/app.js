// The chat page of the Telegram stand-in: long-polls /api/poll and renders one chat.
"use strict";

const state = { version: -1, current: null, chats: [], commands: [], blocked: false, poll: null,
  bot: null };
const $ = (id) => document.getElementById(id);

// Only Telegram's tags survive, with only the attributes Telegram gives them; the server has
// already validated the markup, this is the second line of defence.
const ALLOWED = new Set(["b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code",
  "pre", "blockquote", "span", "tg-spoiler", "tg-emoji"]);

function sanitize(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  const out = document.createDocumentFragment();
  copyChildren(template.content, out);
  return out;
}

function copyChildren(from, to) {
  for (const node of from.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) {
      to.appendChild(document.createTextNode(node.textContent));
      continue;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) continue;
    const tag = node.tagName.toLowerCase();
    if (!ALLOWED.has(tag) || tag === "tg-emoji") {
      copyChildren(node, to);
      continue;
    }
    let element;
    if (tag === "span" || tag === "tg-spoiler") {
      element = document.createElement("span");
      element.className = "tg-spoiler";
      element.addEventListener("click", () => element.classList.add("revealed"));
    } else {
      element = document.createElement(tag);
    }
    if (tag === "a") {
      const href = node.getAttribute("href") || "";
      if (/^(https?|tg):/i.test(href)) element.setAttribute("href", href);
    }
    if (tag === "code") {
      const cls = node.getAttribute("class") || "";
      if (/^language-[\w+-]+$/.test(cls)) element.className = cls;
    }
    copyChildren(node, element);
    to.appendChild(element);
  }
}

function toast(text, alert = false) {
  const box = $("toast");
  box.textContent = text;
  box.classList.toggle("alert", alert);
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { box.hidden = true; }, alert ? 6000 : 3000);
}

async function api(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body || {}),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok && !data.notice) throw new Error(`${response.status}`);
  return data;
}

function initials(name) {
  return (name || "?").trim().slice(0, 1).toUpperCase();
}

function renderChats() {
  const list = $("chats");
  list.replaceChildren();
  for (const chat of state.chats) {
    const item = document.createElement("li");
    item.dataset.chatId = chat.id;
    item.className = chat.id === state.current ? "active" : "";
    const avatar = document.createElement("div");
    avatar.className = "chat-avatar";
    avatar.textContent = initials(chat.first_name);
    const text = document.createElement("div");
    const name = document.createElement("div");
    name.className = "chat-name";
    name.textContent = chat.first_name;
    const sub = document.createElement("div");
    sub.className = "chat-sub";
    sub.textContent = `${chat.language_code || "—"} · id ${chat.id}${chat.blocked ? " · blocked" : ""}`;
    text.append(name, sub);
    item.append(avatar, text);
    item.addEventListener("click", () => selectChat(chat.id));
    list.appendChild(item);
  }
}

function time(date) {
  const d = new Date(date * 1000);
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function renderMessages(messages) {
  const box = $("messages");
  const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  box.replaceChildren();
  if (!messages.length) {
    const empty = document.createElement("div");
    empty.className = "empty";
    empty.textContent = "No messages here yet. Send /start to begin.";
    box.appendChild(empty);
  }
  const byId = new Map(messages.map((m) => [m.id, m]));
  for (const message of messages) {
    const wrap = document.createElement("div");
    wrap.className = `msg-wrap ${message.out ? "out" : "in"}`;
    wrap.dataset.messageId = message.id;
    const bubble = document.createElement("div");
    bubble.className = "msg";
    if (message.reply_to && byId.has(message.reply_to)) {
      const reply = document.createElement("div");
      reply.className = "reply";
      reply.appendChild(sanitize(byId.get(message.reply_to).html));
      bubble.appendChild(reply);
    }
    const body = document.createElement("span");
    body.className = "body";
    body.appendChild(sanitize(message.html));
    if (message.via) {
      const via = document.createElement("div");
      via.className = "via";
      via.textContent = `via @${message.via}`;
      bubble.appendChild(via);
    }
    const meta = document.createElement("span");
    meta.className = "meta";
    meta.textContent = `${message.edited ? "edited " : ""}${time(message.date)}`;
    bubble.append(body, meta);
    wrap.appendChild(bubble);
    if (message.buttons.length) wrap.appendChild(keyboard(message));
    box.appendChild(wrap);
  }
  if (atBottom || state.scrollDown) box.scrollTop = box.scrollHeight;
  state.scrollDown = false;
}

function keyboard(message) {
  const kb = document.createElement("div");
  kb.className = "kb";
  for (const row of message.buttons) {
    const line = document.createElement("div");
    line.className = "kb-row";
    for (const button of row) {
      const element = document.createElement("button");
      element.type = "button";
      element.textContent = button.text;
      if (button.web_app) {
        element.className = "url";
        element.dataset.webapp = button.web_app;
        element.addEventListener("click", () => openWebApp(button.web_app, button.text));
      } else if (button.url) {
        element.className = "url";
        element.addEventListener("click", () => { window.location.href = button.url; });
      } else if (button.callback_data) {
        element.addEventListener("click", () => tap(message.id, button.callback_data));
      } else {
        element.disabled = true;
      }
      line.appendChild(element);
    }
    kb.appendChild(line);
  }
  return kb;
}

// A Mini App opens in a panel over the chat, as Telegram's clients do; its launch address
// carries the init data the stand-in signed, in its fragment.
function openWebApp(url, title) {
  const old = document.getElementById("webapp");
  if (old) old.remove();
  const panel = document.createElement("div");
  panel.id = "webapp";
  panel.className = "webapp";
  panel.setAttribute("role", "dialog");
  panel.setAttribute("aria-label", title);
  const close = document.createElement("button");
  close.type = "button";
  close.className = "webapp-close";
  close.textContent = "✕";
  close.setAttribute("aria-label", "Close");
  close.addEventListener("click", () => panel.remove());
  const frame = document.createElement("iframe");
  frame.title = title;
  frame.src = url;
  panel.append(close, frame);
  document.body.appendChild(panel);
}

async function tap(messageId, data) {
  try {
    const result = await api(`/api/chats/${state.current}/tap`, { message_id: messageId, data });
    if (result.answer && result.answer.text) toast(result.answer.text, result.answer.show_alert);
  } catch (error) {
    toast(`Tap failed: ${error.message}`);
  }
}

function render(data) {
  state.version = data.version;
  state.chats = data.chats;
  state.commands = data.commands || [];
  if (state.current !== data.current) state.scrollDown = true;
  state.current = data.current;
  const chat = data.chats.find((c) => c.id === data.current);
  state.blocked = Boolean(chat && chat.blocked);
  state.bot = data.bot;
  if (data.bot) {
    $("bot-name").textContent = data.bot.first_name;
    $("bot-avatar").textContent = initials(data.bot.first_name);
  }
  const status = $("conv-status");
  status.textContent = data.typing ? "typing…"
    : `@${data.bot ? data.bot.username : "bot"} · chatting as ${chat ? chat.first_name : "?"}`;
  status.classList.toggle("typing", Boolean(data.typing));
  $("block").textContent = state.blocked ? "Unblock bot" : "Block bot";
  renderActions(data.actions || []);
  renderChats();
  renderMessages(data.messages);
  updateSuggestions();
}

function renderActions(names) {
  const box = $("actions");
  if (box.dataset.names === JSON.stringify(names)) return;
  box.dataset.names = JSON.stringify(names);
  box.replaceChildren();
  for (const name of names) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = name;
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        const result = await api("/api/actions", { name });
        toast(result.notice || `${name}: done`);
      } catch (error) {
        toast(`${name} failed: ${error.message}`);
      } finally {
        button.disabled = false;
      }
    });
    box.appendChild(button);
  }
}

async function pollLoop() {
  for (;;) {
    const controller = new AbortController();
    state.poll = controller;
    const params = new URLSearchParams({ since: String(state.version), wait: "25" });
    if (state.current !== null) params.set("chat", String(state.current));
    try {
      const response = await fetch(`/api/poll?${params}`, { signal: controller.signal });
      if (!response.ok) throw new Error(String(response.status));
      render(await response.json());
    } catch (error) {
      if (error.name !== "AbortError") await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

function restartPoll() {
  state.version = -1;
  if (state.poll) state.poll.abort();
}

async function selectChat(id) {
  await api(`/api/chats/${id}/select`);
  state.current = id;
  state.scrollDown = true;
  history.replaceState(null, "", "/");
  restartPoll();
}

async function send() {
  const input = $("composer-input");
  const text = input.value;
  if (!text.trim() || state.current === null) return;
  input.value = "";
  updateSuggestions();
  state.scrollDown = true;
  try {
    await api(`/api/chats/${state.current}/send`, { text });
  } catch (error) {
    input.value = text;
    toast(`Not sent: ${error.message}`);
  }
}

let activeSuggestion = 0;

function matchingCommands() {
  const value = $("composer-input").value;
  if (!value.startsWith("/") || value.includes(" ")) return [];
  const typed = value.slice(1).toLowerCase();
  return state.commands.filter((c) => c.command.startsWith(typed));
}

function updateSuggestions() {
  const list = $("suggestions");
  const found = matchingCommands();
  list.replaceChildren();
  list.hidden = found.length === 0;
  activeSuggestion = Math.min(activeSuggestion, Math.max(found.length - 1, 0));
  found.forEach((command, index) => {
    const item = document.createElement("li");
    item.className = index === activeSuggestion ? "active" : "";
    const name = document.createElement("span");
    name.className = "cmd";
    name.textContent = `/${command.command}`;
    const desc = document.createElement("span");
    desc.className = "desc";
    desc.textContent = command.description;
    item.append(name, desc);
    item.addEventListener("mousedown", (event) => {
      event.preventDefault();
      chooseSuggestion(command);
    });
    list.appendChild(item);
  });
}

function chooseSuggestion(command) {
  const input = $("composer-input");
  input.value = `/${command.command}`;
  updateSuggestions();
  input.focus();
}

// Inline mode: "@<bot> words" in the message field lists the bot's results above it; choosing
// one sends it into the chat "via @bot", as a Telegram app does.
const inline = { timer: null, queryId: null, words: "", results: [], nextOffset: "", active: 0 };

function inlineWords() {
  const match = /^@(\w+)\s+(.*)$/s.exec($("composer-input").value);
  if (!match || !state.bot || match[1].toLowerCase() !== state.bot.username.toLowerCase()) {
    return null;
  }
  return match[2];
}

function onInput() {
  activeSuggestion = 0;
  updateSuggestions();
  clearTimeout(inline.timer);
  const words = inlineWords();
  if (words === null) {
    closeInline();
    return;
  }
  inline.timer = setTimeout(() => askInline(words, ""), 300);
}

async function askInline(words, offset) {
  if (state.current === null || !words.trim()) {
    closeInline();
    return;
  }
  try {
    const answer = await api(`/api/chats/${state.current}/inline`, { query: words, offset });
    if (inlineWords() !== words) return; // typed on meanwhile
    inline.queryId = answer.query_id;
    inline.words = words;
    inline.results = offset ? inline.results.concat(answer.results) : answer.results;
    inline.nextOffset = answer.next_offset;
    if (!offset) inline.active = 0;
    renderInline();
  } catch (error) {
    toast(`Inline query failed: ${error.message}`);
  }
}

function closeInline() {
  inline.results = [];
  inline.queryId = null;
  $("inline-results").hidden = true;
}

function renderInline() {
  const list = $("inline-results");
  list.replaceChildren();
  list.hidden = false;
  if (!inline.results.length) {
    const none = document.createElement("li");
    none.className = "none";
    none.textContent = "No results";
    list.appendChild(none);
  }
  inline.results.forEach((result, index) => {
    const item = document.createElement("li");
    item.className = index === inline.active ? "active" : "";
    item.dataset.resultId = result.id;
    const thumb = document.createElement("span");
    thumb.className = "thumb";
    if (result.thumbnail_url) {
      const image = document.createElement("img");
      image.src = result.thumbnail_url;
      image.alt = "";
      thumb.appendChild(image);
    }
    const text = document.createElement("span");
    text.className = "result";
    const title = document.createElement("span");
    title.className = "cmd";
    title.textContent = result.title;
    const desc = document.createElement("span");
    desc.className = "desc";
    desc.textContent = result.description || "";
    text.append(title, desc);
    item.append(thumb, text);
    item.addEventListener("mousedown", (event) => {
      event.preventDefault();
      chooseInline(result.id);
    });
    list.appendChild(item);
  });
  if (inline.nextOffset) {
    const more = document.createElement("li");
    more.className = "more";
    more.textContent = "More results…";
    more.addEventListener("mousedown", (event) => {
      event.preventDefault();
      askInline(inline.words, inline.nextOffset);
    });
    list.appendChild(more);
  }
}

async function chooseInline(resultId) {
  const queryId = inline.queryId;
  closeInline();
  $("composer-input").value = "";
  state.scrollDown = true;
  try {
    await api(`/api/chats/${state.current}/inline/choose`, { query_id: queryId, result_id: resultId });
  } catch (error) {
    toast(`Not sent: ${error.message}`);
  }
}

function onKey(event) {
  if (inline.queryId !== null && inline.results.length) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      inline.active = (inline.active + step + inline.results.length) % inline.results.length;
      renderInline();
      return;
    }
    if (event.key === "Enter") {
      event.preventDefault();
      chooseInline(inline.results[inline.active].id);
      return;
    }
  }
  const found = matchingCommands();
  if (found.length && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
    event.preventDefault();
    const step = event.key === "ArrowDown" ? 1 : -1;
    activeSuggestion = (activeSuggestion + step + found.length) % found.length;
    updateSuggestions();
  } else if (found.length && event.key === "Tab") {
    event.preventDefault();
    chooseSuggestion(found[activeSuggestion]);
  } else if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    send();
  } else if (event.key === "Escape") {
    $("suggestions").hidden = true;
    closeInline();
  }
}

async function createChat(event) {
  event.preventDefault();
  const name = $("new-chat-name").value.trim() || "Patron";
  const result = await api("/api/chats", { first_name: name, language_code: $("new-chat-lang").value });
  $("new-chat-name").value = "";
  await selectChat(result.id);
}

function init() {
  const params = new URLSearchParams(window.location.search);
  if (params.get("chat")) state.current = Number(params.get("chat"));
  $("composer-input").addEventListener("keydown", onKey);
  $("composer-input").addEventListener("input", onInput);
  $("send").addEventListener("click", send);
  $("new-chat").addEventListener("submit", createChat);
  $("block").addEventListener("click", async () => {
    if (state.current === null) return;
    await api(`/api/chats/${state.current}/block`, { blocked: !state.blocked });
    restartPoll();
  });
  $("composer-input").focus();
  pollLoop();
}

init();
