// Pitboss console: a client's wallet mode, on the Tokens page (admin token
// only; docs/seamless-wallet.md). The panel shows the mode and, for a
// seamless client, its wallet's URL, protocol, operator id and whether a
// credential is set — never the credential: the API does not send it, and
// the one typed into the form is cleared once the form is sent. The
// follow-ups are the unknown outcomes queued for the client's wallet.

const MODE_TEXT = {
  ledger: 'ledger — Pitboss holds the players\' money',
  seamless: 'seamless — the client\'s own wallet decides every bet and win',
};

// walletArea wires the wallet part of the Tokens page to the console's
// helpers; show(clientID, wallet) renders a client's settings, loadFollowUps
// its follow-ups, reset forgets both, forgetCredential a credential typed
// and not sent.
export function walletArea({ $, el, text, when, badge, adminCall, clientPath, errorText, setBusy }) {
  const st = { client: null, wallet: null, page: 1, perPage: 50 };
  const form = $('#wal-form');

  const seamlessShown = () => { $('#wal-seamless').hidden = form.elements.mode.value !== 'seamless'; };
  const clearError = () => {
    $('#wal-error').textContent = '';
    for (const i of form.querySelectorAll('[aria-invalid]')) i.removeAttribute('aria-invalid');
  };

  function render(w) {
    st.wallet = w || null;
    const panel = $('#wal-panel');
    form.hidden = !w;
    form.elements.credential.value = '';
    if (!w) {
      delete panel.dataset.mode;
      panel.replaceChildren(el('dt', { text: 'Mode' }), el('dd', { text: 'Wallet modes are not configured on this server.' }));
      return;
    }
    panel.dataset.mode = w.mode;
    const rows = [['Mode', MODE_TEXT[w.mode] || w.mode]];
    if (w.mode === 'seamless') {
      rows.push(['URL', text(w.url)], ['Protocol', text(w.protocol)], ['Operator id', text(w.operator_id)],
        ['Credential', w.credential_set ? '✔ credential set (sealed; never shown)' : '✖ no credential set']);
    }
    panel.replaceChildren(...rows.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { dataset: { field: k }, text: v })]));
    // The form starts from the stored settings; the credential stays empty
    // (empty keeps the stored one).
    form.elements.mode.value = w.mode;
    form.elements.url.value = w.url || '';
    form.elements.protocol.value = w.protocol || form.elements.protocol.options[0].value;
    form.elements.operator_id.value = w.operator_id || '';
    form.elements.credential.placeholder = w.credential_set ? 'empty: keep the stored one' : 'required';
    seamlessShown();
  }

  function show(clientID, wallet) {
    if (clientID !== st.client) { clearError(); $('#wal-status').textContent = ''; st.page = 1; }
    st.client = clientID;
    render(wallet);
  }

  async function submit() {
    const f = new FormData(form);
    const body = { mode: f.get('mode') };
    if (body.mode === 'seamless') {
      body.url = String(f.get('url') || '').trim();
      body.protocol = f.get('protocol');
      const op = String(f.get('operator_id') || '').trim();
      if (op) body.operator_id = op;
      const cred = String(f.get('credential') || '');
      if (cred) body.credential = cred;
    }
    clearError();
    const status = $('#wal-status');
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    setBusy(true);
    try {
      const c = (await adminCall(`${clientPath(st.client)}/wallet`, { method: 'PUT', body })).data;
      render(c.wallet);
      status.textContent = `✔ Wallet set: ${c.wallet.mode}${c.wallet.mode === 'seamless' ? ` (${c.wallet.protocol})` : ''}.`;
    } catch (e) {
      status.textContent = '';
      $('#wal-error').textContent = errorText(e);
      // The API names the field it refused (error.details.field): mark it.
      const field = e.details && typeof e.details.field === 'string' ? e.details.field : '';
      const input = field && form.querySelector(`[name="${CSS.escape(field)}"]`);
      if (input) { input.setAttribute('aria-invalid', 'true'); input.focus(); }
    } finally {
      form.elements.credential.value = '';
      button.disabled = false;
      setBusy(false);
    }
  }

  async function loadFollowUps() {
    const status = $('#wal-fu-status');
    const all = $('#wal-fu-all').checked;
    const q = new URLSearchParams({ client_id: st.client, state: all ? 'all' : 'pending', page: String(st.page),
      per_page: String(st.perPage) });
    const body = $('#wal-fu tbody');
    let list;
    try { list = (await adminCall('/admin/v1/seamless/follow-ups?' + q)).data.follow_ups; } catch (e) {
      status.textContent = errorText(e);
      body.replaceChildren();
      return;
    }
    const which = (n) => `${all ? '' : 'pending '}follow-up${n === 1 ? '' : 's'}`;
    status.textContent = list.length === 0 && st.page === 1 ? `No ${which(0)}.` : `${list.length} ${which(list.length)} on this page.`;
    $('#wal-fu-page').textContent = `Page ${st.page}`;
    $('#wal-fu-prev').disabled = st.page <= 1;
    $('#wal-fu-next').disabled = list.length < st.perPage;
    body.replaceChildren(...list.map((x) => el('tr', { dataset: { id: String(x.id), state: x.state } },
      el('td', { text: when(x.created_at) }), el('td', { text: x.action }),
      el('td', {}, `${x.kind} · ${x.move} `, el('code', { text: x.move_id }), x.ref ? ` (ref ${x.ref})` : ''),
      el('td', {}, el('code', { text: x.session_id })), el('td', { class: 'num', text: x.amount }),
      el('td', { class: 'num', text: String(x.attempts) }), el('td', {}, badge(x.state)),
      el('td', { text: x.state === 'pending' ? when(x.next_attempt_at) : '—' }), el('td', { text: when(x.settled_at) }),
      el('td', { class: 'wrap', text: text(x.last_error) }), el('td', { class: 'wrap', text: text(x.outcome) }))));
    $('#wal-fu').dataset.loaded = String(Number($('#wal-fu').dataset.loaded || 0) + 1);
  }

  function reset() {
    st.client = null;
    st.wallet = null;
    st.page = 1;
    form.reset();
    form.hidden = false;
    clearError();
    seamlessShown();
    delete $('#wal-panel').dataset.mode;
    for (const id of ['#wal-panel', '#wal-fu tbody']) $(id).replaceChildren();
    for (const id of ['#wal-status', '#wal-fu-status', '#wal-fu-page']) $(id).textContent = '';
    $('#wal-fu-all').checked = false;
  }

  const reload = async () => {
    if (!st.client) return;
    setBusy(true);
    try { await loadFollowUps(); } finally { setBusy(false); }
  };
  form.addEventListener('submit', (ev) => { ev.preventDefault(); if (st.client) submit(); });
  form.elements.mode.addEventListener('change', seamlessShown);
  $('#wal-fu-all').addEventListener('change', () => { st.page = 1; reload(); });
  $('#wal-fu-refresh').addEventListener('click', reload);
  $('#wal-fu-prev').addEventListener('click', () => { st.page = Math.max(1, st.page - 1); reload(); });
  $('#wal-fu-next').addEventListener('click', () => { st.page += 1; reload(); });
  seamlessShown();
  // forgetCredential clears a credential typed but not sent.
  const forgetCredential = () => { form.elements.credential.value = ''; };
  return { show, loadFollowUps, reset, forgetCredential };
}
