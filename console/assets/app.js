// Pitboss console: plain ES module, no framework. Every number a person
// reads comes from the server as exact decimal text; charts convert to
// Number only to draw. The secret stays in sessionStorage (this tab only)
// and goes out only as Authorization: Bearer to this same origin.

import { campaignsPage } from './campaigns.js';
import { dealsPage } from './deals.js';
import { walletArea } from './wallet.js';

const $ = (sel, root = document) => root.querySelector(sel);
const store = window.sessionStorage;
const PAGES = {
  overview: 'reports:read',
  transactions: 'transactions:read',
  reports: 'reports:read',
  deliveries: 'deliveries:read',
  audit: 'audit:read',
  tokens: null, // the admin token's pages (tokens, rates): no scope opens them
  reconcile: 'reports:read',
  rates: null,
  statements: 'reports:read',
  deals: null, // the admin token's too (it has no Alt key: Alt+1…9 are taken)
  campaigns: 'promotions:read', // no Alt key either
};
const ADMIN_PAGES = ['tokens', 'rates', 'deals'];
const ORDER = Object.keys(PAGES);
const ADMIN_SCOPES = ['transactions:read', 'wallet:read', 'reports:read', 'audit:read', 'deliveries:read', 'deliveries:write',
  'promotions:read'];
// Every scope a key may hold (gateway.AllScopes), offered when issuing.
const ALL_SCOPES = ['launch', 'transactions:read', 'transactions:write', 'wallet:read', 'reports:read', 'audit:read',
  'deliveries:read', 'deliveries:write', 'promotions:read', 'promotions:write'];

let me = null;

// ---- DOM helpers (text only: data never becomes markup) ----
function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat()) {
    if (k == null) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}
const text = (v) => (v == null || v === '' ? '—' : String(v));
function table(headers, rows, numeric = []) {
  return el('div', { class: 'scroll' }, el('table', {},
    el('thead', {}, el('tr', {}, headers.map((h, i) => el('th', { scope: 'col', class: numeric.includes(i) ? 'num' : null, text: h })))),
    el('tbody', {}, rows.map((r) => el('tr', {}, r.map((c, i) => el('td', { class: numeric.includes(i) ? 'num' : null }, c instanceof Node ? c : text(c))))))));
}
function setBusy(on) { document.body.dataset.busy = on ? 'yes' : 'no'; }

// ---- JSON with exact decimals ----
let sourceAccess = false;
JSON.parse('[1]', function (k, v, ctx) { if (ctx && 'source' in ctx) sourceAccess = true; return v; });
function parseExact(s) {
  if (sourceAccess) {
    return JSON.parse(s, (k, v, ctx) => (typeof v === 'number' && ctx && /[.eE]/.test(ctx.source) ? ctx.source : v));
  }
  return JSON.parse(s.replace(/("[A-Za-z_]+"\s*:\s*)(-?\d+\.\d+)(?=\s*[,}\]])/g, '$1"$2"'));
}

// ---- API ----
class APIError extends Error {
  // details is the error's details object (a 400 names its field there).
  constructor(status, code, message, details) { super(message); this.status = status; this.code = code; this.details = details || {}; }
}
// call sends body as JSON, or raw (a file's text) as contentType.
async function call(path, { method = 'GET', secret = store.getItem('pitboss.secret'), body, raw, contentType, accept } = {}) {
  const headers = { Authorization: 'Bearer ' + secret };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (raw !== undefined) headers['Content-Type'] = contentType;
  if (accept) headers.Accept = accept;
  const sent = raw !== undefined ? raw : body === undefined ? undefined : JSON.stringify(body);
  const res = await fetch(path, { method, headers, body: sent, cache: 'no-store' });
  if (accept && res.ok) return res; // a file (CSV, a printable page): the caller reads it
  const answer = await res.text();
  let json = null;
  try { json = parseExact(answer); } catch { /* not JSON */ }
  if (!res.ok || !json || json.success === false) {
    const e = json && json.error ? json.error : { code: 'HTTP_' + res.status, message: answer.slice(0, 200) || res.statusText };
    throw new APIError(res.status, e.code, e.message, e.details);
  }
  return json;
}
function errorText(e) { return e instanceof APIError ? `${e.message} (${e.code}, HTTP ${e.status})` : String(e.message || e); }

function download(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// ---- Labels readable without colour ----
const STATUS = {
  settled: '✔ settled', pending: '… pending', rolled_back: '↺ rolled back', discarded: '⊘ discarded', failed: '✖ failed',
  succeeded: '✔ succeeded', queued: '⋯ queued', parked: '✖ parked',
  active: '✔ active', expired: '⌛ expired', revoked: '✖ revoked',
};
const badge = (s) => el('span', { class: 'badge s-' + s, text: STATUS[s] || s });

// ---- Sign-in ----
async function signIn(secret) {
  $('#signin-error').textContent = '';
  try {
    const r = await call('/api/v1/me', { secret });
    store.setItem('pitboss.secret', secret);
    store.setItem('pitboss.mode', 'key');
    return start(r.data);
  } catch (e) {
    if (!(e instanceof APIError) || e.status !== 401) { $('#signin-error').textContent = errorText(e); return; }
  }
  try {
    const r = await call('/admin/v1/clients?per_page=200', { secret });
    const sel = $('#client');
    sel.replaceChildren(...r.data.map((c) => el('option', { value: c.id, text: `${c.name} (${c.id}, ${c.environment})` })));
    store.setItem('pitboss.admin', secret);
    $('#signin-form').hidden = true;
    $('#client-form').hidden = false;
    document.body.dataset.state = 'pick-client';
    sel.focus();
  } catch (e) {
    $('#signin-error').textContent = e instanceof APIError && e.status === 401
      ? 'Neither an API key nor the admin token: ' + errorText(e) : errorText(e);
  }
}

async function actAsClient(clientID) {
  const admin = store.getItem('pitboss.admin');
  $('#signin-error').textContent = '';
  try {
    const expires = new Date(Date.now() + 3600 * 1000).toISOString();
    const r = await call(`/admin/v1/clients/${encodeURIComponent(clientID)}/keys`, {
      method: 'POST', secret: admin, body: { scopes: ADMIN_SCOPES, label: 'console (admin session)', expires_at: expires },
    });
    store.setItem('pitboss.secret', r.data.key);
    store.setItem('pitboss.mode', 'admin');
    store.setItem('pitboss.keyid', r.data.id);
    store.setItem('pitboss.client', clientID);
    const m = await call('/api/v1/me');
    start(m.data);
  } catch (e) {
    $('#signin-error').textContent = errorText(e);
  }
}

async function signOut() {
  const admin = store.getItem('pitboss.admin');
  const keyID = store.getItem('pitboss.keyid');
  const client = store.getItem('pitboss.client');
  if (admin && keyID && client) {
    try {
      await call(`/admin/v1/clients/${encodeURIComponent(client)}/keys/${encodeURIComponent(keyID)}/revoke`, { method: 'POST', secret: admin });
    } catch { /* the key expires within the hour anyway */ }
  }
  store.clear();
  me = null;
  history.replaceState(null, '', location.pathname);
  for (const s of document.querySelectorAll('.page')) { s.hidden = true; delete s.dataset.loaded; }
  for (const id of ['#overview', '#audit', '#tx-table tbody', '#del-table tbody', '#rep-table thead', '#rep-table tbody', '#tx-detail-body',
    '#tok-keys tbody', '#tok-trail tbody', '#tok-client', '#rec-report', '#rates-table tbody', '#st-table tbody']) $(id).replaceChildren();
  for (const id of ['#rec-status', '#rates-status', '#rates-import-status', '#st-status', '#st-close-status']) $(id).textContent = '';
  $('#st-close').reset();
  $('#rec-form').reset();
  $('#rates-import').reset();
  resetTokens();
  campaignsPart.reset();
  drawChart(null);
  $('#tx-detail').hidden = true;
  $('#tabs').hidden = true;
  $('#signout').hidden = true;
  $('#who').textContent = 'Signed out.';
  $('#signin-form').reset();
  $('#signin-form').hidden = false;
  $('#client-form').hidden = true;
  $('#signin').hidden = false;
  document.body.dataset.state = 'signin';
  delete document.body.dataset.page;
  $('#secret').focus();
}

function start(who) {
  me = who;
  const admin = store.getItem('pitboss.mode') === 'admin' ? ' · acting as admin' : '';
  $('#who').textContent = `Client ${who.client_id} · ${who.environment} · key ${who.key_id}${admin}`;
  $('#signin').hidden = true;
  $('#signout').hidden = false;
  $('#tabs').hidden = false;
  for (const a of document.querySelectorAll('#tabs a')) {
    a.parentElement.hidden = !allowed(a.dataset.page);
  }
  document.body.dataset.state = 'ready';
  route();
}

const can = (scope) => me && me.scopes.includes(scope);
// The admin token signed this tab in (it acts for a client through a
// session key, and may open the tokens page).
const isAdmin = () => store.getItem('pitboss.mode') === 'admin' && !!store.getItem('pitboss.admin');
const allowed = (page) => (ADMIN_PAGES.includes(page) ? isAdmin() : can(PAGES[page]));

// ---- Router ----
function route() {
  if (!me) return;
  let page = location.hash.slice(1) || ORDER.find((p) => allowed(p)) || 'overview';
  if (!(page in PAGES)) page = 'overview';
  if (page !== 'tokens') { // a revealed secret, or a typed credential, never outlives its page
    hideSecret();
    walletPart.forgetCredential();
  }
  for (const s of document.querySelectorAll('.page')) s.hidden = true;
  for (const a of document.querySelectorAll('#tabs a')) {
    if (a.dataset.page === page) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  document.body.dataset.page = page;
  if (!allowed(page)) {
    $('#denied').textContent = ADMIN_PAGES.includes(page) ? 'Only the admin token opens this page.'
      : `This key's scopes do not include this page: it needs ${PAGES[page]}.`;
    $('#denied').hidden = false;
    return;
  }
  $('#page-' + page).hidden = false;
  LOADERS[page]();
}

async function loaded(section, fn) {
  setBusy(true);
  const s = $('#page-' + section);
  try { await fn(); s.dataset.loaded = String(Number(s.dataset.loaded || 0) + 1); } finally { setBusy(false); }
}

// ---- Overview ----
async function loadOverview() {
  await loaded('overview', async () => {
    const box = $('#overview');
    let d;
    try { d = (await call('/api/v1/console/overview')).data; } catch (e) { box.replaceChildren(el('p', { class: 'error', role: 'alert', text: errorText(e) })); return; }
    const parts = [];
    parts.push(el('h3', { text: `Today (${d.day}, UTC)` }));
    parts.push(d.today.length ? el('div', { class: 'cards', id: 'today' }, d.today.map((t) => el('dl', { class: 'card', dataset: { currency: t.currency } },
      el('dt', { text: 'Currency' }), el('dd', { text: t.currency }),
      el('dt', { text: 'Bets' }), el('dd', { class: 'num', dataset: { field: 'bets' }, text: t.bets }),
      el('dt', { text: 'Wins' }), el('dd', { class: 'num', dataset: { field: 'wins' }, text: t.wins }),
      el('dt', { text: 'GGR' }), el('dd', { class: 'num', dataset: { field: 'ggr' }, text: t.ggr }),
      el('dt', { text: 'Rounds / players' }), el('dd', { class: 'num', text: `${t.rounds} / ${t.players}` }))))
      : el('p', { id: 'today', text: 'No bets or wins yet today.' }));
    parts.push(el('h3', { text: 'Balances (client wallets)' }));
    parts.push(d.balances == null ? el('p', { text: 'Needs the wallet:read scope.' })
      : d.balances.length ? table(['Currency', 'Balance'], d.balances.map((b) => [b.currency, b.balance]), [1])
        : el('p', { text: 'No wallets yet.' }));
    parts.push(el('h3', { text: 'Relay and projection lag' }));
    if (d.lag) {
      const state = (n) => (n === 0 ? '✔ caught up' : `⚠ ${n} events behind`);
      parts.push(el('p', { text: `Event store head: position ${d.lag.head}` }));
      parts.push(table(['Part', 'Name', 'Position', 'State', 'Oldest waiting (s)'], [
        ...d.lag.relays.map((r) => ['relay', r.name, r.position, state(r.behind_events), r.lag_seconds]),
        ...d.lag.projections.map((p) => ['projection', p.name, p.position, state(p.behind_events), p.lag_seconds]),
      ], [2, 4]));
    } else parts.push(el('p', { text: 'Lag is not available on this server.' }));
    parts.push(el('h3', { text: 'Recent failed deliveries' }));
    if (d.failed_deliveries == null) parts.push(el('p', { text: 'Needs the deliveries:read scope.' }));
    else if (!d.failed_deliveries.length) parts.push(el('p', { text: '✔ No parked deliveries.' }));
    else {
      parts.push(el('p', {}, `${d.failed_deliveries_total} parked in all. `, el('a', { href: '#deliveries', text: 'Open the delivery log' })));
      parts.push(table(['Created (UTC)', 'Target', 'Event', 'Status', 'Last error'], d.failed_deliveries.map((x) =>
        [x.created_at, x.target, x.event_type, badge(x.status), x.last_error || (x.last_status_code ? 'HTTP ' + x.last_status_code : '')])));
    }
    box.replaceChildren(...parts);
  });
}

// ---- Transactions ----
const tx = { page: 1, total: 0, perPage: 50 };
function txQuery() {
  const f = new FormData($('#tx-filter'));
  const q = new URLSearchParams({ page: String(tx.page), per_page: f.get('per_page') || '50' });
  for (const k of ['player_id', 'type', 'status', 'provider', 'game']) { const v = String(f.get(k) || '').trim(); if (v) q.set(k, v); }
  const cur = String(f.get('currency') || '').trim().toUpperCase();
  if (cur) q.set('currency', cur);
  for (const k of ['from', 'to']) { const v = String(f.get(k) || ''); if (v) q.set(k, (v.length === 16 ? v + ':00' : v) + 'Z'); }
  tx.perPage = Number(q.get('per_page'));
  return q;
}
async function loadTransactions() {
  await loaded('transactions', async () => {
    const body = $('#tx-table tbody');
    let r;
    try { r = await call('/api/v1/transactions?' + txQuery()); } catch (e) { $('#tx-status').textContent = errorText(e); body.replaceChildren(); return; }
    tx.total = r.pagination.total;
    const pages = Math.max(1, Math.ceil(tx.total / tx.perPage));
    $('#tx-status').textContent = `${r.pagination.total_exact ? '' : 'at least '}${tx.total} transactions`;
    $('#tx-page').textContent = `Page ${tx.page} of ${r.pagination.total_exact ? pages : 'at least ' + pages}`;
    $('#tx-prev').disabled = tx.page <= 1;
    $('#tx-next').disabled = r.data.length < tx.perPage;
    body.replaceChildren(...r.data.map((t) => el('tr', { dataset: { id: t.id, type: t.type } },
      el('td', { text: t.created_at.replace('T', ' ').replace('Z', '') }), el('td', { text: t.type }), el('td', {}, badge(t.status)),
      el('td', { class: 'num', text: t.amount }), el('td', { text: t.currency }), el('td', { text: text(t.player_id) }),
      el('td', { text: text(t.provider) }), el('td', { text: text(t.game) }), el('td', { text: text(t.round_id) }),
      el('td', {}, el('button', { type: 'button', class: 'link', 'aria-label': `Open ${t.type} ${t.id}`, onclick: () => openTx(t.id), text: 'Open' })))));
  });
}
async function openTx(id) {
  const box = $('#tx-detail');
  const out = $('#tx-detail-body');
  box.hidden = false;
  out.replaceChildren(el('p', { text: 'Loading…' }));
  try {
    const t = (await call('/api/v1/transactions/' + encodeURIComponent(id))).data;
    const fields = ['id', 'type', 'status', 'amount', 'currency', 'created_at', 'player_id', 'provider', 'game', 'round_id',
      'external_id', 'reference_id', 'balance_after', 'promo', 'jackpot', 'campaign_id', 'reward_id', 'position'];
    out.replaceChildren(
      el('dl', { class: 'fields' }, fields.map((f) => [el('dt', { text: f }), el('dd', {}, f === 'status' ? badge(t.status) : text(t[f]))])),
      el('h4', { text: `Ledger events (${t.events.length})` }),
      el('ol', { class: 'events' }, t.events.map((e) => el('li', { dataset: { hash: e.hash } },
        el('p', {}, el('strong', { text: `#${e.position} ${e.type}` }), ` on ${e.stream_id} v${e.stream_version} at ${e.occurred_at}`),
        el('p', { class: 'hash' }, 'hash ', el('code', { text: e.hash })),
        el('p', { class: 'hash' }, 'prev ', el('code', { text: e.prev_hash })),
        el('details', {}, el('summary', { text: 'Stored body (the bytes the hash covers)' }), el('pre', { text: e.body }))))));
    box.dataset.id = id;
    box.focus();
  } catch (e) {
    out.replaceChildren(el('p', { class: 'error', role: 'alert', text: errorText(e) }));
  }
}

// ---- Reports ----
let chart = null;
const DIM_LABEL = { day: 'day', month: 'month', provider: 'provider', game: 'game', currency: 'currency' };
function reportURL() {
  const f = new FormData($('#rep-form'));
  const report = f.get('report');
  const g = f.get('group_by');
  const q = new URLSearchParams({ group_by: g === 'game' && report === 'ggr' ? 'provider,game,currency' : g + ',currency' });
  for (const k of ['from', 'to']) { const v = String(f.get(k) || ''); if (v) q.set(k, v); }
  return { path: `/api/v1/reports/${report}?${q}`, report, group: g, from: q.get('from') || 'last-30-days', to: q.get('to') || 'today' };
}
async function loadReports() {
  await loaded('reports', async () => {
    const { path, report, group } = reportURL();
    const status = $('#rep-status');
    let rows;
    try { rows = (await call(path)).data; } catch (e) { status.textContent = errorText(e); $('#rep-table thead').replaceChildren(); $('#rep-table tbody').replaceChildren(); drawChart(null); return; }
    const cols = rows.length ? Object.keys(rows[0]) : [];
    $('#rep-table thead').replaceChildren(el('tr', {}, cols.map((c) => el('th', { scope: 'col', text: c }))));
    $('#rep-table tbody').replaceChildren(...rows.map((r) => el('tr', {}, cols.map((c) => el('td', { class: typeof r[c] === 'string' && /^-?\d+(\.\d+)?$/.test(r[c]) || typeof r[c] === 'number' ? 'num' : null, text: text(r[c]) })))));
    status.textContent = `${rows.length} rows · ${report.toUpperCase()} by ${DIM_LABEL[group]}`;
    drawChart({ rows, report, group });
  });
}
function drawChart(spec) {
  const box = $('#rep-chart');
  if (chart) { chart.destroy(); chart = null; }
  box.replaceChildren();
  if (!spec || !spec.rows.length) return;
  if (typeof window.uPlot !== 'function') {
    box.append(el('p', { class: 'notice', id: 'no-charts', text: 'Charts are unavailable: uPlot was not vendored into this build (scripts/ensure-console-assets.sh). The table below has every number.' }));
    return;
  }
  const metric = spec.report === 'ggr' ? 'ggr' : 'commission';
  const key = spec.group === 'day' ? 'day' : spec.group === 'currency' ? 'currency' : spec.group === 'game' ? 'game' : spec.group === 'provider' ? 'provider' : 'month';
  const rowKey = (r) => r[key] ?? r.month ?? '';
  const xs = [...new Set(spec.rows.map(rowKey))].sort();
  const curs = [...new Set(spec.rows.map((r) => r.currency))].sort();
  const idx = new Map(xs.map((x, i) => [x, i]));
  const series = curs.map((c) => { const ys = xs.map(() => null); for (const r of spec.rows) if (r.currency === c) ys[idx.get(rowKey(r))] = (ys[idx.get(rowKey(r))] || 0) + Number(r[metric]); return ys; });
  const isTime = key === 'day' || key === 'month';
  const xData = isTime ? xs.map((d) => Date.parse(d + (d.length === 7 ? '-01' : '') + 'T00:00:00Z') / 1000) : xs.map((_, i) => i);
  const dashes = [[], [6, 3], [2, 2], [10, 4, 2, 4]];
  const opts = {
    title: `${metric.toUpperCase()} by ${key} (per currency)`,
    width: Math.min(900, box.clientWidth || 800), height: 300,
    // A single point would stretch the time axis over years: pad it by days.
    scales: { x: xData.length === 1 ? { time: isTime, range: () => [xData[0] - (isTime ? 3 * 86400 : 1), xData[0] + (isTime ? 3 * 86400 : 1)] } : { time: isTime } },
    axes: [isTime ? {} : { values: (u, ticks) => ticks.map((t) => xs[t] ?? '') }, {}],
    series: [{ label: key }, ...curs.map((c, i) => ({
      label: `${metric} ${c}`, stroke: ['#1b4f8a', '#8a3b1b', '#2f6b2f', '#5b2f6b'][i % 4], width: 2, dash: dashes[i % 4],
      points: { show: true, size: 7 },
      paths: isTime ? undefined : uPlot.paths.bars({ size: [0.6, 60] }), fill: isTime ? undefined : 'rgba(27,79,138,0.15)',
    }))],
  };
  chart = new uPlot(opts, [xData, ...series], box);
}
async function downloadCSV() {
  const { path, report, from, to } = reportURL();
  const status = $('#rep-status');
  try {
    const res = await call(path, { accept: 'text/csv' });
    const cd = res.headers.get('Content-Disposition') || '';
    const m = /filename="?([^";]+)"?/.exec(cd);
    download(m ? m[1] : `${report}-${from}-${to}.csv`, await res.blob());
    status.textContent = 'CSV downloaded.';
  } catch (e) { status.textContent = errorText(e); }
}

// ---- Deliveries ----
const del = { page: 1, perPage: 20 };
async function loadDeliveries() {
  await loaded('deliveries', async () => {
    const f = new FormData($('#del-filter'));
    const q = new URLSearchParams({ page: String(del.page), per_page: String(del.perPage) });
    if (f.get('status')) q.set('status', f.get('status'));
    const body = $('#del-table tbody');
    let r;
    try { r = await call('/api/v1/deliveries?' + q); } catch (e) { $('#del-status').textContent = errorText(e); body.replaceChildren(); return; }
    const pages = Math.max(1, Math.ceil(r.pagination.total / del.perPage));
    $('#del-status').textContent = `${r.pagination.total} deliveries`;
    $('#del-page').textContent = `Page ${del.page} of ${pages}`;
    $('#del-prev').disabled = del.page <= 1;
    $('#del-next').disabled = del.page >= pages;
    body.replaceChildren(...r.data.map((d) => {
      const resend = (d.status === 'parked' || d.status === 'succeeded') && can('deliveries:write')
        ? el('button', { type: 'button', 'aria-label': `Re-send delivery ${d.id}`, onclick: (ev) => resendDelivery(d.id, ev.currentTarget), text: 'Re-send' })
        : '—';
      return el('tr', { dataset: { id: d.id, status: d.status } },
        el('td', { text: d.created_at.replace('T', ' ').replace('Z', '') }), el('td', { text: d.target }), el('td', { text: d.endpoint_id }),
        el('td', { text: d.event_type }), el('td', {}, badge(d.status)), el('td', { class: 'num', text: d.attempts }),
        el('td', { text: d.last_error || (d.last_status_code ? 'HTTP ' + d.last_status_code : '—') }), el('td', {}, resend));
    }));
  });
}
async function resendDelivery(id, button) {
  button.disabled = true;
  try {
    const d = (await call(`/api/v1/deliveries/${encodeURIComponent(id)}/resend`, { method: 'POST' })).data;
    $('#del-status').textContent = `Delivery ${id} re-sent: now ${STATUS[d.status] || d.status}.`;
    await loadDeliveries();
    $('#del-status').textContent = `Delivery ${id} re-sent: now ${STATUS[d.status] || d.status}.`;
  } catch (e) {
    $('#del-status').textContent = errorText(e);
    button.disabled = false;
  }
}

// ---- Audit ----
async function loadAudit() {
  await loaded('audit', async () => {
    const box = $('#audit');
    let h;
    try { h = (await call('/api/v1/audit/head')).data; } catch (e) { box.replaceChildren(el('p', { class: 'error', role: 'alert', text: errorText(e) })); return; }
    const v = h.last_verify;
    box.replaceChildren(
      el('h3', { text: 'Hash-chain head' }),
      el('dl', { class: 'fields', id: 'chain-head' }, el('dt', { text: 'Position' }), el('dd', { text: h.position }),
        el('dt', { text: 'Hash' }), el('dd', {}, el('code', { text: h.hash || '(empty store)' }))),
      el('p', { class: 'hint', text: `Keep position:hash to anchor a later check: pitboss verify --anchor ${h.position}:${h.hash}` }),
      el('h3', { text: 'Last verification' }),
      v ? el('div', { id: 'last-verify' },
        el('p', {}, el('strong', { text: v.ok ? '✔ Passed' : '✖ FAILED' }), ` — pitboss verify finished ${v.finished_at}, ` +
          (v.events === null ? 'before it recorded each client\'s part' : `${v.events} of your events up to position ${v.head_position}`)),
        table(['Check', 'Result', 'Failures', 'Note'], v.checks.map((c) => [c.name, c.skipped ? '– skipped' : c.ok ? '✔ ok' : '✖ failed', c.failures, c.skipped || '']), [2]))
        : el('p', { id: 'last-verify', text: 'Never verified: run pitboss verify (it records its outcome here).' }),
      el('h3', { text: 'Export' }),
      el('p', { text: `Your own events, with the exact stored bodies and hashes, as NDJSON (paged from ${h.events_path}). The whole chain: pitboss export.` }),
      el('p', {}, el('button', { type: 'button', id: 'export', onclick: (ev) => exportEvents(h.events_path, ev.currentTarget), text: 'Download my events (NDJSON)' })),
      el('p', { id: 'export-status', class: 'status', 'aria-live': 'polite' }));
  });
}
async function exportEvents(path, button) {
  button.disabled = true;
  const status = $('#export-status');
  const lines = [];
  let after = 0;
  try {
    for (;;) {
      const r = await call(`${path}?after=${after}&limit=1000`);
      for (const e of r.data) lines.push(JSON.stringify(e));
      status.textContent = `${lines.length} events…`;
      if (r.data.length < 1000) break;
      after = r.next_after;
    }
    download(`pitboss-events-${me.client_id}.ndjson`, new Blob([lines.map((l) => l + '\n').join('')], { type: 'application/x-ndjson' }));
    status.textContent = `${lines.length} events exported.`;
  } catch (e) { status.textContent = errorText(e); } finally { button.disabled = false; }
}


// ---- Tokens (admin token only) ----
// Every call here goes to /admin/v1 with the admin token, as the sign-in's
// client picker does. Keys are listed without their secret (only a hash is
// stored); a new key is shown once; the client secret is revealed on
// demand through the recorded reveal route and hidden again on request,
// on leaving the page, on changing client and at sign-out.
const tok = { client: null, keys: [], trailPage: 1, trailPerPage: 20, pending: null, secret: null };
const adminCall = (path, opts = {}) => call(path, { ...opts, secret: store.getItem('pitboss.admin') });
const clientPath = (id) => `/admin/v1/clients/${encodeURIComponent(id)}`;
// when shows a record's time to the second, in UTC (the API keeps milliseconds).
const when = (v) => (v ? v.replace('T', ' ').replace(/(\.\d+)?Z$/, '') : '—');
// whenCell is a table cell of when(v) that wraps, if it must, between date and time only.
function whenCell(v, none = '—') {
  if (!v) return el('td', { text: none });
  const [d, t] = when(v).split(' ');
  return el('td', { class: 'when' }, el('span', { text: d }), ' ', el('span', { text: t }));
}

function resetTokens() {
  hideSecret();
  walletPart.reset();
  closeOnce();
  closeConfirm();
  tok.client = null;
  tok.secret = null;
  tok.keys = [];
  tok.trailPage = 1;
  $('#tok-status').textContent = '';
  $('#tok-trail-status').textContent = '';
  $('#tok-secret-state').textContent = '';
}
function hideSecret() {
  $('#tok-secret-value').value = '';
  $('#tok-secret-shown').hidden = true;
  delete $('#tok-secret').dataset.revealed;
  if (tok.secret) secretState();
}
// secretState says what the client secret's part of the page holds.
function secretState() {
  const revealed = !!$('#tok-secret').dataset.revealed;
  $('#tok-secret-state').textContent = {
    unconfigured: 'The signed-launch store is not configured on this server.',
    none: 'No client secret is issued for this client (POST /admin/v1/clients/{id}/client-secret issues one).',
    set: revealed ? 'Revealed below; this reveal is recorded in the trail. Hide it when you are done.'
      : '•••••••• hidden. Reveal shows it here and records the reveal in the trail.',
  }[tok.secret] || '';
  $('#tok-reveal-button').disabled = tok.secret !== 'set';
}
function closeOnce() {
  $('#tok-once-key').value = '';
  $('#tok-once-what').textContent = '';
  $('#tok-once').hidden = true;
}
function closeConfirm() {
  tok.pending = null;
  $('#tok-confirm').hidden = true;
}
async function copyFrom(input, status) {
  try {
    await navigator.clipboard.writeText(input.value);
    status.textContent = 'Copied to the clipboard.';
  } catch {
    input.focus();
    input.select();
    status.textContent = 'The clipboard is not available here: the text is selected, press Ctrl+C (⌘C) to copy it.';
  }
}

async function loadTokens() {
  await loaded('tokens', async () => {
    const status = $('#tok-status');
    const sel = $('#tok-client');
    if (!sel.options.length) {
      try {
        const r = await adminCall('/admin/v1/clients?per_page=200');
        sel.replaceChildren(...r.data.map((c) => el('option', { value: c.id, text: `${c.name} (${c.id}, ${c.environment})` })));
        const acting = store.getItem('pitboss.client');
        if (acting && r.data.some((c) => c.id === acting)) sel.value = acting;
      } catch (e) { status.textContent = errorText(e); return; }
    }
    if (!$('#tok-scopes input')) {
      $('#tok-scopes').append(...ALL_SCOPES.map((sc) => el('label', { class: 'check' },
        el('input', { type: 'checkbox', name: 'scopes', value: sc }), ' ' + sc)));
    }
    const id = sel.value;
    if (!id) { status.textContent = 'No clients yet.'; return; }
    if (id !== tok.client) { hideSecret(); closeOnce(); closeConfirm(); tok.trailPage = 1; }
    tok.client = id;
    $('#page-tokens').dataset.client = id;
    try {
      const [client, keys] = await Promise.all([adminCall(clientPath(id)), adminCall(clientPath(id) + '/keys')]);
      renderKeys(keys.data);
      const sl = client.data.signed_launch;
      tok.secret = !sl ? 'unconfigured' : sl.client_secret_set ? 'set' : 'none';
      secretState();
      walletPart.show(id, client.data.wallet);
      status.textContent = `${client.data.name} (${id}, ${client.data.environment}): ${keys.data.length} keys, ${client.data.keys ? client.data.keys.active : '?'} active.`;
    } catch (e) { status.textContent = errorText(e); return; }
    await loadTrail();
    await walletPart.loadFollowUps();
  });
}

function renderKeys(keys) {
  tok.keys = keys;
  const session = store.getItem('pitboss.client') === tok.client ? store.getItem('pitboss.keyid') : null;
  $('#tok-keys tbody').replaceChildren(...keys.map((k) => {
    const mine = k.id === session;
    const label = mine ? `${k.label} (this console session)` : k.label;
    let actions;
    if (mine) actions = el('span', { class: 'hint', text: 'revoked at sign-out' });
    else if (k.status === 'active' && !k.replaced_by) {
      actions = el('span', { class: 'actions' },
        el('button', { type: 'button', 'aria-label': `Rotate key ${k.prefix}`, dataset: { action: 'rotate' }, onclick: (ev) => askConfirm('rotate', k, ev.currentTarget), text: 'Rotate' }),
        ' ',
        el('button', { type: 'button', 'aria-label': `Revoke key ${k.prefix}`, dataset: { action: 'revoke' }, onclick: (ev) => askConfirm('revoke', k, ev.currentTarget), text: 'Revoke' }));
    } else if (k.status === 'active') {
      actions = el('span', {}, el('span', { class: 'hint', text: `rotated → ${k.replaced_by} ` }),
        el('button', { type: 'button', 'aria-label': `Revoke key ${k.prefix}`, dataset: { action: 'revoke' }, onclick: (ev) => askConfirm('revoke', k, ev.currentTarget), text: 'Revoke' }));
    } else actions = '—';
    return el('tr', { dataset: { id: k.id, status: k.status } },
      el('td', {}, el('code', { text: k.prefix })), el('td', { text: text(label) }), el('td', { class: 'scopes', text: k.scopes.join(', ') }),
      el('td', { text: k.environment }), el('td', {}, badge(k.status)), whenCell(k.created_at), whenCell(k.last_used_at),
      whenCell(k.expires_at, 'never'), whenCell(k.revoked_at), el('td', {}, actions));
  }));
}

function askConfirm(action, key, button) {
  tok.pending = { action, key, button };
  const name = key.label ? `${key.prefix} (${key.label})` : key.prefix;
  $('#tok-confirm-text').textContent = action === 'revoke'
    ? `Revoke key ${name}? It stops working at once on every server, and this cannot be undone.`
    : `Rotate key ${name}? A new key with the same scopes and label is issued and shown once.`;
  $('#tok-confirm-grace').hidden = action !== 'rotate';
  $('#tok-confirm-yes').textContent = action === 'revoke' ? 'Revoke key' : 'Rotate key';
  $('#tok-confirm-yes').dataset.action = action;
  $('#tok-confirm').hidden = false;
  $('#tok-confirm-yes').focus();
}

async function confirmPending() {
  const p = tok.pending;
  if (!p) return;
  const yes = $('#tok-confirm-yes');
  const status = $('#tok-status');
  yes.disabled = true;
  try {
    const path = `${clientPath(tok.client)}/keys/${encodeURIComponent(p.key.id)}/${p.action}`;
    if (p.action === 'revoke') {
      const k = (await adminCall(path, { method: 'POST' })).data;
      closeConfirm();
      await loadTokens();
      status.textContent = `Key ${k.prefix} revoked at ${when(k.revoked_at)} UTC.`;
    } else {
      const k = (await adminCall(path, { method: 'POST', body: { grace_period_seconds: Number($('#tok-grace').value) } })).data;
      closeConfirm();
      showOnce(k, `Rotated ${p.key.prefix}: its successor ${k.prefix} (the old key works until ${when(k.replaced.expires_at)} UTC).`);
      await loadTokens();
      status.textContent = `Key ${p.key.prefix} rotated to ${k.prefix}.`;
    }
  } catch (e) {
    status.textContent = errorText(e);
  } finally { yes.disabled = false; }
}

function showOnce(k, what) {
  $('#tok-once-what').textContent = what;
  $('#tok-once-key').value = k.key;
  $('#tok-once').dataset.prefix = k.prefix;
  $('#tok-once').hidden = false;
  $('#tok-once').focus();
}

async function issueKey(form) {
  const status = $('#tok-status');
  const f = new FormData(form);
  const body = { scopes: f.getAll('scopes').map(String) };
  const label = String(f.get('label') || '').trim();
  if (label) body.label = label;
  const exp = String(f.get('expires_at') || '');
  if (exp) body.expires_at = (exp.length === 16 ? exp + ':00' : exp) + 'Z';
  if (!body.scopes.length) { status.textContent = 'Choose at least one scope.'; return; }
  const button = form.querySelector('button[type=submit]');
  button.disabled = true;
  try {
    const k = (await adminCall(`${clientPath(tok.client)}/keys`, { method: 'POST', body })).data;
    form.reset();
    showOnce(k, `Issued ${k.prefix} with ${k.scopes.join(', ')}.`);
    await loadTokens();
    status.textContent = `Key ${k.prefix} issued.`;
  } catch (e) { status.textContent = errorText(e); } finally { button.disabled = false; }
}

async function revealSecret(form) {
  const status = $('#tok-status');
  const reason = String(new FormData(form).get('reason') || '').trim();
  const button = $('#tok-reveal-button');
  button.disabled = true;
  try {
    const r = (await adminCall(`${clientPath(tok.client)}/client-secret/reveal`, { method: 'POST', body: reason ? { reason } : undefined })).data;
    form.reset();
    $('#tok-secret-value').value = r.client_secret;
    $('#tok-secret-shown').hidden = false;
    $('#tok-secret').dataset.revealed = String(r.reveal.id);
    secretState();
    status.textContent = `Client secret revealed at ${when(r.reveal.revealed_at)} UTC; recorded as reveal #${r.reveal.id}.`;
    tok.trailPage = 1;
    await loadTrail();
    $('#tok-secret-value').focus();
  } catch (e) { status.textContent = errorText(e); } finally { button.disabled = false; }
}

async function loadTrail() {
  const status = $('#tok-trail-status');
  const body = $('#tok-trail tbody');
  let r;
  try {
    r = await adminCall(`${clientPath(tok.client)}/client-secret/reveals?page=${tok.trailPage}&per_page=${tok.trailPerPage}`);
  } catch (e) { status.textContent = errorText(e); body.replaceChildren(); return; }
  const pages = Math.max(1, Math.ceil(r.pagination.total / tok.trailPerPage));
  const n = r.pagination.total;
  status.textContent = n === 0 ? 'Never revealed.' : n === 1 ? '1 reveal' : `${n} reveals`;
  $('#tok-page').textContent = `Page ${tok.trailPage} of ${pages}`;
  $('#tok-prev').disabled = tok.trailPage <= 1;
  $('#tok-next').disabled = tok.trailPage >= pages;
  body.replaceChildren(...r.data.map((x) => el('tr', { dataset: { id: String(x.id) } },
    el('td', { text: when(x.revealed_at) }), el('td', {}, el('code', { text: x.actor })), el('td', { text: text(x.remote_addr) }),
    el('td', { class: 'ua', text: text(x.user_agent) }), el('td', { text: text(x.reason) }))));
}

const LOADERS = { overview: loadOverview, transactions: loadTransactions, reports: loadReports, deliveries: loadDeliveries, audit: loadAudit,
  reconcile: loadReconcile, tokens: loadTokens, rates: loadRates, statements: loadStatements,
  deals: dealsPage({ $, el, text, when, adminCall, errorText, loaded }), campaigns: () => campaignsPart.load() };
// The Campaigns page: free-bet campaigns, their rewards and report.
const campaignsPart = campaignsPage({ $, el, text, when, call, can, errorText, loaded, download, setBusy });
// The Tokens page's wallet part: the client's wallet mode and follow-ups.
const walletPart = walletArea({ $, el, text, when, badge, adminCall, clientPath, errorText, setBusy });

// ---- Reconcile: a daily file against the ledger (POST /api/v1/reconciliations) ----
const RECONCILE_KINDS = [
  ['missing_in_ledger', 'In the file only'], ['missing_in_file', 'In the ledger only'], ['amount_mismatch', 'Amount differs'],
  ['status_mismatch', 'Status differs'], ['type_mismatch', 'Type differs'], ['duplicate_in_file', 'Twice in the file'],
];
const utcDay = (d) => d.toISOString().slice(0, 10);
async function loadReconcile() {
  await loaded('reconcile', async () => {
    const f = $('#rec-form');
    if (!f.elements.day.value) f.elements.day.value = utcDay(new Date(Date.now() - 864e5));
  });
}
async function runReconcile(ev) {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const file = f.get('file');
  const status = $('#rec-status');
  if (!file || !file.size) { status.textContent = 'Choose the CSV file to compare.'; return; }
  const q = new URLSearchParams({ day: f.get('day') });
  for (const k of ['provider', 'columns', 'statuses', 'currency']) if (String(f.get(k) || '').trim()) q.set(k, String(f.get(k)).trim());
  if (f.get('signed')) q.set('signed', 'true');
  setBusy(true);
  status.textContent = `Comparing ${file.name}…`;
  $('#rec-report').replaceChildren();
  try {
    const r = await call('/api/v1/reconciliations?' + q, { method: 'POST', raw: await file.text(), contentType: 'text/csv' });
    renderReconcile(r.data);
    const n = Object.values(r.data.counts).reduce((a, b) => a + b, 0);
    status.textContent = n ? `${n} differences` : '✔ No differences';
  } catch (e) {
    status.textContent = '';
    $('#rec-report').replaceChildren(el('p', { class: 'error', role: 'alert', text: errorText(e) }));
  } finally { setBusy(false); }
}
function renderReconcile(d) {
  const side = (x, k) => (x ? x[k] : null);
  const totals = new Map();
  for (const t of d.file_totals) totals.set(t.currency, [t.amount, null]);
  for (const t of d.ledger_totals) totals.set(t.currency, [(totals.get(t.currency) || [null])[0], t.amount]);
  let diffs = el('p', { id: 'rec-differences', text: 'None.' });
  if (d.differences.length) {
    diffs = table(['Kind', 'Transaction id', 'File line', 'File amount', 'Ledger amount', 'File status', 'Ledger status',
      'File type', 'Ledger type'], d.differences.map((x) => [
      (RECONCILE_KINDS.find(([k]) => k === x.kind) || [x.kind, x.kind])[1], x.transaction_id, side(x.file, 'line'),
      side(x.file, 'amount'), side(x.ledger, 'amount'), side(x.file, 'status'), side(x.ledger, 'status'), side(x.file, 'type'),
      side(x.ledger, 'type')]), [2, 3, 4]);
    diffs.id = 'rec-differences';
    diffs.querySelectorAll('tbody tr').forEach((tr, i) => { tr.dataset.kind = d.differences[i].kind; tr.dataset.id = d.differences[i].transaction_id; });
  }
  $('#rec-report').replaceChildren(
    el('p', { text: `${d.day}${d.provider ? ' · provider ' + d.provider : ''}: ${d.file_rows} file rows, ${d.ledger_rows} ledger rows, ${d.matched} matched.` }),
    el('div', { class: 'cards', id: 'rec-counts' }, RECONCILE_KINDS.map(([k, label]) => el('dl', { class: 'card', dataset: { kind: k } },
      el('dt', { text: label }), el('dd', { class: 'num', text: String(d.counts[k] || 0) })))),
    el('h3', { text: 'Totals' }),
    table(['Currency', 'File', 'Ledger'], [...totals].map(([c, [a, b]]) => [c, a, b]), [1, 2]),
    el('h3', { text: 'Differences' }),
    diffs,
    ...(d.truncated ? [el('p', { class: 'hint', text: 'Only the first differences are listed; the counts above count them all.' })] : []));
}

// ---- Rates (admin): exchange rates as data (GET/PUT /admin/v1/fx-rates) ----
const rates = { page: 1, perPage: 50 };
async function loadRates() {
  await loaded('rates', async () => {
    const f = new FormData($('#rates-filter'));
    const q = new URLSearchParams({ page: String(rates.page), per_page: String(rates.perPage) });
    for (const k of ['from', 'to', 'base', 'quote']) if (String(f.get(k) || '').trim()) q.set(k, String(f.get(k)).trim());
    const body = $('#rates-table tbody');
    let r;
    try { r = await adminCall('/admin/v1/fx-rates?' + q); } catch (e) {
      $('#rates-status').textContent = errorText(e);
      body.replaceChildren();
      return;
    }
    const pages = Math.max(1, Math.ceil(r.pagination.total / rates.perPage));
    $('#rates-status').textContent = `${r.pagination.total} rates`;
    $('#rates-page').textContent = `Page ${rates.page} of ${pages}`;
    $('#rates-prev').disabled = rates.page <= 1;
    $('#rates-next').disabled = rates.page >= pages;
    body.replaceChildren(...r.data.map((x) => el('tr', { dataset: { pair: `${x.base}/${x.quote}`, day: x.day } },
      el('td', { text: x.day }), el('td', { text: x.base }), el('td', { text: x.quote }), el('td', { class: 'num', text: x.rate }))));
  });
}
async function importRates(ev) {
  ev.preventDefault();
  const file = new FormData(ev.target).get('file');
  const status = $('#rates-import-status');
  if (!file || !file.size) { status.textContent = 'Choose the CSV file of rates (columns day,base,quote,rate).'; return; }
  setBusy(true);
  try {
    const r = await adminCall('/admin/v1/fx-rates', { method: 'PUT', raw: await file.text(), contentType: 'text/csv' });
    status.textContent = `✔ ${file.name}: ${r.data.received} rates received, ${r.data.written} written.`;
    ev.target.reset();
    rates.page = 1;
    await loadRates();
  } catch (e) {
    status.textContent = `✖ ${file.name}: ${errorText(e)} Nothing was stored.`;
  } finally { setBusy(false); }
}

// ---- Statements: closed periods (GET /api/v1/statements; closing is the admin's) ----
const st = { page: 1, perPage: 20 };
async function loadStatements() {
  await loaded('statements', async () => {
    $('#st-close').hidden = !isAdmin();
    const f = new FormData($('#st-filter'));
    const q = new URLSearchParams({ page: String(st.page), per_page: String(st.perPage) });
    if (String(f.get('provider') || '').trim()) q.set('provider', String(f.get('provider')).trim());
    const body = $('#st-table tbody');
    let r;
    try { r = await call('/api/v1/statements?' + q); } catch (e) { $('#st-status').textContent = errorText(e); body.replaceChildren(); return; }
    const pages = Math.max(1, Math.ceil(r.pagination.total / st.perPage));
    $('#st-status').textContent = `${r.pagination.total} statements`;
    $('#st-page').textContent = `Page ${st.page} of ${pages}`;
    $('#st-prev').disabled = st.page <= 1;
    $('#st-next').disabled = st.page >= pages;
    body.replaceChildren(...r.data.map((v) => {
      const p = v.statement;
      const totals = p.totals.length ? p.totals.map((t) => `${t.currency} GGR ${t.ggr} · commission ${t.commission}`).join('; ') : 'no play';
      const file = (accept, ext) => el('button', { type: 'button', text: ext, onclick: () => statementFile(v, accept, ext) });
      return el('tr', { dataset: { id: v.id, provider: v.provider } },
        el('td', { text: v.period === 'day' ? v.from : v.from.slice(0, 7) }), el('td', { text: v.provider }),
        whenCell(v.closed_at), el('td', { text: totals }),
        el('td', { text: p.late.length ? `${p.late.length} late change(s)` : '—' }),
        el('td', { class: 'actions' }, file('text/html', 'Printable page'), ' ', file('text/csv', 'CSV'), ' ',
          el('button', { type: 'button', text: 'Signed JSON', onclick: () => download(`statement-${v.id}.json`,
            new Blob([JSON.stringify({ success: true, data: v }, null, 2)], { type: 'application/json' })) })));
    }));
  });
}
async function statementFile(v, accept, what) {
  const status = $('#st-status');
  try {
    const res = await call(`/api/v1/statements/${encodeURIComponent(v.id)}`, { accept });
    download(`statement-${v.id}.${accept === 'text/csv' ? 'csv' : 'html'}`, await res.blob());
    status.textContent = `${what} of ${v.provider} ${v.from} downloaded.`;
  } catch (e) { status.textContent = errorText(e); }
}
async function closeStatement(ev) {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const status = $('#st-close-status');
  const body = { provider: String(f.get('provider')).trim(), period: f.get('period'), start: String(f.get('start')).trim() };
  if (String(f.get('reporting_currency') || '').trim()) body.reporting_currency = String(f.get('reporting_currency')).trim();
  setBusy(true);
  try {
    const r = await adminCall(`${clientPath(me.client_id)}/statements`, { method: 'POST', body });
    status.textContent = `✔ Closed ${r.data.provider} ${r.data.from} to ${r.data.to}: statement ${r.data.id}.`;
    st.page = 1;
    await loadStatements();
  } catch (e) {
    status.textContent = `✖ ${errorText(e)}`;
  } finally { setBusy(false); }
}

// ---- Wiring ----
$('#signin-form').addEventListener('submit', (ev) => { ev.preventDefault(); signIn($('#secret').value.trim()); });
$('#client-form').addEventListener('submit', (ev) => { ev.preventDefault(); actAsClient($('#client').value); });
$('#signout').addEventListener('click', signOut);
$('#tx-filter').addEventListener('submit', (ev) => { ev.preventDefault(); tx.page = 1; loadTransactions(); });
$('#tx-prev').addEventListener('click', () => { tx.page = Math.max(1, tx.page - 1); loadTransactions(); });
$('#tx-next').addEventListener('click', () => { tx.page += 1; loadTransactions(); });
$('#tx-detail-close').addEventListener('click', () => { $('#tx-detail').hidden = true; });
$('#rep-form').addEventListener('submit', (ev) => { ev.preventDefault(); loadReports(); });
$('#rep-csv').addEventListener('click', downloadCSV);
$('#rec-form').addEventListener('submit', runReconcile);
$('#rates-filter').addEventListener('submit', (ev) => { ev.preventDefault(); rates.page = 1; loadRates(); });
$('#rates-prev').addEventListener('click', () => { rates.page = Math.max(1, rates.page - 1); loadRates(); });
$('#rates-next').addEventListener('click', () => { rates.page += 1; loadRates(); });
$('#rates-import').addEventListener('submit', importRates);
$('#st-filter').addEventListener('submit', (ev) => { ev.preventDefault(); st.page = 1; loadStatements(); });
$('#st-prev').addEventListener('click', () => { st.page = Math.max(1, st.page - 1); loadStatements(); });
$('#st-next').addEventListener('click', () => { st.page += 1; loadStatements(); });
$('#st-close').addEventListener('submit', closeStatement);
$('#del-filter').addEventListener('submit', (ev) => { ev.preventDefault(); del.page = 1; loadDeliveries(); });
$('#del-prev').addEventListener('click', () => { del.page = Math.max(1, del.page - 1); loadDeliveries(); });
$('#del-next').addEventListener('click', () => { del.page += 1; loadDeliveries(); });
$('#tok-client-form').addEventListener('submit', (ev) => { ev.preventDefault(); loadTokens(); });
$('#tok-client').addEventListener('change', () => loadTokens());
$('#tok-issue').addEventListener('submit', (ev) => { ev.preventDefault(); issueKey(ev.currentTarget); });
$('#tok-reveal').addEventListener('submit', (ev) => { ev.preventDefault(); revealSecret(ev.currentTarget); });
$('#tok-secret-hide').addEventListener('click', () => { hideSecret(); $('#tok-reveal-button').focus(); });
$('#tok-secret-copy').addEventListener('click', () => copyFrom($('#tok-secret-value'), $('#tok-status')));
$('#tok-once-copy').addEventListener('click', () => copyFrom($('#tok-once-key'), $('#tok-status')));
$('#tok-once-done').addEventListener('click', () => { closeOnce(); $('#tok-keys-h').scrollIntoView(); });
$('#tok-confirm-yes').addEventListener('click', confirmPending);
$('#tok-confirm-no').addEventListener('click', () => { const b = tok.pending && tok.pending.button; closeConfirm(); if (b && b.isConnected) b.focus(); });
$('#tok-prev').addEventListener('click', () => { tok.trailPage = Math.max(1, tok.trailPage - 1); loadTrail(); });
$('#tok-next').addEventListener('click', () => { tok.trailPage += 1; loadTrail(); });
window.addEventListener('hashchange', route);
document.addEventListener('keydown', (ev) => {
  if (!ev.altKey || ev.ctrlKey || ev.metaKey || !me) return;
  const n = Number(ev.key);
  if (n >= 1 && n <= ORDER.length) { ev.preventDefault(); location.hash = ORDER[n - 1]; $('#main').focus(); }
  if (ev.key === 'Escape') $('#tx-detail').hidden = true;
});
document.addEventListener('keydown', (ev) => {
  if (ev.key !== 'Escape') return;
  if (!$('#tx-detail').hidden) $('#tx-detail').hidden = true;
  if (!$('#tok-confirm').hidden) closeConfirm();
  campaignsPart.escape();
});

(async function boot() {
  const secret = store.getItem('pitboss.secret');
  if (secret) {
    try { return start((await call('/api/v1/me')).data); } catch { store.removeItem('pitboss.secret'); }
  }
  document.body.dataset.state = 'signin';
  $('#secret').focus();
})();
