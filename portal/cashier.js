// The clerk's counter and import review (issue 33), beside portal.js (its helpers: el, api,
// cents, dollars, usd, usDate, usDateTime, table, utility, listed, staffPath, enc, openAccount).
// A payment taken at the counter and its printable receipt, the day's drawer by clerk and
// tender with its CSV for the deposit, and every file billing took in with its rejected lines
// and a lockbox file's total beside the bank deposit.
"use strict";

const TENDER_NAMES = { cash: "Cash", check: "Check", card: "Card" };
const newReceiptKey = () => "rcpt-" + (crypto.randomUUID ? crypto.randomUUID() : randomString(16));

function labelled(id, text, control, hint) {
  const wrap = el("div", { class: "field" }, el("label", { for: id, text }), control);
  if (hint) {
    control.setAttribute("aria-describedby", id + "-hint");
    wrap.append(el("span", { id: id + "-hint", class: "hint", text: hint }));
  }
  return wrap;
}

// --- the counter, on the account page --------------------------------------------------------
function counterPanel(tenant, account) {
  const box = el("section", { class: "counter no-print", id: "counter", "aria-labelledby": "counter-title" });
  box.append(el("h3", { id: "counter-title", text: "Take a payment at the counter" }));
  const form = el("form", { class: "inline", id: "counter-form", novalidate: "" });
  form.dataset.key = newReceiptKey(); // kept until the receipt is made: a re-sent form posts once
  const amount = el("input", { id: "counter-amount", name: "amount", inputmode: "decimal", required: "",
    pattern: "^[0-9]{1,7}(\\.[0-9]{1,2})?$", autocomplete: "off" });
  const tender = el("select", { id: "counter-tender", name: "tender" },
    ...Object.entries(TENDER_NAMES).map(([v, t]) => el("option", { value: v, text: t })));
  const check = el("input", { id: "counter-check", name: "check_number", maxlength: "20", autocomplete: "off" });
  const card = el("input", { id: "counter-card", name: "card_reference", maxlength: "40", autocomplete: "off" });
  const checkField = labelled("counter-check", "Check number", check);
  const cardField = labelled("counter-card", "Card reference", card, "The terminal's authorization");
  const shown = () => {
    checkField.hidden = tender.value !== "check";
    cardField.hidden = tender.value !== "card";
  };
  tender.addEventListener("change", shown);
  shown();
  const msg = el("p", { id: "counter-error", class: "bad", role: "alert" });
  form.append(labelled("counter-amount", "Amount received (USD)", amount), labelled("counter-tender", "Tender", tender),
    checkField, cardField, el("button", { type: "submit", text: "Post payment" }));
  form.addEventListener("submit", (ev) => { ev.preventDefault(); takeReceipt(tenant, account, form, msg); });
  box.append(form, msg);
  return box;
}

async function takeReceipt(tenant, account, form, msg) {
  const f = form.elements;
  msg.textContent = "";
  const body = { amount: f.amount.value.trim(), tender: f.tender.value, receipt_key: form.dataset.key };
  if (body.tender === "check") body.check_number = f.check_number.value.trim();
  if (body.tender === "card") body.card_reference = f.card_reference.value.trim();
  const button = form.querySelector("button");
  button.disabled = true;
  let r;
  try {
    r = await api("POST", staffPath(tenant, `accounts/${enc(account.account_id)}/receipts`), body);
  } catch (e) {
    msg.textContent = "Not posted: " + e.message;
    button.disabled = false;
    return; // the same key on the next try: never posted twice
  }
  if ($("#drawer-day")) $("#drawer-day").value = r.day; // the drawer this receipt is in
  await openAccount(tenant, account.account_id); // the ledger and balance with the payment
  showReceipt(r);
}

function receiptText(r) {
  const how = r.tender === "check" ? `check no. ${r.check_number}` : r.tender === "card" ? `card, ref. ${r.card_reference}` : "cash";
  return [`Receipt ${r.receipt}`, `${utility(r.tenant)}`, `Account ${r.account_id}, ${r.name}`, r.service_address,
    `Received ${usDate(r.day)}: ${usd(r.amount)} by ${how}`, `Balance after this payment: ${balanceText(r.balance_after)}`,
    `Payment reference ${r.payment_reference}`, `Taken by ${r.clerk}`].join("\n");
}

function showReceipt(r) {
  const box = $("#receipt-view");
  box.hidden = false;
  const card = el("article", { class: "card receipt", id: "receipt", "aria-labelledby": "receipt-title" });
  card.append(el("h2", { id: "receipt-title", tabindex: "-1", text: `Receipt ${r.receipt}` }));
  card.append(el("p", { class: "utility", text: utility(r.tenant) }));
  const how = r.tender === "check" ? `Check no. ${r.check_number}` : r.tender === "card" ? `Card, ref. ${r.card_reference}` : "Cash";
  card.append(table("Payment received", ["Date", "Account", "Tender", "Amount"],
    [[usDate(r.day), `${r.account_id} · ${r.name}`, how, usd(r.amount)]], [3]));
  const facts = el("dl", { class: "facts" });
  for (const [k, v] of [["Service address", r.service_address], ["Balance after", balanceText(r.balance_after)],
    ["Received at", usDateTime(r.received_at)], ["Taken by", r.clerk], ["Payment reference", r.payment_reference]]) {
    facts.append(el("dt", { text: k }), el("dd", { text: v }));
  }
  card.append(facts);
  const actions = el("p", { class: "no-print actions" });
  const print = el("button", { type: "button", text: "Print receipt" });
  print.addEventListener("click", () => {
    document.body.classList.add("printing-receipt");
    window.addEventListener("afterprint", () => document.body.classList.remove("printing-receipt"), { once: true });
    window.print();
  });
  actions.append(print, " ");
  if (r.email) {
    const subject = `Your payment receipt ${r.receipt}`;
    actions.append(el("a", { class: "button", id: "receipt-email",
      href: `mailto:${encodeURIComponent(r.email)}?subject=${encodeURIComponent(subject)}&body=${encodeURIComponent(receiptText(r))}`,
      text: `E-mail receipt to ${r.email}` }));
  } else {
    actions.append(el("span", { class: "hint", text: "No e-mail address on the account: print the receipt." }));
  }
  card.append(actions);
  box.replaceChildren(card);
  history.replaceState(null, "", `#receipt/${enc(r.tenant)}/${enc(r.receipt)}`);
  $("#receipt-title").focus();
}

// --- the drawer ----------------------------------------------------------------------------------
function showCashier() {
  const tenants = listed(state.claims.tenants);
  for (const id of ["#drawer-tenant", "#imports-tenant"]) {
    $(id).replaceChildren(...tenants.map((t) => el("option", { value: t, text: utility(t) })));
  }
  $("#drawer").hidden = false;
  $("#imports").hidden = false;
  const day = $("#drawer-day");
  if (!day.value) day.value = new Date().toISOString().slice(0, 10);
  $("#drawer-form").addEventListener("submit", (ev) => { ev.preventDefault(); closeDrawer(); });
  $("#imports-form").addEventListener("submit", (ev) => { ev.preventDefault(); listImports(); });
  const m = /^#receipt\/([^/]+)\/(.+)$/.exec(location.hash);
  if (m) api("GET", staffPath(decodeURIComponent(m[1]), `receipts/${m[2]}`)).then(showReceipt).catch(() => {});
}

function drawerPath(format) {
  const tenant = $("#drawer-tenant").value, day = $("#drawer-day").value, clerk = $("#drawer-clerk").value.trim();
  const q = new URLSearchParams();
  if (clerk) q.set("clerk", clerk);
  if (format) q.set("format", format);
  const qs = q.toString();
  return staffPath(tenant, `drawer/${enc(day)}`) + (qs ? "?" + qs : "");
}

const tenderOf = (r) => TENDER_NAMES[r.tender] + (r.check_number ? ` no. ${r.check_number}` : "") +
  (r.card_reference ? ` ref. ${r.card_reference}` : "");

async function closeDrawer() {
  const box = $("#drawer-result");
  box.replaceChildren(el("p", { text: "Loading…" }));
  let d;
  try { d = await api("GET", drawerPath()); } catch (e) {
    box.replaceChildren(el("p", { class: "bad", text: "No drawer: " + e.message }));
    return;
  }
  const who = d.clerk ? `clerk ${d.clerk}` : "every clerk";
  const receipts = table(`Receipts of ${usDate(d.day)}, ${who}`, ["Time", "Receipt", "Clerk", "Account", "Tender", "Amount"],
    d.receipts.map((r) => [usDateTime(r.received_at), r.receipt, r.clerk, r.account_id, tenderOf(r), usd(r.amount)]), [5]);
  receipts.id = "drawer-receipts";
  const byBoth = table("Totals by clerk and tender", ["Clerk", "Tender", "Receipts", "Total"],
    d.by_clerk_and_tender.map((t) => [t.clerk, TENDER_NAMES[t.tender], String(t.count), usd(t.total)]), [2, 3]);
  const byTender = table("Totals by tender (the deposit)", ["Tender", "Receipts", "Total"],
    [...d.by_tender.map((t) => [TENDER_NAMES[t.tender], String(t.count), usd(t.total)]),
      ["All tenders", String(d.count), usd(d.total)]], [1, 2]);
  byTender.id = "drawer-by-tender";
  const actions = el("p", { class: "no-print" });
  const csv = el("button", { type: "button", text: "Export CSV for the deposit" });
  csv.addEventListener("click", () => downloadDrawerCsv(d));
  actions.append(csv);
  box.replaceChildren(
    el("p", { class: "drawer-total" }, el("span", { class: "label", text: "Drawer total " }),
      el("strong", { id: "drawer-total", text: usd(d.total) }), ` in ${d.count} receipt${d.count === 1 ? "" : "s"}`),
    receipts, byBoth, byTender, actions);
}

async function downloadDrawerCsv(d) {
  const r = await fetch(state.api + drawerPath("csv"), { headers: { authorization: `Bearer ${state.token}` } });
  if (!r.ok) { say(`The CSV could not be made (${r.status}).`, true); return; }
  const url = URL.createObjectURL(await r.blob());
  const a = el("a", { href: url, download: `drawer-${d.tenant}-${d.day}.csv` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// --- import exception review ------------------------------------------------------------------
const COUNT_NAMES = ["accepted", "repeated", "changed", "rejected", "waiting"];

async function listImports() {
  const tenant = $("#imports-tenant").value;
  const box = $("#imports-list");
  box.replaceChildren(el("p", { text: "Loading…" }));
  let files;
  try { files = (await api("GET", staffPath(tenant, "imports"))).files; } catch (e) {
    box.replaceChildren(el("p", { class: "bad", text: "No files: " + e.message }));
    return;
  }
  const rows = files.map((f) => {
    const open = el("button", { type: "button", class: "small", text: "Review", "aria-label": `Review ${f.key}` });
    open.addEventListener("click", () => reviewImport(tenant, f.file_id));
    return [usDateTime(f.received_at), f.key, f.kind, ...COUNT_NAMES.map((c) => String(f.counts[c] || 0)),
      f.totals ? usd(f.totals.file) : "", open];
  });
  const t = table("Files taken in, newest first", ["Received", "File", "Kind", "Accepted", "Repeated", "Changed",
    "Rejected", "Waiting", "File total", ""], rows, [3, 4, 5, 6, 7, 8]);
  t.id = "imports-table";
  box.replaceChildren(t);
}

async function reviewImport(tenant, fileId) {
  const box = $("#import-view");
  box.replaceChildren(el("p", { text: "Loading…" }));
  let f;
  try { f = await api("GET", staffPath(tenant, `imports/${enc(fileId)}`)); } catch (e) {
    box.replaceChildren(el("p", { class: "bad", text: "The file could not be read: " + e.message }));
    return;
  }
  const card = el("article", { class: "card", id: "import-review", "aria-labelledby": "import-title" });
  card.append(el("h3", { id: "import-title", tabindex: "-1", text: `File ${f.key}` }));
  card.append(el("p", { class: "hint", text: `${f.kind} file, received ${usDateTime(f.received_at)}; ${f.counts.lines} lines.` }));
  card.append(table("Lines by outcome", COUNT_NAMES.map((c) => c[0].toUpperCase() + c.slice(1)),
    [COUNT_NAMES.map((c) => String(f.counts[c] || 0))], [0, 1, 2, 3, 4]));
  if (f.totals) {
    const t = f.totals;
    const totals = table("Batch totals", ["Accepted", "Repeated", "Waiting", "Rejected", "File total"],
      [["accepted", "repeated", "waiting", "rejected", "file"].map((k) => usd(t[k] || "0.00"))], [0, 1, 2, 3, 4]);
    totals.id = "import-totals";
    card.append(totals);
    if (t.unread_amounts) {
      card.append(el("p", { class: "bad", text: `${t.unread_amounts} rejected line${t.unread_amounts === 1 ? "" : "s"} had no readable amount: not in the file total.` }));
    }
    card.append(depositForm(tenant, f));
  }
  const report = table("Rejected and waiting lines, as the report has them", ["Line", "Column", "Why", "Outcome"],
    f.lines.map((l) => [String(l.line), l.column, l.reason, l.outcome]), [0]);
  report.id = "import-lines";
  card.append(el("h4", { text: "Report" }), report);
  if (f.next_cursor) card.append(el("p", { class: "hint", text: "More lines follow in the report." }));
  box.replaceChildren(card);
  $("#import-title").focus();
}

function depositForm(tenant, f) {
  const wrap = el("div", { class: "deposit" });
  const form = el("form", { class: "inline", id: "deposit-form" });
  const amount = el("input", { id: "deposit-amount", name: "amount", inputmode: "decimal", required: "",
    autocomplete: "off", value: f.deposit ? f.deposit.amount : "" });
  form.append(labelled("deposit-amount", "Bank deposit (USD)", amount), el("button", { type: "submit", text: "Reconcile" }));
  const result = el("p", { id: "deposit-result", role: "status" });
  const showResult = (d) => {
    if (!d) { result.textContent = ""; return; }
    result.className = d.reconciled ? "ok" : "bad";
    result.textContent = d.reconciled
      ? `Reconciled: the deposit ${usd(d.amount)} equals the file total ${usd(f.totals.file)}.`
      : `Not reconciled: the deposit ${usd(d.amount)} differs from the file total ${usd(f.totals.file)} by ${usd(d.difference)}.`;
  };
  showResult(f.deposit);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const v = await api("PUT", staffPath(tenant, `imports/${enc(f.file_id)}/deposit`), { amount: amount.value.trim() });
      f.deposit = v.deposit;
      showResult(v.deposit);
    } catch (e) {
      result.className = "bad";
      result.textContent = "Not recorded: " + e.message;
    }
  });
  wrap.append(form, result);
  return wrap;
}
