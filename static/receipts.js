// Receipts: small behaviours the server cannot do. No inline scripts (the CSP forbids them).
"use strict";

// A marked claim in the answer leads to its finding, or to the result that grounds it.
document.addEventListener("click", (event) => {
  const mark = event.target.closest("mark[data-target]");
  if (!mark) return;
  const card = document.getElementById(mark.dataset.target);
  if (card) {
    card.scrollIntoView({ behavior: "smooth", block: "center" });
    card.classList.add("pulse");
    setTimeout(() => card.classList.remove("pulse"), 1200);
  }
});

// --- Working by keyboard ------------------------------------------------------------------
// j/k move between the queue's rows or the turn page's findings; c, d, n, e, a act on the
// current finding by pressing the same buttons a mouse would; ? lists the keys. Every action
// is an ordinary form, so all of it also works without this file.

const ITEMS = "[data-row], [data-finding]";
let currentId = null;

// A ticked box or a chosen radio button keeps the focus but takes no typing: the keys still work.
function isTyping(element) {
  if (!element || (element.tagName === "INPUT" && /^(checkbox|radio)$/.test(element.type))) return false;
  return element.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(element.tagName);
}

function items() {
  return Array.from(document.querySelectorAll(ITEMS));
}

function currentItem() {
  const active = document.activeElement && document.activeElement.closest(ITEMS);
  if (active) return active;
  return currentId ? document.getElementById(currentId) : null;
}

function focusItem(element) {
  if (!element) return;
  for (const other of document.querySelectorAll(".current")) other.classList.remove("current");
  element.classList.add("current");
  currentId = element.id || null;
  element.focus({ preventScroll: true });
  element.scrollIntoView({ block: "nearest" });
}

// "Confirm and next" on a turn with another open flag: the server names it, and it
// becomes the current finding.
document.body.addEventListener("goto-finding", (event) => {
  const detail = event.detail || {};
  const id = detail.id || (detail.value && detail.value.id);
  const card = id && document.getElementById(id);
  if (!card) return;
  focusItem(card);
  card.scrollIntoView({ behavior: "smooth", block: "start" });
});

function move(delta) {
  const list = items();
  if (!list.length) return;
  const index = list.indexOf(currentItem());
  const next = index < 0 ? (delta > 0 ? 0 : list.length - 1) : Math.min(list.length - 1, Math.max(0, index + delta));
  focusItem(list[next]);
}

function currentCard() {
  const item = currentItem();
  if (item && item.matches("[data-finding]")) return item;
  const first = document.querySelector("[data-finding]");
  if (first) focusItem(first);
  return first;
}

function say(card, text) {
  const box = card && card.querySelector(".refusal");
  if (box) box.textContent = text;
}

function press(card, selector, otherwise) {
  const button = card && card.querySelector(selector);
  if (button) button.click();
  else if (otherwise) say(card, otherwise);
}

function openKeys() {
  const dialog = document.getElementById("keys");
  if (!dialog) return;
  if (dialog.open) dialog.close();
  else dialog.showModal();
}

const KEYS = {
  j: () => move(1),
  k: () => move(-1),
  "?": openKeys,
  "/": () => {
    const search = document.querySelector("#filters input[name=q]");
    const drawer = search && search.closest("details");
    if (drawer) drawer.open = true;
    if (search) search.focus();
  },
  o: () => openRow(),
  Enter: () => openRow(),
  x: () => {
    const item = currentItem();
    const box = item && item.querySelector("input[type=checkbox]");
    if (box) box.click();
  },
  c: () => press(currentCard(), "button.confirm", "Only a reviewer can confirm."),
  C: () => press(currentCard(), "button.confirm.next", "Only a flag can be confirmed and left for the next."),
  n: () => press(currentCard(), "button.needscorr", "This finding has no correction to make."),
  d: () => {
    const card = currentCard();
    const reason = card && card.querySelector(".decide select[name=reason]");
    if (!reason) return say(card, "Only a reviewer can dismiss.");
    say(card, "Choose a reason with the arrow keys (or Tab to write one), then press Enter.");
    reason.focus();
  },
  e: () => {
    const card = currentCard();
    const text = card && card.querySelector("textarea[data-correction]");
    if (!text) return say(card, "There is no correction you can edit here.");
    const details = text.closest("details");
    if (details) details.open = true;
    text.focus();
    text.setSelectionRange(text.value.length, text.value.length);
  },
  a: () => {
    const card = currentCard();
    const own = card && card.querySelector("[data-own-correction]");
    press(
      card,
      "button.approvebtn",
      own ? own.textContent.trim() : "No correction waits for your approval here.",
    );
  },
  "[": () => follow("a[rel=prev]"),
  "]": () => follow("a[rel=next]"),
  u: () => follow("a[data-up]"),
};

function follow(selector) {
  const link = document.querySelector(selector);
  if (link) link.click();
}

function openRow() {
  const item = currentItem();
  const link = item && item.matches("[data-row]") && item.querySelector("a.turnlink");
  if (link) link.click();
}

// Back in the queue from a turn ("↑ queue" ends in #row-<turn>): the keys go on from that row.
// When the turn has left the filter (just decided), the list starts with the row after it,
// which j takes as the first.
if (location.hash.startsWith("#row-")) {
  const row = document.getElementById(location.hash.slice(1));
  if (row && row.matches("[data-row]")) focusItem(row);
}

document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (event.key === "Escape" && isTyping(target)) {
    target.blur();
    const item = target.closest(ITEMS) || (currentId && document.getElementById(currentId));
    if (item) focusItem(item);
    return;
  }
  if (isTyping(target)) {
    // Enter on the reason to dismiss dismisses; Ctrl+Enter in a text area sends its form.
    if (event.key === "Enter" && target.closest("form.decide") && target.name !== "verdict") {
      event.preventDefault();
      target.closest("form.decide").querySelector("button.dismiss").click();
    } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && target.tagName === "TEXTAREA") {
      event.preventDefault();
      target.form.requestSubmit();
    }
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "Enter" && target.closest && !target.matches(ITEMS)) return; // links, buttons
  const action = KEYS[event.key];
  if (!action) return;
  if (document.querySelector("dialog[open]") && event.key !== "?") return;
  event.preventDefault();
  action();
});

document.addEventListener("click", (event) => {
  if (event.target.closest("[data-keys-open]")) openKeys();
  const item = event.target.closest(ITEMS);
  if (item && !event.target.closest("a, button, input, select, textarea, summary")) focusItem(item);
});

// After htmx swaps a finding's card, the card keeps the focus it had.
document.addEventListener("htmx:afterSettle", () => {
  const element = currentId && document.getElementById(currentId);
  if (!element) return;
  element.classList.add("current");
  if (!document.activeElement || document.activeElement === document.body) element.focus({ preventScroll: true });
});

document.addEventListener("htmx:beforeRequest", (event) => {
  const card = event.detail.elt.closest && event.detail.elt.closest("[data-finding]");
  if (card) {
    currentId = card.id;
    say(card, "");
  }
});

// A refused action (403, 409, 400) answers in plain text: show it beside the form that asked.
document.addEventListener("htmx:responseError", (event) => {
  const card = event.detail.elt.closest && event.detail.elt.closest("[data-finding]");
  say(card, event.detail.xhr.responseText || `The server refused (${event.detail.xhr.status}).`);
});

// --- The header's menu at narrow widths ------------------------------------------------------
// The stylesheet folds the links behind the button only once this has run (menu-ready), so
// without this file they simply wrap.
for (const button of document.querySelectorAll("[data-menu-button]")) {
  const header = button.closest("[data-topbar]");
  const nav = document.getElementById(button.getAttribute("aria-controls"));
  if (!header || !nav) continue;
  button.hidden = false;
  header.classList.add("menu-ready");
  button.addEventListener("click", () => {
    const open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", String(open));
    nav.classList.toggle("open", open);
  });
}

// On a phone the queue's filters fold into a drawer, so the rows come first.
for (const drawer of document.querySelectorAll("details[data-drawer]")) {
  if (window.matchMedia("(max-width: 600px)").matches) drawer.open = false;
}

// Leaving a turn page lets go of the findings it held, so another reviewer need not wait
// for the hold to run out.
window.addEventListener("pagehide", () => {
  const holder = document.querySelector("[data-release]");
  const token = holder && holder.querySelector("input[name=csrfmiddlewaretoken]");
  if (!holder || !token || !navigator.sendBeacon) return;
  const form = new FormData();
  form.append("csrfmiddlewaretoken", token.value);
  navigator.sendBeacon(holder.dataset.release, form);
});

// The phone's decision bar: it names the current finding and presses its card's buttons (a
// select is focused, as d does, so a reason is chosen before anything is sent).
const bar = document.querySelector("[data-decisionbar]");
if (bar && window.matchMedia("(max-width: 600px)").matches && document.querySelector("[data-finding] form.decide")) {
  bar.hidden = false;
  document.body.classList.add("with-decisionbar");
  const label = () => {
    const card = currentItem() && currentItem().matches("[data-finding]") ? currentItem() : document.querySelector("[data-finding]");
    const title = card && card.querySelector(".codetitle");
    bar.querySelector("[data-bar-label]").textContent = title ? title.textContent : "";
  };
  label();
  document.addEventListener("focusin", label);
  document.addEventListener("htmx:afterSettle", label);
  bar.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-bar]");
    if (!button) return;
    const card = currentCard();
    const target = card && card.querySelector(button.dataset.bar);
    if (!target) return say(card, "This finding cannot be decided that way.");
    card.scrollIntoView({ block: "start" });
    if (target.tagName === "SELECT") target.focus();
    else target.click();
  });
}
