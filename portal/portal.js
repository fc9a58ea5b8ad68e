// The sewerbill portal: plain JavaScript, no build step. It talks to the HTTP API on the same
// origin (the local gateway) or on the API URL in config.json (AWS), with the JWT as a Bearer token.
"use strict";

const state = { token: null, claims: null, api: "", rules: {}, config: {}, pdfRoute: false, utilities: {} };
const $ = (sel, root = document) => root.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function say(text, bad = false) {
  const s = $("#status");
  s.textContent = text;
  s.classList.toggle("bad", bad);
}

function claimsOf(token) {
  const part = token.split(".")[1] || "";
  const json = atob(part.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(part.length / 4) * 4, "="));
  return JSON.parse(json);
}

function listed(value) {
  if (Array.isArray(value)) return value.map(String);
  return String(value || "").replace(/[\[\],]/g, " ").split(/\s+/).filter(Boolean);
}

const money = (s) => (Number(s) < 0 ? "−$" + String(s).replace("-", "") : "$" + s);

async function api(method, path, body, headers = {}) {
  const init = { method, headers: { authorization: "Bearer " + state.token, ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["content-type"] = "application/json";
  }
  const resp = await fetch(state.api + path, init);
  const type = resp.headers.get("content-type") || "";
  const data = type.includes("json") ? await resp.json() : await resp.text();
  if (resp.status === 401) {
    // The authorizer refused the token (expired or not ours): sign in again.
    sessionStorage.removeItem("sewerbill.token");
  }
  if (!resp.ok) {
    const msg = (data && data.error && data.error.message) || (data && data.message) || resp.statusText;
    const err = new Error(msg);
    err.status = resp.status;
    throw err;
  }
  return data;
}

// --- sign-in ---------------------------------------------------------------------------------
async function loadConfig() {
  try {
    const r = await fetch("config.json");
    if (r.ok) state.config = await r.json();
  } catch (_) { /* local: no config */ }
  state.api = state.config.api_url || "";
  try {
    const r = await fetch("rules.json");
    if (r.ok) state.rules = await r.json();
  } catch (_) { /* rules explained only when available */ }
}

// Cognito's hosted UI, authorization code flow with PKCE (RFC 7636, S256): a random verifier
// stays in this tab's sessionStorage, only its SHA-256 challenge goes to /oauth2/authorize,
// and the code that comes back is redeemed with the verifier at /oauth2/token. A random
// state ties the answer to this request.
const b64url = (bytes) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

function randomString(bytes = 32) {
  return b64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

async function pkceChallenge(verifier) {
  return b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
}

async function hostedSignIn(ev) {
  ev.preventDefault();
  const c = state.config;
  const verifier = randomString(48); // 64 characters, within RFC 7636's 43..128
  const nonce = randomString(16);
  sessionStorage.setItem("sewerbill.pkce", JSON.stringify({ verifier, state: nonce }));
  const q = new URLSearchParams({
    response_type: "code",
    client_id: c.client_id,
    redirect_uri: c.redirect_uri,
    scope: "openid email",
    state: nonce,
    code_challenge: await pkceChallenge(verifier),
    code_challenge_method: "S256",
  });
  location.assign(c.sign_in_url + "/oauth2/authorize?" + q);
}

// Back from the hosted UI with ?code=...&state=...: redeem the code for the ID token.
async function redeemCode(params) {
  const saved = JSON.parse(sessionStorage.getItem("sewerbill.pkce") || "null");
  sessionStorage.removeItem("sewerbill.pkce");
  history.replaceState(null, "", location.pathname);
  if (!saved || saved.state !== params.get("state")) {
    say("Sign-in failed: the answer does not match this sign-in.", true);
    return null;
  }
  const c = state.config;
  const r = await fetch(c.sign_in_url + "/oauth2/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      client_id: c.client_id,
      redirect_uri: c.redirect_uri,
      code: params.get("code"),
      code_verifier: saved.verifier,
    }),
  });
  if (!r.ok) {
    say("Sign-in failed: " + r.status, true);
    return null;
  }
  const { id_token } = await r.json();
  sessionStorage.setItem("sewerbill.token", id_token);
  return id_token;
}

async function showSignIn() {
  $("#sign-in").hidden = false;
  if (state.config.sign_in_url && state.config.client_id) {
    $("#hosted-ui").hidden = false;
    $("#hosted-ui-link").addEventListener("click", hostedSignIn);
  }
  try {
    const r = await fetch("/_local/portal/identities");
    if (!r.ok) return;
    const { identities } = await r.json();
    const box = $("#demo-identities");
    box.replaceChildren();
    identities.forEach((who, i) => {
      const id = "who-" + who.id;
      const input = el("input", { type: "radio", name: "identity", id, value: who.id });
      if (i === 0) input.checked = true;
      box.append(el("div", { class: "choice" }, input, el("label", { for: id, text: who.label })));
    });
    $("#demo-chooser").hidden = false;
  } catch (_) { /* not the local gateway */ }
}

async function demoSignIn(ev) {
  ev.preventDefault();
  const chosen = new FormData(ev.target).get("identity");
  const r = await fetch("/_local/portal/token", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ identity: chosen }),
  });
  if (!r.ok) return say("Sign-in failed: " + r.status, true);
  const { token } = await r.json();
  sessionStorage.setItem("sewerbill.token", token);
  await start(token);
}

function signOut() {
  sessionStorage.removeItem("sewerbill.token");
  location.hash = "";
  location.reload();
}

// --- customer -----------------------------------------------------------------------------------
function usageChart(bills) {
  const points = bills.map((b) => ({
    label: b.period.start.slice(0, 7),
    kgal: b.lines.filter((l) => l.unit === "kgal").reduce((s, l) => s + Number(l.quantity || 0), 0),
  }));
  if (!points.some((p) => p.kgal > 0)) return el("p", { class: "hint", text: "No metered usage on these bills." });
  const w = 320, h = 140, pad = 24, max = Math.max(...points.map((p) => p.kgal)) || 1;
  const bw = Math.min((w - pad * 2) / points.length, 48);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("role", "img");
  const desc = points.map((p) => `${p.label}: ${p.kgal} thousand gallons`).join("; ");
  svg.setAttribute("aria-label", "Usage by billing period. " + desc);
  points.forEach((p, i) => {
    const bh = ((h - pad * 2) * p.kgal) / max;
    const r = document.createElementNS(ns, "rect");
    r.setAttribute("x", pad + i * bw + 4);
    r.setAttribute("y", h - pad - bh);
    r.setAttribute("width", Math.max(bw - 8, 4));
    r.setAttribute("height", bh);
    r.setAttribute("class", "bar");
    const t = document.createElementNS(ns, "text");
    t.setAttribute("x", pad + i * bw + bw / 2);
    t.setAttribute("y", h - 6);
    t.setAttribute("text-anchor", "middle");
    t.textContent = p.label;
    const v = document.createElementNS(ns, "text");
    v.setAttribute("x", pad + i * bw + bw / 2);
    v.setAttribute("y", h - pad - bh - 4);
    v.setAttribute("text-anchor", "middle");
    v.textContent = p.kgal + " kgal";
    svg.append(r, t, v);
  });
  return svg;
}

function billView(tenant, account, bill) {
  const d = el("details", { class: "bill" });
  d.append(el("summary", {
    text: `Bill ${bill.bill_number || bill.bill_id} · ${bill.period.start} to ${bill.period.end} · due ${bill.due_date} · ${money(bill.amount_due)}`,
  }));
  const table = el("table");
  table.append(el("caption", { text: "Charges on this bill" }));
  const head = el("tr", {}, el("th", { scope: "col", text: "Charge" }), el("th", { scope: "col", text: "What it means" }),
    el("th", { scope: "col", class: "num", text: "Amount" }));
  table.append(el("thead", {}, head));
  const body = el("tbody");
  for (const line of bill.lines) {
    const explained = state.rules[line.rule_id] || "See the utility's ordinance for this rule.";
    body.append(el("tr", {},
      el("td", {}, el("span", { text: line.description }), el("br"), el("code", { text: line.rule_id })),
      el("td", { text: explained }),
      el("td", { class: "num", text: money(line.amount) })));
  }
  table.append(body);
  table.append(el("tfoot", {}, el("tr", {}, el("th", { scope: "row", colspan: "2", text: "Total this bill" }),
    el("td", { class: "num", text: money(bill.total) }))));
  d.append(el("div", { class: "scroll" }, table));
  if (state.pdfRoute) {
    const a = el("a", {
      class: "button pdf", href: "#", text: "Download PDF",
      "data-pdf": `/staff/${encodeURIComponent(tenant)}/accounts/${encodeURIComponent(account)}/bills/${encodeURIComponent(bill.bill_id)}/pdf`,
    });
    a.addEventListener("click", downloadPdf);
    d.append(a);
  } else {
    const b = el("button", { type: "button", class: "print", text: "Print or save as PDF" });
    b.addEventListener("click", () => { d.open = true; window.print(); });
    d.append(b);
  }
  return d;
}

async function downloadPdf(ev) {
  ev.preventDefault();
  const path = ev.currentTarget.dataset.pdf;
  const resp = await fetch(state.api + path, { headers: { authorization: "Bearer " + state.token } });
  if (!resp.ok) return say("The PDF could not be fetched (" + resp.status + ").", true);
  const blob = await resp.blob();
  const url = URL.createObjectURL(blob);
  const a = el("a", { href: url, download: path.split("/").slice(-2, -1)[0] + ".pdf" });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

async function accountCard(tenant, account) {
  let bills, ledger;
  try {
    [bills, ledger] = await Promise.all([
      api("GET", `/staff/${encodeURIComponent(tenant)}/accounts/${encodeURIComponent(account)}/bills`),
      api("GET", `/staff/${encodeURIComponent(tenant)}/accounts/${encodeURIComponent(account)}/ledger`),
    ]);
  } catch (e) {
    return null;
  }
  if (!bills.bills.length && !ledger.entries.length) return null;
  const card = $("#account-template").content.firstElementChild.cloneNode(true);
  card.dataset.account = account;
  card.dataset.tenant = tenant;
  $(".account-title", card).textContent = `Account ${account} · ${tenant}`;
  $(".balance-value", card).textContent = money(ledger.balance);
  $(".usage", card).append(usageChart(bills.bills));
  const list = $(".bills", card);
  if (!bills.bills.length) list.append(el("p", { class: "hint", text: "No bills yet." }));
  for (const b of [...bills.bills].reverse()) list.append(billView(tenant, account, b));
  const form = $(".pay-form", card);
  const due = Number(ledger.balance) > 0 ? ledger.balance : "";
  form.amount.value = due;
  form.amount.id = `amount-${tenant}-${account}`;
  form.addEventListener("submit", (ev) => pay(ev, tenant, account, card));
  const parcels = listed(state.claims.parcels);
  // PP-CWU-RECONSIDER: a reconsideration is of a stormwater charge, so it is offered only on an
  // account billed one (not on the same customer's sewer account)
  const stormwater = bills.bills.some((b) => (b.lines || []).some((l) => String(l.rule_id || "").startsWith("PP-CWU")));
  if (parcels.length && stormwater) {
    const box = $(".reconsider", card);
    const f = $(".reconsider-form", box);
    for (const p of parcels) f.parcel.append(el("option", { value: p, text: p }));
    const billSel = el("select", { name: "bill_id" });
    for (const b of bills.bills) billSel.append(el("option", { value: b.bill_id, text: b.bill_number || b.bill_id }));
    const amount = el("input", { name: "asserted_amount", inputmode: "decimal", required: "", pattern: "^[0-9]+(\\.[0-9]{1,2})?$" });
    f.insertBefore(el("label", {}, "Bill ", billSel), f.reason.parentElement);
    f.insertBefore(el("label", {}, "The amount you believe is right (USD) ", amount), f.querySelector("button"));
    f.addEventListener("submit", (ev) => reconsider(ev, tenant));
    box.hidden = false;
  }
  return card;
}

async function pay(ev, tenant, account, card) {
  ev.preventDefault();
  const form = ev.target;
  const amount = form.amount.value.trim();
  // One key per payment attempt: a retry of the same click cannot pay twice.
  const key = form.dataset.key || (form.dataset.key = "portal-" + crypto.randomUUID());
  try {
    const out = await api("POST", "/payments", { tenant, account_id: account, amount }, { "Idempotency-Key": key });
    delete form.dataset.key;
    const ledger = await api("GET", `/staff/${encodeURIComponent(tenant)}/accounts/${encodeURIComponent(account)}/ledger`);
    $(".balance-value", card).textContent = money(ledger.balance);
    say(`Payment of ${money(out.amount)} received (reference ${out.reference}).`);
  } catch (e) {
    say("Payment not taken: " + e.message, true);
  }
}

async function reconsider(ev, tenant) {
  ev.preventDefault();
  const f = ev.target;
  const body = { bill_id: f.bill_id.value, grounds: f.reason.value, asserted_amount: f.asserted_amount.value };
  try {
    const out = await api("POST", `/parcels/${encodeURIComponent(tenant)}/${encodeURIComponent(f.parcel.value)}/reconsiderations`, body);
    say(`Reconsideration request filed${out.reconsideration_id ? " (" + out.reconsideration_id + ")" : ""}.`);
    f.reset();
  } catch (e) {
    say("Request not filed: " + e.message, true);
  }
}

async function showCustomer() {
  $("#customer").hidden = false;
  const box = $("#accounts");
  box.replaceChildren(el("p", { text: "Loading…" }));
  const cards = [];
  for (const tenant of listed(state.claims.tenants)) {
    for (const account of listed(state.claims.accounts)) {
      const card = await accountCard(tenant, account);
      if (card) cards.push(card);
    }
  }
  box.replaceChildren(...(cards.length ? cards : [el("p", { text: "No bills on your accounts yet." })]));
}

// --- owner -----------------------------------------------------------------------------------------
async function showOwner() {
  $("#owner").hidden = false;
  const box = $("#parcels");
  box.replaceChildren();
  for (const tenant of listed(state.claims.tenants)) {
    for (const parcel of listed(state.claims.parcels)) {
      let data;
      try {
        data = await api("GET", `/owners/${encodeURIComponent(tenant)}/parcels/${encodeURIComponent(parcel)}/bills`);
      } catch (e) {
        continue;
      }
      const card = el("article", { class: "card" }, el("h3", { text: `Parcel ${parcel} · ${tenant}` }));
      const table = el("table");
      table.append(el("caption", { text: "Bills on this parcel" }));
      table.append(el("thead", {}, el("tr", {}, ...["Period", "Due", "Amount", "Paid?"].map((t) => el("th", { scope: "col", text: t })))));
      const body = el("tbody");
      for (const b of data.bills) {
        body.append(el("tr", {}, el("td", { text: `${b.period.start} to ${b.period.end}` }), el("td", { text: b.due_date }),
          el("td", { class: "num", text: money(b.total) }), el("td", { class: b.paid ? "ok" : "bad", text: b.paid ? "Paid" : "Not paid" })));
      }
      if (!data.bills.length) body.append(el("tr", {}, el("td", { colspan: "4", text: "No bills yet." })));
      table.append(body);
      card.append(el("div", { class: "scroll" }, table));
      box.append(card);
    }
  }
  if (!box.children.length) box.append(el("p", { text: "No parcels with bills." }));
}

// --- staff: the clerk's workbench (find an account, the account page) ----------------------------
// Money is kept as integer cents (BigInt) from the API's decimal strings: no float ever adds it.
function cents(s) {
  const text = String(s).trim();
  const neg = text.startsWith("-");
  const [whole, frac = ""] = text.replace(/^[-+]/, "").split(".");
  const value = BigInt(whole || "0") * 100n + BigInt((frac + "00").slice(0, 2));
  return neg ? -value : value;
}

function dollars(c) {
  const neg = c < 0n;
  const abs = neg ? -c : c;
  const whole = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const frac = (abs % 100n).toString().padStart(2, "0");
  return (neg ? "−$" : "$") + whole + "." + frac;
}

const usd = (s) => dollars(cents(s));
// A balance below zero is money the utility owes the customer: shown as a credit.
const balanceText = (s) => (cents(s) < 0n ? "credit " + dollars(-cents(s)) : dollars(cents(s)));

function usDate(iso) {
  if (!iso) return "";
  const d = new Date(String(iso).slice(0, 10) + "T00:00:00Z");
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleDateString("en-US", { timeZone: "UTC", month: "short", day: "numeric", year: "numeric" });
}

const usDateTime = (iso) => {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleString("en-US", { timeZone: "UTC", month: "short", day: "numeric", year: "numeric",
    hour: "numeric", minute: "2-digit" }) + " UTC";
};

const FIELD_NAMES = {
  account_id: "account", parcel_id: "parcel", meter_id: "meter", name: "name", service_address: "service address",
  mailing_address: "mailing address", owner_name: "owner", bill_recipient_name: "bill recipient",
  owner_address: "owner's address", bill_recipient_address: "bill recipient's address",
};
const KIND_NAMES = { charge: "Charge", payment: "Payment", adjustment: "Adjustment", late_charge: "Late charge",
  penalty: "Penalty", credit: "Credit", tax_roll: "Moved to tax roll" };

const enc = encodeURIComponent;
const staffPath = (tenant, rest) => `/staff/${enc(tenant)}/${rest}`;

function table(caption, headers, rows, numeric = []) {
  const t = el("table");
  t.append(el("caption", { text: caption }));
  t.append(el("thead", {}, el("tr", {}, ...headers.map((h, i) =>
    el("th", { scope: "col", class: numeric.includes(i) ? "num" : "", text: h })))));
  const body = el("tbody");
  for (const r of rows) {
    body.append(el("tr", {}, ...r.map((c, i) => {
      const td = el("td", { class: numeric.includes(i) ? "num" : "" });
      if (c instanceof Node) td.append(c); else td.textContent = c == null ? "" : String(c);
      return td;
    })));
  }
  if (!rows.length) body.append(el("tr", {}, el("td", { colspan: String(headers.length), class: "hint", text: "None." })));
  t.append(body);
  return el("div", { class: "scroll" }, t);
}

async function utilityNames(tenants) {
  const today = new Date().toISOString().slice(0, 10);
  await Promise.all(tenants.map(async (t) => {
    if (state.utilities[t]) return;
    try {
      const v = await api("GET", `/tariffs/${enc(t)}?on=${today}`);
      state.utilities[t] = (v.tariff && v.tariff.name) || t;
    } catch (_) { state.utilities[t] = t; }
  }));
}
const utility = (t) => state.utilities[t] || t;

async function showWorkbench() {
  const tenants = listed(state.claims.tenants);
  await utilityNames(tenants);
  $("#search-tenant").replaceChildren(...tenants.map((t) => el("option", { value: t, text: utility(t) })));
  $("#workbench").hidden = false;
  $("#search-form").addEventListener("submit", (ev) => { ev.preventDefault(); runSearch(null); });
  const m = /^#account\/([^/]+)\/(.+)$/.exec(location.hash);
  if (m) await openAccount(decodeURIComponent(m[1]), decodeURIComponent(m[2]));
}

async function runSearch(cursor) {
  const tenant = $("#search-tenant").value, q = $("#search-q").value.trim();
  const box = $("#search-results");
  if (!q) return;
  // Only the latest search draws its answer: an earlier one answering late is dropped.
  const seq = (state.searchSeq = (state.searchSeq || 0) + 1);
  box.setAttribute("aria-busy", "true");
  let page;
  try {
    const query = `q=${enc(q)}&limit=20` + (cursor ? `&cursor=${enc(cursor)}` : "");
    page = await api("GET", staffPath(tenant, `search?${query}`));
  } catch (e) {
    if (seq === state.searchSeq) box.replaceChildren(el("p", { class: "bad", text: "Search failed: " + e.message }));
    return;
  } finally {
    if (seq === state.searchSeq) box.removeAttribute("aria-busy");
  }
  if (seq !== state.searchSeq) return;
  let list = $("#search-hits", box);
  if (!cursor || !list) {
    const count = el("h3", { id: "search-count" });
    list = el("ol", { id: "search-hits", class: "hits" });
    box.replaceChildren(count, list);
  }
  for (const h of page.hits) {
    const link = el("a", { href: `#account/${enc(tenant)}/${enc(h.account_id)}`, class: "hit-link",
      text: `${h.account_id} · ${h.name}` });
    link.addEventListener("click", (ev) => { ev.preventDefault(); openAccount(tenant, h.account_id); });
    const why = h.matched.map((m) => `${FIELD_NAMES[m.field] || m.field} “${m.value}”`).join("; ");
    list.append(el("li", { class: "hit" }, link, el("span", { class: "hit-address", text: h.service_address }),
      el("span", { class: "hit-why", text: `${h.match === "exact" ? "exact id" : h.match === "prefix" ? "starts with" : "words"}: ${why}` })));
  }
  $("#search-count", box).textContent = list.children.length
    ? `${list.children.length} account${list.children.length === 1 ? "" : "s"} found${page.next_cursor ? " so far" : ""}`
    : "No account found";
  $("#search-more", box)?.remove();
  if (page.next_cursor) {
    const more = el("button", { type: "button", id: "search-more", text: "More results" });
    more.addEventListener("click", () => runSearch(page.next_cursor));
    box.append(more);
  }
  if (page.truncated) box.append(el("p", { class: "hint", text: "Many accounts match: type more to narrow the search." }));
}

// Every page of a list route (limit/cursor) in order.
async function allPages(path, key) {
  const out = [];
  let cursor = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const page = await api("GET", path + sep + "limit=200" + (cursor ? "&cursor=" + enc(cursor) : ""));
    out.push(...page[key]);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

async function openAccount(tenant, account) {
  const box = $("#account-page");
  const seq = (state.openSeq = (state.openSeq || 0) + 1);
  box.replaceChildren(el("p", { text: "Loading the account…" }));
  history.replaceState(null, "", `#account/${enc(tenant)}/${enc(account)}`);
  const base = staffPath(tenant, `accounts/${enc(account)}`);
  let summary, bills, ledger, notices;
  try {
    [summary, bills, ledger] = await Promise.all([
      api("GET", base + "/summary"),
      allPages(base + "/bills", "bills"),
      api("GET", base + "/ledger"),
    ]);
  } catch (e) {
    box.replaceChildren(el("p", { class: "bad", text: "The account could not be read: " + e.message }));
    return;
  }
  try { notices = await allPages(base + "/notices", "notices"); } catch (e) { notices = null; }
  if (seq !== state.openSeq) return; // another account was opened meanwhile
  const a = summary.account;
  const page = el("article", { class: "card account-page", id: "account-view", "aria-labelledby": "account-heading",
    "data-tenant": tenant, "data-account": account });
  page.append(el("h2", { id: "account-heading", tabindex: "-1", text: `Account ${a.account_id} · ${a.name}` }));
  page.append(el("p", { class: "utility", text: summary.utility }));
  const facts = el("dl", { class: "facts" });
  const fact = (k, v) => { if (v) facts.append(el("dt", { text: k }), el("dd", { text: v })); };
  fact("Service address", a.service_address);
  fact("Mailing address", `${a.mailing_address} ${a.zip || ""}`.trim());
  fact("Class", a.class);
  fact("Opened", usDate(a.opened_on));
  fact("Closed", a.closed_on ? usDate(a.closed_on) : "");
  fact("Parcel", a.parcel_id);
  fact("Meters", summary.meters.join(", "));
  fact("Owner", a.owner_name);
  fact("Email", a.email ? `${a.email}${a.email_opt_in ? " (bills by email)" : ""}` : "");
  page.append(facts);

  // balance and what is due by when
  const due = summary.due;
  const money = el("div", { class: "money-box" },
    el("p", { class: "balance" }, el("span", { class: "label", text: "Balance " }),
      el("strong", { class: "account-balance", text: balanceText(summary.balance) })));
  if (cents(due.past_due) > 0n) money.append(el("p", { class: "bad past-due", text: `Past due: ${usd(due.past_due)}` }));
  if (due.next_due_date) {
    money.append(el("p", { class: "next-due", text: `Due by ${usDate(due.next_due_date)}: ${usd(due.next_due_amount)}` }));
  } else if (cents(summary.balance) <= 0n) {
    money.append(el("p", { class: "ok", text: "Nothing is due." }));
  }
  money.append(el("p", { class: "hint", text: `As of ${usDate(summary.as_of)}.` }));
  page.append(money);
  page.append(el("h3", { text: "Unpaid by age" }));
  page.append(table("Unpaid amounts by days since posted", ["Current", "30 days", "60 days", "90+ days"],
    [["current", "30", "60", "90+"].map((k) => usd(summary.aging[k]))], [0, 1, 2, 3]));

  if (summary.held.length) {
    page.append(el("h3", { text: "Held periods" }));
    page.append(table("Periods not billed, and why", ["Period", "Why it is held", "Who can supply it"],
      summary.held.map((h) => [`${usDate(h.period_start)} to ${usDate(h.period_end)}`, h.reason, h.who_can_supply])));
  }

  page.append(el("h3", { text: "Bills" }));
  const billBox = el("div", { class: "bills" });
  if (!bills.length) billBox.append(el("p", { class: "hint", text: "No bills yet." }));
  for (const b of [...bills].reverse()) billBox.append(staffBill(tenant, account, b));
  page.append(billBox);

  page.append(el("h3", { text: "Ledger" }));
  let running = 0n;
  const rows = ledger.entries.map((e) => {
    running += cents(e.amount);
    return [usDate(e.posted_on), KIND_NAMES[e.kind] || e.kind, e.rule_id ? el("code", { text: e.rule_id }) : "",
      e.description || e.reference || "", e.fund, usd(e.amount), balanceText(dollarsPlain(running))];
  });
  const ledgerTable = table("Every entry, oldest first, with the balance after it",
    ["Posted", "Kind", "Rule", "What", "Fund", "Amount", "Balance"], rows, [5, 6]);
  ledgerTable.id = "ledger";
  page.append(ledgerTable);

  page.append(el("h3", { text: "Payments" }));
  const paid = ledger.entries.filter((e) => e.kind === "payment");
  const payments = table("Payments received", ["Paid on", "Reference", "Amount"],
    paid.map((e) => [usDate(e.posted_on), e.reference || "", usd(String(e.amount).replace(/^-/, ""))]), [2]);
  payments.id = "payments";
  page.append(payments);

  page.append(el("h3", { text: "Reads and consumption" }));
  page.append(usageSection(summary.usage, bills));

  if (summary.strength) {
    const s = summary.strength;
    page.append(el("h3", { text: "Strength category" }));
    const basis = s.basis && typeof s.basis === "object"
      ? Object.entries(s.basis).filter(([, v]) => v != null).map(([k, v]) => `${k} ${v}`).join(", ") : "none";
    page.append(el("p", { text: `Category ${s.category}, in force from ${usDate(s.effective_from)} (sampled as of ${usDate(s.as_of)}). Basis: ${basis}.` }));
  }
  if (summary.stormwater) {
    const w = summary.stormwater;
    page.append(el("h3", { text: "Stormwater parcel" }));
    page.append(el("p", { text: `Parcel ${w.parcel_id}: ${w.eru} ERU (${w.use}); credit ${w.credit_percent}%.` }));
  }

  page.append(el("h3", { text: "Notices sent" }));
  page.append(noticesSection(tenant, notices));
  if (typeof counterPanel === "function") page.append(counterPanel(tenant, a)); // cashier.js (issue 33)
  box.replaceChildren(page);
  $("#account-heading").focus();
}

function dollarsPlain(c) {
  // cents back to the API's decimal string (for balanceText)
  const neg = c < 0n, abs = neg ? -c : c;
  return (neg ? "-" : "") + (abs / 100n).toString() + "." + (abs % 100n).toString().padStart(2, "0");
}

function derivation(details) {
  const entries = Object.entries(details || {});
  if (!entries.length) return el("span", { class: "hint", text: "—" });
  const dl = el("dl", { class: "derivation" });
  for (const [k, v] of entries) {
    dl.append(el("dt", { text: k.replace(/_/g, " ") }),
      el("dd", { text: Array.isArray(v) ? v.join(", ") : typeof v === "object" && v !== null ? JSON.stringify(v) : String(v) }));
  }
  return dl;
}

function staffBill(tenant, account, bill) {
  const d = el("details", { class: "bill", "data-bill": bill.bill_id });
  d.append(el("summary", {
    text: `Bill ${bill.bill_number || bill.bill_id} · ${usDate(bill.period.start)} to ${usDate(bill.period.end)} · due ${usDate(bill.due_date)} · ${usd(bill.amount_due)}`,
  }));
  const rows = bill.lines.map((ln) => [
    el("code", { class: "rule", text: ln.rule_id }),
    el("span", {}, el("span", { text: ln.description }), el("br"),
      el("span", { class: "hint", text: state.rules[ln.rule_id] || "" })),
    ln.quantity != null && ln.quantity !== "" ? `${ln.quantity}${ln.unit ? " " + ln.unit : ""}${ln.rate ? " × " + ln.rate : ""}` : "",
    derivation(ln.details),
    usd(ln.amount),
  ]);
  const t = table("Lines of this bill, each with its rule and derivation",
    ["Rule", "Charge", "Quantity", "Derivation", "Amount"], rows, [4]);
  $("table", t).append(el("tfoot", {},
    el("tr", {}, el("th", { scope: "row", colspan: "4", text: "Total this bill" }), el("td", { class: "num", text: usd(bill.total) })),
    el("tr", {}, el("th", { scope: "row", colspan: "4", text: "Previous balance" }), el("td", { class: "num", text: usd(bill.previous_balance) })),
    el("tr", {}, el("th", { scope: "row", colspan: "4", text: "Payments since" }), el("td", { class: "num", text: usd(bill.payments_since) })),
    el("tr", {}, el("th", { scope: "row", colspan: "4", text: "Amount due" }), el("td", { class: "num", text: usd(bill.amount_due) }))));
  d.append(t);
  if (state.pdfRoute) {
    const a = el("a", { class: "button pdf", href: "#", text: `PDF of bill ${bill.bill_number || bill.bill_id}`,
      "data-pdf": staffPath(tenant, `accounts/${enc(account)}/bills/${enc(bill.bill_id)}/pdf`) });
    a.addEventListener("click", downloadPdf);
    d.append(a);
  }
  return d;
}

function usageSection(usage, bills) {
  const box = el("div", { class: "usage-box" });
  if (!usage.length) {
    box.append(el("p", { class: "hint", text: "No consumption kept for this account yet." }));
    return box;
  }
  const kgal = (u) => Number(u.volume_gal) / 1000; // drawing only: the table shows the exact figure
  const max = Math.max(...usage.map(kgal), 1);
  const w = 360, h = 150, pad = 26, bw = Math.min((w - pad * 2) / usage.length, 44);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "Consumption by period: " + usage.map((u) => `${usDate(u.period.start)} ${u.volume_gal} gallons`).join("; "));
  usage.forEach((u, i) => {
    const bh = ((h - pad * 2) * kgal(u)) / max;
    const r = document.createElementNS(ns, "rect");
    r.setAttribute("x", pad + i * bw + 3);
    r.setAttribute("y", h - pad - bh);
    r.setAttribute("width", Math.max(bw - 6, 3));
    r.setAttribute("height", bh);
    r.setAttribute("class", u.estimated ? "bar estimated" : "bar");
    const t = document.createElementNS(ns, "text");
    t.setAttribute("x", pad + i * bw + bw / 2);
    t.setAttribute("y", h - 8);
    t.setAttribute("text-anchor", "middle");
    t.textContent = u.period.start.slice(5, 7) + "/" + u.period.start.slice(2, 4);
    svg.append(r, t);
  });
  box.append(el("figure", { class: "usage" }, svg));
  const reads = (u) => u.reads.map((r) => `${r.meter_id || ""} ${usDate(r.read_on)} ${r.reading}`.trim()).join("; ");
  box.append(table("Consumption kept per period", ["Period", "Gallons", "Quality", "Meters", "Reads"],
    usage.map((u) => [`${usDate(u.period.start)} to ${usDate(u.period.end)}`, u.volume_gal,
      u.estimated ? `${u.quality} (estimated)` : u.quality, u.meters.map((m) => m.meter_id).join(", "), reads(u)]), [1]));
  const billed = bills.flatMap((b) => (b.reads || []).map((r) => [b.bill_number || b.bill_id, r.meter_id]));
  if (billed.length) box.append(el("p", { class: "hint", text: `Reads printed on bills: ${billed.length}.` }));
  return box;
}

function noticesSection(tenant, notices) {
  const box = el("div", { id: "notices" });
  if (notices === null) {
    box.append(el("p", { class: "bad", text: "The notice log could not be read." }));
    return box;
  }
  if (!notices.length) {
    box.append(el("p", { class: "hint", text: "No notice sent yet." }));
    return box;
  }
  for (const n of [...notices].reverse()) {
    const d = el("details", { class: "notice", "data-notice": n.notice_id });
    d.append(el("summary", { text: `${usDateTime(n.sent_at || n.at)} · ${n.subject || n.trigger || n.rule_id || "notice"} · ${n.channel} · ${n.status}` }));
    const body = el("div", { class: "notice-body" }, el("p", { class: "hint", text: "Opening…" }));
    d.append(body);
    d.addEventListener("toggle", async () => {
      if (!d.open || d.dataset.loaded) return;
      d.dataset.loaded = "1";
      try {
        const copy = await api("GET", staffPath(tenant, `notices/${enc(n.notice_id)}`));
        const parts = [el("pre", { class: "notice-text", text: copy.text })];
        if (copy.pdf) {
          const a = el("a", { class: "button pdf", href: "#", text: "PDF of this notice", "data-pdf": copy.pdf.route });
          a.addEventListener("click", downloadPdf);
          parts.push(a);
        }
        parts.push(el("p", { class: "hint", text: `Rule ${copy.rule_id || "—"} · to the ${copy.recipient_role || "customer"} · SHA-256 ${copy.content_sha256}` }));
        body.replaceChildren(...parts);
      } catch (e) {
        body.replaceChildren(el("p", { class: "bad", text: "The notice could not be read: " + e.message }));
      }
    });
    box.append(d);
  }
  return box;
}

// --- staff -----------------------------------------------------------------------------------------
async function showStaff() {
  await showWorkbench();
  $("#staff").hidden = false;
  const sel = $("#cycle-tenant");
  sel.replaceChildren(...listed(state.claims.tenants).map((t) => el("option", { value: t, text: utility(t) })));
  const start = $("#cycle-start");
  if (!start.value) start.value = state.config.default_cycle || "2025-01-01";
  $("#cycle-form").addEventListener("submit", (ev) => { ev.preventDefault(); loadCycle(); });
  showReports();
  if (typeof showCashier === "function") showCashier(); // cashier.js (issue 33)
  await loadCycle();
}

async function loadCycle() {
  const tenant = $("#cycle-tenant").value, start = $("#cycle-start").value;
  const box = $("#cycle");
  box.replaceChildren(el("p", { text: "Loading…" }));
  try {
    const s = await api("GET", `/staff/${encodeURIComponent(tenant)}/cycles/${start}`);
    const dl = el("dl", { class: "facts" });
    for (const [k, v] of Object.entries(s)) {
      if (typeof v === "object" && v !== null) continue;
      dl.append(el("dt", { text: k.replace(/_/g, " ") }), el("dd", { text: String(v) }));
    }
    const held = s.held || s.held_accounts || [];
    const heldBox = el("div", {}, el("h3", { text: `Held accounts (${held.length})` }));
    if (held.length) {
      const ul = el("ul");
      for (const h of held) ul.append(el("li", { text: `${h.account_id}: ${h.reason || h.reasons || JSON.stringify(h)}` }));
      heldBox.append(ul);
    } else heldBox.append(el("p", { class: "hint", text: "No account is held." }));
    box.replaceChildren(dl, heldBox, await pendingDecisions(tenant));
  } catch (e) {
    box.replaceChildren(el("p", { class: "bad", text: "No summary: " + e.message }));
  }
}

// --- staff: reports (aging, revenue, reconciliation, unbilled, suspense, failed notices) --------
// Each one as a table on screen, the route's own CSV (spreadsheet-safe, written by the service)
// to download, and a printable page (the print style sheet shows the report alone).
const REPORT_NAMES = {
  aging: "Aging of balances", revenue: "Revenue by fund", reconciliation: "Reconciliation of funds",
  unbilled: "Unbilled accounts", suspense: "Payments waiting in suspense", "failed-notices": "Notices that could not be sent",
  journal: "Daily journal", "trial-balance": "Trial balance by fund",
};
const DECIMAL = /^-?\d+\.\d{2}$/;
const FUND_NAMES = { om: "Operation and maintenance", replacement: "Replacement" };
const REPORT_COLUMNS = { aging: ["account_id", "current", "30", "60", "90+", "balance"] };
const COLUMN_NAMES = { account_id: "Account", gl_account: "GL account", gl_name: "GL account name", as_of: "As of", "30": "30 days past due", "60": "60 days past due", "90+": "90 days or more past due" };
const columnName = (c) => COLUMN_NAMES[c] || (c.charAt(0).toUpperCase() + c.slice(1)).replace(/_/g, " ");

function showReports() {
  const tenants = listed(state.claims.tenants);
  $("#report-tenant").replaceChildren(...tenants.map((t) => el("option", { value: t, text: utility(t) })));
  $("#reports").hidden = false;
  $("#report-form").addEventListener("submit", (ev) => { ev.preventDefault(); loadReport(); });
}

function reportPath(tenant, kind, format) {
  if (kind === "failed-notices") return staffPath(tenant, "notices/failed");
  const q = new URLSearchParams();
  const start = $("#report-start").value, end = $("#report-end").value;
  if ((kind === "revenue" || kind === "reconciliation") && start) q.set("start", start);
  if ((kind === "revenue" || kind === "reconciliation") && end) q.set("end", end);
  if (kind === "journal" && start) q.set("start", start);
  if (kind === "journal" && end) q.set("end", end);
  if (kind === "trial-balance" && end) {
    const day = new Date(end + "T00:00:00Z");
    day.setUTCDate(day.getUTCDate() - 1);
    q.set("as_of", day.toISOString().slice(0, 10));
  }
  if (format) q.set("format", format);
  const qs = q.toString();
  return staffPath(tenant, `reports/${kind}`) + (qs ? "?" + qs : "");
}

async function loadReport() {
  const tenant = $("#report-tenant").value, kind = $("#report-kind").value;
  const box = $("#report");
  box.replaceChildren(el("p", { text: "Loading…" }));
  try {
    let rows = [];
    if (kind === "suspense") rows = await allPages(reportPath(tenant, kind), "rows");
    else {
      const body = await api("GET", reportPath(tenant, kind));
      rows = body.rows || body.notices || body.failed || [];
    }
    // a report's own order where JavaScript would not keep it (keys like "30" come first)
    const fixed = REPORT_COLUMNS[kind];
    const columns = fixed && rows.length ? fixed.filter((c) => c in rows[0])
      : rows.length ? Object.keys(rows[0]).filter((k) => typeof rows[0][k] !== "object" || rows[0][k] === null) : [];
    const numeric = columns.map((c, i) => (rows.every((r) => r[c] == null || DECIMAL.test(String(r[c]))) && rows.length ? i : -1)).filter((i) => i >= 0);
    const cells = rows.map((r) => columns.map((c, i) => {
      const v = r[c];
      if (v == null) return "";
      if (numeric.includes(i)) return dollars(cents(String(v)));
      if (/_on$|_date$|^period_(start|end)$|^as_of$|^date$/.test(c) && /^\d{4}-\d{2}-\d{2}$/.test(String(v))) return usDate(String(v));
      if (c === "fund" && FUND_NAMES[v]) return FUND_NAMES[v];
      return String(v);
    }));
    const title = `${REPORT_NAMES[kind]} · ${utility(tenant)}`;
    const actions = el("p", { class: "no-print" });
    if (kind !== "failed-notices") {
      const csv = el("button", { type: "button", text: "Download CSV" });
      csv.addEventListener("click", () => downloadCsv(tenant, kind));
      actions.append(csv, " ");
    }
    const print = el("button", { type: "button", text: "Print" });
    print.addEventListener("click", () => {
      document.body.classList.add("printing-report");
      window.addEventListener("afterprint", () => document.body.classList.remove("printing-report"), { once: true });
      window.print();
    });
    actions.append(print);
    box.replaceChildren(el("h3", { text: title }), el("p", { class: "hint", text: `${rows.length} row${rows.length === 1 ? "" : "s"}` }),
      table(title, columns.map(columnName), cells, numeric), actions);
  } catch (e) {
    box.replaceChildren(el("p", { class: "bad", text: "No report: " + e.message }));
  }
}

async function downloadCsv(tenant, kind) {
  const r = await fetch(state.api + reportPath(tenant, kind, "csv"), { headers: { authorization: `Bearer ${state.token}` } });
  if (!r.ok) { say(`The CSV could not be made (${r.status}).`, true); return; }
  const url = URL.createObjectURL(await r.blob());
  const a = el("a", { href: url, download: `${tenant}-${kind}.csv` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// Reconsiderations, appeals and credit applications awaiting a decision (stormwater's route),
// page by page with limit and cursor, oldest filed first.
async function pendingDecisions(tenant) {
  const box = el("div", { id: "pending" }, el("h3", { text: "Pending decisions" }));
  const found = [];
  try {
    let cursor = null;
    do {
      const q = "?limit=100" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : "");
      const page = await api("GET", `/staff/${encodeURIComponent(tenant)}/parcels/pending-decisions${q}`);
      found.push(...page.decisions);
      cursor = page.next_cursor;
    } while (cursor);
  } catch (e) {
    box.append(el("p", { class: "bad", text: "Pending decisions unavailable: " + e.message }));
    return box;
  }
  box.firstChild.textContent = `Pending decisions (${found.length})`;
  if (!found.length) {
    box.append(el("p", { class: "hint", text: "Nothing is waiting for a decision." }));
    return box;
  }
  const ul = el("ul");
  for (const d of found) {
    ul.append(el("li", { text: `${d.filed_on} · parcel ${d.parcel_id} (${d.owner_name}): ${d.summary}, ${d.status}` }));
  }
  box.append(ul);
  return box;
}

// --- start -----------------------------------------------------------------------------------------
async function start(token) {
  state.token = token;
  state.claims = claimsOf(token);
  $("#sign-in").hidden = true;
  $("#sign-out").hidden = false;
  $("#who").textContent = `Signed in as ${state.claims.name || state.claims.sub} (${state.claims.role})`;
  try {
    const doc = await (await fetch(state.api + "/openapi.json")).json();
    state.pdfRoute = Object.keys(doc.paths || {}).some((p) => /\/bills\/\{bill_id\}\/pdf$/.test(p));
  } catch (_) { state.pdfRoute = false; }
  const role = state.claims.role;
  if (role === "customer") await showCustomer();
  else if (role === "owner") await showOwner();
  else if (role === "staff") await showStaff();
  else say("This token has no portal role.", true);
  // to the content, unless the user already went somewhere while the pages loaded
  if (document.activeElement === document.body) $("#main").focus();
}

document.addEventListener("DOMContentLoaded", async () => {
  await loadConfig();
  $("#demo-form").addEventListener("submit", demoSignIn);
  $("#sign-out").addEventListener("click", signOut);
  const params = new URLSearchParams(location.search);
  const token = params.has("code") ? await redeemCode(params) : sessionStorage.getItem("sewerbill.token");
  if (token) await start(token);
  else await showSignIn();
});
