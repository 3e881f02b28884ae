// Pitboss console: the Deals page (admin token only). Commission deals as
// data (docs/finance.md): the versions in effect and scheduled, the
// history of every version, and a form to add a version. Every call goes
// to /admin/v1 with the admin token; rates and amounts stay text.

// dealsPage wires the page to the console's helpers and returns its loader.
export function dealsPage({ $, el, text, when, adminCall, errorText, loaded }) {
  const st = { page: 1, perPage: 20 };

  const filterQuery = () => {
    const f = new FormData($('#deal-filter'));
    const q = new URLSearchParams();
    for (const k of ['provider', 'client_id']) if (f.get(k)) q.set(k, f.get(k));
    return q;
  };
  const who = (d) => (d.client_id == null ? 'default' : d.client_id);
  const terms = (d) => {
    if (d.kind === 'flat') return `flat ${d.rate}`;
    const bands = (d.bands || []).map((b) => `${b.from}–${b.to || '∞'}: ${b.rate}`).join('; ');
    return `tiered (${d.mode}) ${bands}`;
  };
  const row = (d, extra) => el('tr', { dataset: { id: String(d.id) } },
    el('td', { text: String(d.id) }), el('td', { text: d.provider }), el('td', { text: who(d) }),
    el('td', { text: text(d.currency) }), el('td', { text: d.valid_from }), el('td', { text: terms(d) }),
    el('td', { text: d.carry_forward ? '↪ yes' : 'no' }), ...extra(d));

  async function loadList() {
    const status = $('#deal-status');
    try {
      const r = await adminCall('/admin/v1/deals?' + filterQuery());
      $('#deal-list tbody').replaceChildren(...r.data.map((d) => row(d, (x) => [
        el('td', { text: x.status === 'scheduled' ? '→ scheduled' : '✔ current' })])));
      status.textContent = r.data.length === 0 ? 'No deals.' : `${r.data.length} deal versions in effect or scheduled.`;
    } catch (e) { status.textContent = errorText(e); }
  }

  async function loadHistory() {
    const status = $('#deal-hist-status');
    const q = filterQuery();
    q.set('page', String(st.page));
    q.set('per_page', String(st.perPage));
    try {
      const r = await adminCall('/admin/v1/deals/history?' + q);
      const pages = Math.max(1, Math.ceil(r.pagination.total / st.perPage));
      $('#deal-hist tbody').replaceChildren(...r.data.map((d) => row(d, (x) => [
        el('td', { text: when(x.created_at) }), el('td', {}, el('code', { text: x.actor })),
        el('td', { text: x.backdated ? '⚠ backdated' : 'no' }), el('td', { text: text(x.note) })])));
      status.textContent = `${r.pagination.total} versions`;
      $('#deal-page').textContent = `Page ${st.page} of ${pages}`;
      $('#deal-prev').disabled = st.page <= 1;
      $('#deal-next').disabled = st.page >= pages;
    } catch (e) { status.textContent = errorText(e); }
  }

  // bands reads "from,to,rate" lines (the last one "from,,rate").
  const bands = (s) => s.split('\n').map((l) => l.trim()).filter((l) => l).map((l) => {
    const [from = '', to = '', rate = ''] = l.split(',').map((p) => p.trim());
    return to ? { from, to, rate } : { from, rate };
  });

  async function addVersion(form) {
    const f = new FormData(form);
    const body = { provider: f.get('provider'), valid_from: f.get('valid_from'), kind: f.get('kind'),
      carry_forward: f.get('carry_forward') === 'on', backdate: f.get('backdate') === 'on' };
    for (const k of ['client_id', 'currency', 'note']) if (f.get(k)) body[k] = f.get(k);
    if (body.kind === 'flat') body.rate = f.get('rate');
    else { body.mode = f.get('mode'); body.bands = bands(f.get('bands') || ''); }
    const status = $('#deal-add-status');
    try {
      const r = await adminCall('/admin/v1/deals', { method: 'POST', body });
      status.textContent = `Version ${r.data.id} added: ${r.data.provider}, ${who(r.data)}, from ${r.data.valid_from}.`;
      st.page = 1;
      await load();
    } catch (e) {
      status.textContent = errorText(e);
    }
  }

  async function load() {
    await loaded('deals', async () => { await loadList(); await loadHistory(); });
  }

  const kindShown = () => {
    const flat = $('#deal-add [name=kind]').value === 'flat';
    $('#deal-flat').hidden = !flat;
    $('#deal-tiered').hidden = flat;
  };
  $('#deal-filter').addEventListener('submit', (ev) => { ev.preventDefault(); st.page = 1; load(); });
  $('#deal-add').addEventListener('submit', (ev) => { ev.preventDefault(); addVersion(ev.currentTarget); });
  $('#deal-add [name=kind]').addEventListener('change', kindShown);
  $('#deal-prev').addEventListener('click', () => { st.page = Math.max(1, st.page - 1); loadHistory(); });
  $('#deal-next').addEventListener('click', () => { st.page += 1; loadHistory(); });
  kindShown();
  return load;
}
