package modeltest_test

import (
	"fmt"
	"net/http"
)

// The reference model: what the wallet must answer, written from
// docs/provider-wallet.md and docs/read-models.md with plain maps and
// int64 minor units, sharing no code with package domain.

// currency is a code and its decimals.
type currency struct {
	code string
	exp  int
}

// answer is what the model expects for one call.
type answer struct {
	status   int
	code     string // error code, "" for 200
	balance  int64  // 200: balance after, minor units
	eventRef *txn   // 200: the transaction whose event id the answer names
	replayed bool
}

func accept(balance int64, t *txn, replayed bool) answer {
	return answer{status: http.StatusOK, balance: balance, eventRef: t, replayed: replayed}
}

func fail(status int, code string) answer { return answer{status: status, code: code} }

// txn is one booked provider or operator transaction (or a tombstone).
type txn struct {
	kind       string // bet, win, rollback, tombstone, deposit
	id         string
	player     string
	cur        currency
	amount     int64
	round      string
	ref        string
	fp         string // what a retry must repeat exactly
	balance    int64  // balance right after it
	eventID    string // learnt from the service's first answer
	rolledBack bool
	// for the history: signed amount, the event's kind
	histType  string
	signed    int64
	discarded bool // rollback of nothing: history status "discarded"
	// wins counts the unreversed wins naming this bet; a win's settles is
	// the bet it named, or settlesRound the round it named no bet in.
	wins         int
	settles      *txn
	settlesRound *round
}

// round counts its open and rolled-back bets, and the unreversed wins that
// named no bet in it (each settles every bet of the round).
type round struct{ open, rolled, wins int }

// model is one client's wallets.
type model struct {
	bal     map[string]int64 // player|currency
	game    map[string]*txn  // provider transaction id -> booked (or tombstone)
	client  map[string]*txn  // operator transaction id -> booked
	rounds  map[string]*round
	booked  []*txn                     // every event, in order
	betters map[string]map[string]bool // currency -> players who bet
	roundsW map[string]map[string]bool // currency -> rounds with a bet
	ggr     map[string]*ggr
}

type ggr struct{ bets, refunds, wins, reversals int64 }

func newModel() *model {
	return &model{bal: map[string]int64{}, game: map[string]*txn{}, client: map[string]*txn{}, rounds: map[string]*round{},
		betters: map[string]map[string]bool{}, roundsW: map[string]map[string]bool{}, ggr: map[string]*ggr{}}
}

func wallet(player string, c currency) string { return player + "|" + c.code }

func (m *model) g(c currency) *ggr {
	if m.ggr[c.code] == nil {
		m.ggr[c.code] = &ggr{}
	}
	return m.ggr[c.code]
}

func addSet(m map[string]map[string]bool, k, v string) {
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][v] = true
}

// call is one generated request.
type call struct {
	op      string // deposit, bet, win, rollback
	id      string
	player  string
	cur     currency
	amount  string // text as sent ("" for a rollback)
	minor   int64  // parsed amount (valid only when amountErr == "")
	badAmt  string // the 400 code the amount text gets, if any
	round   string
	ref     string
	session string
}

func (c call) fingerprint() string {
	switch c.op {
	case "rollback":
		return fmt.Sprintf("rollback|%s|%s|%s|%s", c.player, c.cur.code, c.round, c.ref)
	case "win":
		return fmt.Sprintf("win|%s|%s|%s|%d|%s", c.player, c.cur.code, c.round, c.minor, c.ref)
	case "bet":
		return fmt.Sprintf("bet|%s|%s|%s|%d", c.player, c.cur.code, c.round, c.minor)
	}
	return fmt.Sprintf("deposit|%s|%s|%d", c.player, c.cur.code, c.minor)
}

// apply is the model's answer to c, updating its state.
func (m *model) apply(c call) answer {
	if c.badAmt != "" {
		return fail(http.StatusBadRequest, c.badAmt)
	}
	w := wallet(c.player, c.cur)
	if c.op == "deposit" {
		if t, ok := m.client[c.id]; ok {
			if t.fp != c.fingerprint() {
				return fail(http.StatusConflict, "IDEMPOTENCY_CONFLICT")
			}
			return accept(t.balance, t, true)
		}
		if c.minor <= 0 {
			return fail(http.StatusBadRequest, "INVALID_AMOUNT")
		}
		m.bal[w] += c.minor
		t := &txn{kind: "deposit", id: c.id, player: c.player, cur: c.cur, amount: c.minor, fp: c.fingerprint(),
			balance: m.bal[w], histType: "deposit", signed: c.minor}
		m.client[c.id] = t
		m.booked = append(m.booked, t)
		return accept(t.balance, t, false)
	}
	// The idempotency check comes first: a retry answers the original.
	if t, ok := m.game[c.id]; ok && t.kind != "tombstone" {
		if t.fp != c.fingerprint() {
			return fail(http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		}
		return accept(t.balance, t, true)
	}
	tombstoned := m.game[c.id] != nil
	switch c.op {
	case "bet":
		if c.minor <= 0 {
			return fail(http.StatusBadRequest, "INVALID_AMOUNT")
		}
		if tombstoned {
			return fail(http.StatusConflict, "ROLLED_BACK_BEFORE_ARRIVAL")
		}
		if m.bal[w] < c.minor {
			return fail(http.StatusBadRequest, "INSUFFICIENT_FUNDS")
		}
		m.bal[w] -= c.minor
		if c.round != "" {
			r := m.rounds[c.round]
			if r == nil {
				r = &round{}
				m.rounds[c.round] = r
			}
			r.open++
		}
		g := m.g(c.cur)
		g.bets += c.minor
		addSet(m.betters, c.cur.code, c.player)
		rk := c.round
		if rk == "" {
			rk = "bet:" + c.id
		}
		addSet(m.roundsW, c.cur.code, rk)
		return m.book(c, "bet", -c.minor, w)
	case "win":
		if c.minor < 0 {
			return fail(http.StatusBadRequest, "INVALID_AMOUNT")
		}
		if tombstoned {
			return fail(http.StatusConflict, "ROLLED_BACK_BEFORE_ARRIVAL")
		}
		if c.ref != "" {
			b, ok := m.game[c.ref]
			switch {
			case !ok:
				return fail(http.StatusNotFound, "TRANSACTION_NOT_FOUND")
			case b.kind == "tombstone" || b.rolledBack:
				return fail(http.StatusConflict, "BET_ROLLED_BACK")
			case b.kind != "bet":
				return fail(http.StatusBadRequest, "INVALID_REQUEST")
			case b.player != c.player:
				return fail(http.StatusConflict, "PLAYER_MISMATCH")
			case b.cur != c.cur:
				return fail(http.StatusBadRequest, "CURRENCY_MISMATCH")
			}
		}
		if r := m.rounds[c.round]; c.round != "" && r != nil && r.open == 0 && r.rolled > 0 {
			return fail(http.StatusConflict, "BET_ROLLED_BACK")
		}
		if c.round != "" && m.rounds[c.round] == nil {
			m.rounds[c.round] = &round{}
		}
		m.bal[w] += c.minor
		m.g(c.cur).wins += c.minor
		a := m.book(c, "win", c.minor, w)
		// A win settles the bet it names, or, naming none, its round's bets:
		// a settled bet is not rolled back until the win is reversed.
		win := m.game[c.id]
		switch {
		case c.ref != "":
			win.settles = m.game[c.ref]
			win.settles.wins++
		case c.round != "":
			win.settlesRound = m.rounds[c.round]
			win.settlesRound.wins++
		}
		return a
	case "rollback":
		if c.ref == c.id {
			return fail(http.StatusBadRequest, "INVALID_REQUEST")
		}
		if tombstoned {
			// A rollback whose own id was rolled back before it arrived
			// is refused like a late bet or win: it must not take effect.
			return fail(http.StatusConflict, "ROLLED_BACK_BEFORE_ARRIVAL")
		}
		o, ok := m.game[c.ref]
		if !ok {
			m.game[c.ref] = &txn{kind: "tombstone", id: c.ref, player: c.player, cur: c.cur}
			t := &txn{kind: "rollback", id: c.id, player: c.player, cur: c.cur, fp: c.fingerprint(), balance: m.bal[w],
				histType: "rollback", discarded: true}
			m.game[c.id] = t
			m.booked = append(m.booked, t)
			return accept(t.balance, t, false)
		}
		switch {
		case o.kind == "tombstone" || o.rolledBack:
			return fail(http.StatusConflict, "ALREADY_ROLLED_BACK")
		case o.player != c.player:
			return fail(http.StatusConflict, "PLAYER_MISMATCH")
		case o.cur != c.cur:
			return fail(http.StatusBadRequest, "CURRENCY_MISMATCH")
		case o.kind == "bet" && (o.wins > 0 || (o.round != "" && m.rounds[o.round] != nil && m.rounds[o.round].wins > 0)):
			return fail(http.StatusConflict, "BET_SETTLED")
		case o.kind == "bet":
			m.bal[w] += o.amount
			o.rolledBack = true
			if r := m.rounds[o.round]; o.round != "" && r != nil {
				r.open--
				r.rolled++
			}
			m.g(c.cur).refunds += o.amount
			c.minor = o.amount
			return m.book(c, "rollback", o.amount, w)
		case o.kind == "win":
			if m.bal[w] < o.amount {
				return fail(http.StatusBadRequest, "INSUFFICIENT_FUNDS")
			}
			m.bal[w] -= o.amount
			o.rolledBack = true
			switch { // a reversed win no longer settles
			case o.settles != nil && o.settles.wins > 0:
				o.settles.wins--
			case o.settlesRound != nil && o.settlesRound.wins > 0:
				o.settlesRound.wins--
			}
			m.g(c.cur).reversals += o.amount
			c.minor = o.amount
			return m.book(c, "rollback", -o.amount, w)
		}
		return fail(http.StatusConflict, "NOT_ROLLBACKABLE")
	}
	panic("unknown op " + c.op)
}

func (m *model) book(c call, kind string, signed int64, w string) answer {
	t := &txn{kind: kind, id: c.id, player: c.player, cur: c.cur, amount: c.minor, round: c.round, ref: c.ref,
		fp: c.fingerprint(), balance: m.bal[w], histType: kind, signed: signed}
	m.game[c.id] = t
	m.booked = append(m.booked, t)
	return accept(t.balance, t, false)
}

// status is the history status of a booked transaction.
func (t *txn) status() string {
	switch {
	case t.discarded:
		return "discarded"
	case t.rolledBack:
		return "rolled_back"
	}
	return "settled"
}
