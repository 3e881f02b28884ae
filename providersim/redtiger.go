package providersim

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/pitboss/pitboss/domain"
)

// redtiger is Red Tiger's RGI wallet (docs/protocols/redtiger.md): the
// API key (the provider's secret) in Authorization, amounts as decimal
// strings, {"success": true, "result": ...} or a numeric error code with
// HTTP 400 (401 for code 100, 500 for code 500). A payout names no stake:
// it settles its round; a refund names the stake it refunds.
type redtiger struct{ key string }

func (redtiger) has(k kind) bool { return k != callOpen }

func (redtiger) status(o outcome) string {
	switch o {
	case duplicate, lateOriginal:
		return "401"
	case winAfterRollback:
		return "400"
	}
	return "ok" // accepted; a refund of a stake never booked succeeds too
}

// ledgerID: a refund is booked under refund@ and the stake it refunds.
func (redtiger) ledgerID(k kind, t tx) string {
	if k == callRollback {
		return "refund@" + t.Ref
	}
	return t.ID
}

func (d redtiger) build(r *run, k kind, t tx) wireRequest {
	s := r.sess
	zero := domain.FormatMinor(0, s.Currency.Exponent())
	amount := r.money(t.Amount)
	b := map[string]any{"token": s.ID, "userId": s.Player, "casino": "sim", "currency": s.Currency.Code()}
	game := map[string]any{"type": "slot", "key": s.Game, "version": "1"}
	promo := map[string]any{"type": "FreeRounds", "instanceCode": "sim", "campaignCode": "sim", "instanceId": 1, "campaignId": 1}
	op := "auth"
	switch k {
	case callBalance:
		b["channel"] = "desktop"
	case callBet, callPromoBet:
		op = "stake"
		stake, stakePromo := amount, zero
		if k == callPromoBet {
			stake, stakePromo = zero, amount
			b["promo"] = promo
		}
		b["transaction"] = map[string]any{"id": t.ID, "stake": stake, "stakePromo": stakePromo,
			"details": map[string]any{"game": amount, "jackpot": zero}}
		b["game"] = game
		b["round"] = map[string]any{"id": t.Round, "starts": true, "ends": t.Closed}
	case callWin, callPromoWin:
		op = "payout"
		payout, payoutPromo := amount, zero
		if k == callPromoWin {
			payout, payoutPromo = zero, amount
			b["promo"] = promo
		}
		b["transaction"] = map[string]any{"id": t.ID, "payout": payout, "payoutPromo": payoutPromo,
			"details": map[string]any{"game": amount, "jackpot": zero},
			"sources": map[string]any{"lines": amount, "features": zero, "jackpot": map[string]any{}}}
		b["game"] = game
		b["round"] = map[string]any{"id": t.Round, "starts": false, "ends": t.Closed}
		b["retry"] = false
	case callRollback: // the refund's transaction.id is the stake it refunds
		op = "refund"
		b["transaction"] = map[string]any{"id": t.Ref, "stake": amount}
		b["game"] = game
		b["round"] = map[string]any{"id": t.Round, "starts": false, "ends": t.Closed}
	}
	req := wireRequest{kind: k, tx: t, path: "/provider/redtiger/" + url.PathEscape(r.cfg.Provider) + "/wallet/" + op, body: jsonBody(b)}
	req.header = func([]byte) http.Header { return http.Header{"Authorization": {d.key}} }
	return req
}

// cash reads a {"cash", "bonus"} object of o's field: cash as minor
// units, bonus always zero.
func (redtiger) cash(c *checker, o obj, field string) (int64, bool) {
	m := c.sub(o, field)
	if m == nil {
		return 0, false
	}
	c.only(m, "cash", "bonus")
	if text, ok := c.str(m, "bonus"); ok {
		if b, ok := c.decimal(field+".bonus", text); ok && b != 0 {
			c.fail("%s.bonus is %s; Pitboss keeps no bonus money", field, text)
		}
	}
	text, ok := c.str(m, "cash")
	if !ok {
		return 0, false
	}
	return c.decimal(field+".cash", text)
}

func (d redtiger) read(c *checker, req wireRequest, rep reply) answer {
	o := c.object(rep.body)
	if o == nil {
		return answer{}
	}
	ok, _ := c.boolean(o, "success")
	if !ok {
		return d.refusal(c, o, rep)
	}
	a := answer{Status: "ok"}
	if rep.code != http.StatusOK {
		c.fail("HTTP %d on success, want 200", rep.code)
	}
	res := c.sub(o, "result")
	if res == nil {
		return a
	}
	c.equal(res, "token", c.r.sess.ID)
	moved, field := req.tx.Amount, ""
	switch req.kind {
	case callBalance:
		c.only(o, "success", "result")
		c.only(res, "token", "currency", "userId", "casino", "balance")
		c.equal(res, "userId", c.r.sess.Player)
		c.equal(res, "casino", "sim")
	case callBet, callPromoBet:
		c.only(o, "success", "result")
		c.only(res, "token", "currency", "id", "stake", "balance")
		field = "stake"
		if req.kind == callPromoBet {
			moved = 0 // the promotion's stake is not the player's
		}
	case callWin, callPromoWin:
		c.only(o, "success", "result")
		c.only(res, "token", "currency", "id", "payout", "balance")
		field = "payout"
	case callRollback: // balance and currency beside the result
		c.only(o, "success", "result", "balance", "currency")
		c.only(res, "token", "id", "stake")
		c.equal(o, "currency", c.r.sess.Currency.Code())
		if b, ok := d.cash(c, o, "balance"); ok {
			a.Balance = &b
		}
		field = "stake"
	}
	if req.kind != callRollback {
		c.equal(res, "currency", c.r.sess.Currency.Code())
		if b, ok := d.cash(c, res, "balance"); ok {
			a.Balance = &b
		}
	}
	if field != "" {
		a.ID, _ = c.str(res, "id")
		if m, ok := d.cash(c, res, field); ok && m != moved {
			c.fail("%s.cash is %s, want %s", field, c.r.money(m), c.r.money(moved))
		}
	}
	return a
}

// refusal reads {"success": false, "error": {message, code, request_id}}.
func (redtiger) refusal(c *checker, o obj, rep reply) answer {
	c.only(o, "success", "error")
	e := c.sub(o, "error")
	if e == nil {
		return answer{Status: "?"}
	}
	c.only(e, "message", "code", "request_id")
	c.str(e, "message")
	text, ok := c.number(e, "code")
	if !ok {
		return answer{Status: "?"}
	}
	code, err := strconv.Atoi(text)
	if err != nil {
		c.fail("error.code %s is not an integer", text)
	}
	want := http.StatusBadRequest
	switch code {
	case 100:
		want = http.StatusUnauthorized
	case 500:
		want = http.StatusInternalServerError
	}
	if rep.code != want {
		c.fail("HTTP %d with code %d, want %d", rep.code, code, want)
	}
	return answer{Status: text}
}
