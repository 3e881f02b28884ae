// Pitboss console: the Campaigns page (promotions:read; docs/promotions.md).
// Free-bet campaigns with their report line (free bets granted, used,
// cancelled, expired and left, and the cost, in a reporting currency when
// one is chosen; reports:read), the report's CSV, a form to create a
// campaign, a form to grant rewards from a pasted list of players, and a
// campaign's rewards with a Cancel button on the unused active ones
// (promotions:write). Amounts stay the server's text.

// STATE_TEXT labels a reward's state with a symbol, never colour alone.
const STATE_TEXT = { active: '✔ active', cancelled: '✖ cancelled', expired: '⌛ expired' };
const OUTCOME_TEXT = { granted: '✔ granted', replayed: '↺ replayed: granted before, not again' };
// MAX_ID is domain.MaxIDLength; MAX_GRANTS is promo.MaxGrantsPerRequest.
const MAX_ID = 128;
const MAX_GRANTS = 500;
// COUNT_FIELDS are the report line's columns the table shows, in order.
const COUNT_FIELDS = [
  ['rewards', (l) => l.rewards], ['granted', (l) => l.free_bets_granted], ['used', (l) => l.free_bets_used],
  ['cancelled', (l) => l.free_bets_cancelled], ['expired', (l) => l.free_bets_expired], ['left', (l) => l.free_bets_left],
  ['promo-wins', (l) => `${l.promo_wins} ${l.currency}`], ['cost', (l) => `${l.cost} ${l.currency}`],
];

// rewardIDOf is the reward id a line without one gets: the campaign id, a
// dot, the player id. The same campaign and player give the same id every
// time, so a list sent twice grants nothing twice (the server answers the
// second as replayed). Two campaigns whose ids differ by a dotted suffix
// ("a" and "a.b") can derive the same id for two players ("b.c" and "c");
// the server then refuses the second (a conflict with the first, nothing
// granted), and that line needs an id of its own.
const rewardIDOf = (campaignID, playerID) => `${campaignID}.${playerID}`;

// parseGrantLines reads the pasted list: one player a line, optionally
// followed by a comma (or spaces) and the reward id. It returns the
// rewards with their line numbers, or the problems found (nothing is sent
// then).
function parseGrantLines(textValue, campaignID) {
  const rewards = [];
  const problems = [];
  const byReward = new Map();
  textValue.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    const parts = raw.trim().split(/\s*[,;\t ]\s*/).filter((p) => p !== '');
    if (!parts.length) return;
    if (parts.length > 2) { problems.push(`line ${line}: a player id and at most one reward id, not ${parts.length} values`); return; }
    const [player, given] = parts;
    const reward = given || rewardIDOf(campaignID, player);
    if (!given && reward.length > MAX_ID) {
      problems.push(`line ${line}: the reward id ${campaignID}.… would be longer than ${MAX_ID} characters: give the line one (player,reward)`);
      return;
    }
    if (byReward.has(reward)) {
      problems.push(given ? `line ${line}: reward id ${reward} is on line ${byReward.get(reward)} too`
        : `line ${line}: player ${player} is on line ${byReward.get(reward)} too; a second reward for the same player needs its own reward id (player,reward)`);
      return;
    }
    byReward.set(reward, line);
    rewards.push({ line, player, reward });
  });
  if (!rewards.length && !problems.length) problems.push('List at least one player id, one a line.');
  return { rewards, problems };
}

// campaignsPage wires the page to the console's helpers; load shows it,
// reset forgets it at sign-out, escape closes a pending cancel.
export function campaignsPage({ $, el, text, when, call, can, errorText, loaded, download, setBusy }) {
  const st = { campaigns: [], open: null, pending: null };
  const path = (id) => `/api/v1/campaigns/${encodeURIComponent(id)}`;
  const writer = () => can('promotions:write');
  const state = (s) => el('span', { class: 'badge s-' + s, text: STATE_TEXT[s] || s });
  // utc turns a datetime-local value into RFC 3339 in UTC.
  const utc = (v) => (v.length === 16 ? v + ':00' : v) + 'Z';
  const field = (f, k) => String(f.get(k) || '').trim();
  // whenCell wraps, if it must, between date and time only.
  const whenCell = (v) => {
    const [d, t] = when(v).split(' ');
    return el('td', { class: 'when' }, el('span', { text: d }), ' ', el('span', { text: t || '' }));
  };

  function reportQuery() {
    const f = new FormData($('#camp-filter'));
    const q = new URLSearchParams();
    for (const k of ['from', 'to']) if (field(f, k)) q.set(k, field(f, k));
    if (field(f, 'reporting_currency')) q.set('reporting_currency', field(f, 'reporting_currency').toUpperCase());
    return q;
  }

  // reportingCell shows a cost in the reporting currency, or the days it
  // lacks a rate for (the server sends no partial sum).
  const reportingCell = (r) => {
    if (!r) return el('td', { text: '—' });
    if (r.complete) return el('td', { class: 'num', text: `${r.cost} ${r.currency}` });
    return el('td', { class: 'gap', text: `⚠ no ${r.currency} rate for ${r.missing_rate_days.join(', ')}` });
  };

  async function loadList() {
    const status = $('#camp-status');
    const note = $('#camp-report-note');
    const reports = can('reports:read');
    const q = reportQuery();
    let list;
    let report = null;
    try {
      [list, report] = await Promise.all([call('/api/v1/campaigns'),
        reports ? call('/api/v1/reports/campaigns?' + q) : Promise.resolve(null)]);
    } catch (e) {
      status.textContent = errorText(e);
      $('#camp-table thead').replaceChildren();
      $('#camp-table tbody').replaceChildren();
      $('#camp-total').textContent = '';
      return;
    }
    st.campaigns = list.data;
    const lines = new Map((report ? report.data.campaigns : []).map((l) => [l.campaign_id, l]));
    const converted = reports && !!q.get('reporting_currency');
    note.hidden = reports;
    note.textContent = reports ? '' : 'The free-bet counts, the cost and the CSV need the reports:read scope; this key lists the campaigns only.';
    $('#camp-csv').disabled = !reports;
    const head = ['Campaign', 'Name', 'Provider', 'Bet value', 'Free bets / reward', 'Valid until (UTC)'];
    const counts = ['Rewards', 'Granted', 'Used', 'Cancelled', 'Expired', 'Left', 'Promo wins', 'Cost'];
    const cols = [...head, ...(reports ? counts : []), ...(converted ? [`Cost in ${q.get('reporting_currency')}`] : []), 'Detail'];
    $('#camp-table thead').replaceChildren(el('tr', {}, cols.map((c, i) => el('th', {
      scope: 'col', class: i >= head.length && i < head.length + (reports ? counts.length : 0) ? 'num' : null, text: c }))));
    $('#camp-table tbody').replaceChildren(...st.campaigns.map((c) => {
      const l = lines.get(c.campaign_id);
      const countCells = !reports ? [] : COUNT_FIELDS.map(([k, v]) => el('td', { class: 'num', dataset: { field: k }, text: l ? text(v(l)) : '—' }));
      return el('tr', { dataset: { id: c.campaign_id } },
        el('td', {}, el('code', { text: c.campaign_id })), el('td', { class: 'wrap', text: text(c.name) }), el('td', { text: c.provider }),
        el('td', { class: 'num', text: `${c.bet_value} ${c.currency}` }), el('td', { class: 'num', text: String(c.free_bets) }),
        whenCell(c.valid_until),
        ...countCells, ...(converted ? [reportingCell(l && l.reporting)] : []),
        el('td', {}, el('button', { type: 'button', 'aria-label': `Rewards of campaign ${c.campaign_id}`,
          onclick: () => openCampaign(c.campaign_id), text: 'Rewards' })));
    }));
    const total = report && report.data.reporting_total;
    $('#camp-total').textContent = !total ? ''
      : total.complete ? `Total cost in ${total.currency}: ${total.cost}.`
        : `Total cost in ${total.currency}: not known — no rate for ${total.missing_rate_days.join(', ')}.`;
    const n = st.campaigns.length;
    status.textContent = n === 0 ? 'No campaigns yet.' : `${n} campaign${n === 1 ? '' : 's'}` +
      (reports ? ` · promo money ${q.get('from') || q.get('to') ? `from ${q.get('from') || 'the start'} to ${q.get('to') || 'today'}` : 'over all days'}` : '');
  }

  async function downloadCSV() {
    const status = $('#camp-status');
    try {
      const res = await call('/api/v1/reports/campaigns?' + reportQuery(), { accept: 'text/csv' });
      const m = /filename="?([^";]+)"?/.exec(res.headers.get('Content-Disposition') || '');
      download(m ? m[1] : 'campaigns.csv', await res.blob());
      status.textContent = 'CSV downloaded.';
    } catch (e) { status.textContent = errorText(e); }
  }

  async function create(form) {
    const f = new FormData(form);
    const status = $('#camp-create-status');
    const body = { campaign_id: field(f, 'campaign_id'), name: field(f, 'name'), provider: field(f, 'provider'),
      games: field(f, 'games').split(/[\s,]+/).filter((g) => g), currency: field(f, 'currency').toUpperCase(),
      bet_value: field(f, 'bet_value'), free_bets: Number(field(f, 'free_bets')), valid_until: utc(field(f, 'valid_until')) };
    if (field(f, 'valid_from')) body.valid_from = utc(field(f, 'valid_from'));
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    setBusy(true);
    try {
      const c = (await call('/api/v1/campaigns', { method: 'POST', body })).data;
      status.textContent = c.created
        ? `✔ Campaign ${c.campaign_id} created: ${c.free_bets} free bets of ${c.bet_value} ${c.currency} a reward, until ${when(c.valid_until)} UTC` +
          (c.at_provider ? ', made at the provider too.' : ' (recorded on our side only: the provider has no promotion API here).')
        : `Campaign ${c.campaign_id} exists already with these terms: nothing changed.`;
      form.reset();
      await loadList();
      await openCampaign(c.campaign_id);
    } catch (e) {
      status.textContent = `✖ ${errorText(e)}`;
    } finally { button.disabled = false; setBusy(false); }
  }

  // ---- One campaign: its terms, the grant form and its rewards ----
  // openCampaign shows a campaign; focus moves there when a person opened it.
  async function openCampaign(id, focus = true) {
    const box = $('#camp-detail');
    closeConfirm();
    if (st.open !== id) {
      $('#camp-grant').reset();
      $('#camp-grant-status').textContent = '';
      $('#camp-grant-result').hidden = true;
      $('#camp-grant-result tbody').replaceChildren();
    }
    st.open = id;
    box.dataset.id = id;
    box.hidden = false;
    const c = st.campaigns.find((x) => x.campaign_id === id);
    $('#camp-detail-h').textContent = `Campaign ${id}`;
    if (c) {
      const rows = [['Name', text(c.name)], ['Provider', c.provider + (c.at_provider ? ' (made at its promotion API too)' : ' (recorded on our side only)')],
        ['Games', c.games.join(', ')], ['Free bets a reward', `${c.free_bets} of ${c.bet_value} ${c.currency}`],
        ['Valid (UTC)', `${when(c.valid_from)} – ${when(c.valid_until)}`], ['Created (UTC)', when(c.created_at)]];
      $('#camp-terms').replaceChildren(...rows.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]));
      const sel = $('#camp-grant [name=game_id]');
      sel.replaceChildren(...c.games.map((g) => el('option', { value: g, text: g })));
      // One game: the server takes it; several: every line gets the one chosen.
      $('#camp-grant-game').hidden = c.games.length < 2;
    }
    $('#camp-grant-part').hidden = !writer();
    await loadRewards();
    if (focus) box.focus();
  }

  async function loadRewards() {
    const id = st.open;
    const status = $('#camp-rewards-status');
    const body = $('#camp-rewards tbody');
    let list;
    try { list = (await call(path(id) + '/rewards')).data; } catch (e) { status.textContent = errorText(e); body.replaceChildren(); return; }
    if (id !== st.open) return;
    const n = list.length;
    const active = list.filter((r) => r.state === 'active').length;
    status.textContent = n === 0 ? 'No rewards granted yet.' : `${n} reward${n === 1 ? '' : 's'}, ${active} active.`;
    body.replaceChildren(...list.map((r) => {
      let action = '—';
      if (r.state === 'active' && r.used === 0 && writer()) {
        action = el('button', { type: 'button', 'aria-label': `Cancel reward ${r.reward_id} of player ${r.player_id}`,
          onclick: (ev) => askCancel(r, ev.currentTarget), text: 'Cancel' });
      } else if (r.state === 'active' && r.used > 0) action = el('span', { class: 'hint', text: 'in use: cannot be cancelled' });
      return el('tr', { dataset: { id: r.reward_id, state: r.state, player: r.player_id } },
        el('td', {}, el('code', { text: r.reward_id })), el('td', { text: r.player_id }), el('td', { text: r.game_id }),
        el('td', { class: 'num', text: String(r.free_bets) }), el('td', { class: 'num', dataset: { field: 'used' }, text: String(r.used) }),
        el('td', { class: 'num', dataset: { field: 'left' }, text: String(r.left) }), el('td', {}, state(r.state)),
        el('td', { text: when(r.valid_until) }), el('td', { text: when(r.granted_at) }), el('td', {}, action));
    }));
    $('#camp-rewards').dataset.loaded = String(Number($('#camp-rewards').dataset.loaded || 0) + 1);
  }

  // sendGrants sends the rewards in requests of at most 500. A request the
  // server refuses as a whole (a malformed id, a game not the campaign's)
  // stops there: what was sent before stays granted, and sending the list
  // again replays it. It returns each sent line's outcome and why it
  // stopped, if it did.
  async function sendGrants(id, rewards, game, status) {
    const sum = { granted: 0, replayed: 0, refused: 0 };
    const rows = [];
    for (let i = 0; i < rewards.length; i += MAX_GRANTS) {
      const part = rewards.slice(i, i + MAX_GRANTS);
      status.textContent = `Granting ${i + 1}–${i + part.length} of ${rewards.length}…`;
      const body = { rewards: part.map((x) => (game ? { reward_id: x.reward, player_id: x.player, game_id: game }
        : { reward_id: x.reward, player_id: x.player })) };
      let r;
      try { r = (await call(path(id) + '/rewards', { method: 'POST', body })).data; } catch (e) {
        // A 400 names the item it refused: rewards[N].field.
        const m = /^rewards\[(\d+)\]/.exec(String((e.details && e.details.field) || ''));
        const line = m && part[Number(m[1])];
        return { sum, rows, stopped: (line ? `line ${line.line}: ` : '') + errorText(e) };
      }
      for (const k of Object.keys(sum)) sum[k] += r[k];
      r.rewards.forEach((x, j) => rows.push([part[j], x]));
    }
    return { sum, rows, stopped: null };
  }

  async function grant(form) {
    const f = new FormData(form);
    const id = st.open;
    const status = $('#camp-grant-status');
    const resultBody = $('#camp-grant-result tbody');
    const { rewards, problems } = parseGrantLines(String(f.get('players') || ''), id);
    resultBody.replaceChildren();
    $('#camp-grant-result').hidden = true;
    if (problems.length) { status.textContent = `✖ Nothing sent: ${problems.join('; ')}.`; return; }
    const c = st.campaigns.find((x) => x.campaign_id === id);
    const game = c && c.games.length > 1 ? String(f.get('game_id') || '') : '';
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    setBusy(true);
    try {
      const { sum, rows, stopped } = await sendGrants(id, rewards, game, status);
      resultBody.replaceChildren(...rows.map(([line, x]) => {
        // A refusal is an error body's error (code, message).
        const err = x.error || {};
        const outcome = x.status === 'refused' ? `✖ refused: ${err.message ?? ''} (${err.code ?? 'refused'})`
          : OUTCOME_TEXT[x.status] || x.status;
        return el('tr', { dataset: { reward: x.reward_id, status: x.status } },
          el('td', { class: 'num', text: String(line.line) }), el('td', { text: line.player }),
          el('td', {}, el('code', { text: x.reward_id })), el('td', { text: outcome }));
      }));
      $('#camp-grant-result').hidden = rows.length === 0;
      const done = `${sum.granted} granted, ${sum.replayed} replayed (granted before), ${sum.refused} refused`;
      if (!stopped) status.textContent = `✔ ${done}.`;
      else if (!rows.length) status.textContent = `✖ The server refused the list: ${stopped}. Nothing was granted.`;
      else {
        status.textContent = `✖ ${done}; then the server refused a request: ${stopped}. The lines after ` +
          `${rows[rows.length - 1][0].line} were not sent; sending the list again grants nothing twice.`;
      }
      await loadRewards();
      await loadList();
    } finally { button.disabled = false; setBusy(false); }
  }

  // ---- Cancel: asked first, in the page ----
  function askCancel(r, button) {
    st.pending = { reward: r, button };
    $('#camp-confirm-text').textContent = `Cancel reward ${r.reward_id} of player ${r.player_id}? Its ${r.left} free bets ` +
      'can no longer be used, and this cannot be undone.';
    $('#camp-cancel').reset();
    $('#camp-confirm').hidden = false;
    $('#camp-cancel-yes').focus();
  }
  function closeConfirm() {
    st.pending = null;
    $('#camp-confirm').hidden = true;
  }
  async function confirmCancel(form) {
    const p = st.pending;
    if (!p) return;
    const reason = field(new FormData(form), 'reason');
    const status = $('#camp-rewards-status');
    const yes = $('#camp-cancel-yes');
    yes.disabled = true;
    setBusy(true);
    try {
      const r = (await call(`${path(p.reward.campaign_id)}/rewards/${encodeURIComponent(p.reward.reward_id)}/cancel`,
        { method: 'POST', body: reason ? { reason } : {} })).data;
      closeConfirm();
      await loadRewards();
      await loadList();
      status.textContent = `Reward ${r.reward_id} of player ${r.player_id}: ${STATE_TEXT[r.state] || r.state}; ${r.left} free bets released.`;
    } catch (e) {
      status.textContent = `✖ ${errorText(e)}`;
    } finally { yes.disabled = false; setBusy(false); }
  }

  async function load() {
    await loaded('campaigns', async () => {
      $('#camp-create-part').hidden = !writer();
      $('#camp-write-note').hidden = writer();
      await loadList();
      if (st.open && st.campaigns.some((c) => c.campaign_id === st.open)) await openCampaign(st.open, false);
      else closeCampaign();
    });
  }

  function closeCampaign() {
    closeConfirm();
    st.open = null;
    $('#camp-detail').hidden = true;
    delete $('#camp-detail').dataset.id;
    for (const id of ['#camp-terms', '#camp-rewards tbody', '#camp-grant-result tbody']) $(id).replaceChildren();
    $('#camp-grant-result').hidden = true;
    $('#camp-grant').reset();
    for (const id of ['#camp-grant-status', '#camp-rewards-status']) $(id).textContent = '';
  }

  function reset() {
    closeCampaign();
    st.campaigns = [];
    for (const id of ['#camp-table thead', '#camp-table tbody']) $(id).replaceChildren();
    for (const id of ['#camp-status', '#camp-total', '#camp-create-status']) $(id).textContent = '';
    $('#camp-filter').reset();
    $('#camp-create').reset();
  }

  $('#camp-filter').addEventListener('submit', (ev) => { ev.preventDefault(); load(); });
  $('#camp-csv').addEventListener('click', downloadCSV);
  $('#camp-create').addEventListener('submit', (ev) => { ev.preventDefault(); create(ev.currentTarget); });
  $('#camp-grant').addEventListener('submit', (ev) => { ev.preventDefault(); if (st.open) grant(ev.currentTarget); });
  $('#camp-cancel').addEventListener('submit', (ev) => { ev.preventDefault(); confirmCancel(ev.currentTarget); });
  $('#camp-cancel-no').addEventListener('click', () => {
    const b = st.pending && st.pending.button;
    closeConfirm();
    if (b && b.isConnected) b.focus();
  });
  $('#camp-detail-close').addEventListener('click', closeCampaign);
  const escape = () => { if (!$('#camp-confirm').hidden) closeConfirm(); };
  return { load, reset, escape };
}
