// Pitboss demo slot. It talks only to its own origin: GET /demo/state for
// the balance, POST /demo/spin for a round. The game server does the
// wallet calls (bet, then win) as a provider would; this page only shows
// what the wallet answered.
(function () {
  'use strict';

  var body = document.body;
  var session = body.dataset.session;
  var balanceEl = document.getElementById('balance');
  var resultEl = document.getElementById('result');
  var stakeEl = document.getElementById('stake');
  var spinEl = document.getElementById('spin');
  var formEl = document.getElementById('controls');
  var reels = [1, 2, 3].map(function (i) { return document.getElementById('reel-' + i); });
  var labels = {};
  var busy = false;

  function setState(state) { body.dataset.state = state; }

  function say(text, outcome) {
    resultEl.textContent = text;
    body.dataset.outcome = outcome || '';
  }

  function call(method, url, payload) {
    var init = { method: method, cache: 'no-store', credentials: 'same-origin', headers: {} };
    if (payload !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(payload);
    }
    return fetch(url, init).then(function (resp) {
      return resp.json().catch(function () { return null; }).then(function (json) {
        if (!resp.ok || !json || !json.success) {
          var msg = json && json.error ? json.error.message : 'The game server answered ' + resp.status + '.';
          var code = json && json.error ? json.error.code : '';
          var err = new Error(msg);
          err.code = code;
          throw err;
        }
        return json.data;
      });
    });
  }

  function label(key) { return labels[key] || key; }

  function showLine(line) {
    line.forEach(function (key, i) {
      reels[i].textContent = label(key);
      reels[i].setAttribute('aria-label', 'Reel ' + (i + 1) + ': ' + label(key));
      reels[i].classList.remove('spinning');
    });
  }

  function explain(err) {
    switch (err.code) {
      case 'INSUFFICIENT_FUNDS': return 'Not enough balance for this stake. Choose a smaller stake.';
      case 'SESSION_EXPIRED': return 'This game session has expired. Leave the game and launch it again.';
      default: return err.message || 'Something went wrong. Try again.';
    }
  }

  function spin() {
    if (busy || spinEl.disabled) { return; }
    busy = true;
    spinEl.disabled = true;
    setState('spinning');
    say('Spinning…', '');
    reels.forEach(function (r) { r.classList.add('spinning'); r.textContent = '…'; });
    call('POST', '/demo/spin', { session: session, stake: stakeEl.value })
      .then(function (d) {
        showLine(d.line);
        balanceEl.textContent = d.balance;
        if (Number(d.multiplier) > 0) {
          say('You win ' + d.win + ' ' + d.currency + ' (' + d.multiplier + ' × ' + d.stake + ').', 'win');
        } else {
          say('No win this time. You staked ' + d.stake + ' ' + d.currency + '.', 'loss');
        }
        body.dataset.rounds = String(Number(body.dataset.rounds || '0') + 1);
        body.dataset.lastRound = d.round_id;
        setState('ready');
      })
      .catch(function (err) {
        reels.forEach(function (r) { r.classList.remove('spinning'); r.textContent = '–'; });
        say(explain(err), 'error');
        setState('error');
        return refresh(false);
      })
      .then(function () {
        busy = false;
        spinEl.disabled = false;
        spinEl.focus();
      });
  }

  function refresh(first) {
    return call('GET', '/demo/state?session=' + encodeURIComponent(session))
      .then(function (d) {
        d.symbols.forEach(function (s) { labels[s.key] = s.label; });
        balanceEl.textContent = d.balance;
        if (first) {
          setState('ready');
          spinEl.disabled = false;
        }
      })
      .catch(function (err) {
        say(explain(err), 'error');
        if (first) { setState('error'); }
      });
  }

  function nudgeStake(step) {
    var i = stakeEl.selectedIndex + step;
    if (i >= 0 && i < stakeEl.options.length) {
      stakeEl.selectedIndex = i;
      say('Stake ' + stakeEl.value + '.', '');
    }
  }

  formEl.addEventListener('submit', function (ev) { ev.preventDefault(); spin(); });

  // Space or Enter anywhere outside a control spins; + and - change the
  // stake. Controls keep their own keys (Space on the focused button
  // clicks it, arrows move the select).
  document.addEventListener('keydown', function (ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
    var t = ev.target;
    var inControl = t && (t.tagName === 'SELECT' || t.tagName === 'BUTTON' || t.tagName === 'A' || t.tagName === 'INPUT');
    if ((ev.key === ' ' || ev.key === 'Enter') && !inControl) {
      ev.preventDefault();
      spin();
    } else if ((ev.key === '+' || ev.key === '=') && t.tagName !== 'SELECT') {
      nudgeStake(1);
    } else if ((ev.key === '-' || ev.key === '_') && t.tagName !== 'SELECT') {
      nudgeStake(-1);
    }
  });

  refresh(true);
}());
