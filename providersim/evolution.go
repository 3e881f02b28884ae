package providersim

import (
	"encoding/json"
	"net/http"
	"net/url"
)

// evolution is Evolution's One Wallet (docs/protocols/evolution.md): the
// provider's secret as the authToken query parameter, JSON-number amounts
// in the currency's unit, every answer HTTP 200 but a refused token's
// (401), the bet named by its refId.
type evolution struct{ token string }

func (evolution) has(k kind) bool { return k != callPromoBet }

func (evolution) status(o outcome) string {
	switch o {
	case duplicate:
		return "BET_ALREADY_EXIST"
	case winAfterRollback, lateOriginal:
		return "BET_ALREADY_SETTLED"
	case unknownRollback:
		return "BET_DOES_NOT_EXIST"
	}
	return "OK"
}

// ledgerID: the ledger's ids derive from the bet's refId
// (docs/protocols/evolution.md#why-the-ledger-ids-derive-from-refid).
func (evolution) ledgerID(k kind, t tx) string {
	switch k {
	case callWin:
		return "credit@" + t.Ref
	case callRollback:
		return "cancel@" + t.Ref
	case callPromoWin:
		return "promo@" + t.ID
	}
	return "bet@" + t.ID
}

func (d evolution) build(r *run, k kind, t tx) wireRequest {
	s := r.sess
	op := map[kind]string{callOpen: "check", callBalance: "balance", callBet: "debit", callWin: "credit",
		callRollback: "cancel", callPromoWin: "promo_payout"}[k]
	req := wireRequest{kind: k, tx: t, echo: r.id("uuid"),
		path: "/provider/evolution/" + url.PathEscape(r.cfg.Provider) + "/wallet/" + op + "?" + url.Values{"authToken": {d.token}}.Encode()}
	b := map[string]any{"sid": s.ID, "userId": s.Player, "uuid": req.echo}
	game := map[string]any{"id": t.Round, "type": "blackjack",
		"details": map[string]any{"table": map[string]any{"id": s.Game, "vid": "sim"}}}
	switch k {
	case callOpen:
		b["channel"] = map[string]any{"type": "P"}
	case callBalance:
		b["currency"] = s.Currency.Code()
		b["game"] = nil
	case callBet:
		b["currency"] = s.Currency.Code()
		b["game"] = game
		b["transaction"] = map[string]any{"id": "tx-" + t.ID, "refId": t.ID, "amount": json.Number(r.money(t.Amount))}
	case callWin:
		b["currency"] = s.Currency.Code()
		b["game"] = game
		b["transaction"] = map[string]any{"id": "tx-" + t.ID, "refId": t.Ref, "amount": json.Number(r.money(t.Amount))}
	case callRollback: // the cancel repeats the debit's transaction.id
		tr := map[string]any{"id": "tx-" + t.Ref, "refId": t.Ref}
		if t.Amount > 0 {
			tr["amount"] = json.Number(r.money(t.Amount))
		}
		b["currency"] = s.Currency.Code()
		b["game"] = game
		b["transaction"] = tr
	case callPromoWin:
		b["currency"] = s.Currency.Code()
		b["game"] = nil
		b["promoTransaction"] = map[string]any{"type": "FreeRoundPlayableSpent", "id": t.ID,
			"amount": json.Number(r.money(t.Amount)), "voucherId": "v-" + t.ID, "remainingRounds": 0}
	}
	req.body = jsonBody(b)
	req.header = func([]byte) http.Header { return http.Header{} }
	return req
}

func (evolution) read(c *checker, req wireRequest, rep reply) answer {
	o := c.object(rep.body)
	if o == nil {
		return answer{}
	}
	var a answer
	a.Status, _ = c.str(o, "status")
	want := http.StatusOK
	if a.Status == "INVALID_TOKEN_ID" {
		want = http.StatusUnauthorized
	}
	if rep.code != want {
		c.fail("HTTP %d with status %s, want %d", rep.code, a.Status, want)
	}
	c.equal(o, "uuid", req.echo)
	if req.kind == callOpen {
		c.only(o, "status", "sid", "uuid")
		if a.Status == "OK" {
			c.equal(o, "sid", c.r.sess.ID)
		}
		return a
	}
	c.only(o, "status", "balance", "bonus", "uuid")
	if text, ok := c.number(o, "balance"); ok {
		if m, ok := c.decimal("balance", text); ok {
			a.Balance = &m
		}
	}
	if text, ok := c.number(o, "bonus"); ok {
		if m, ok := c.decimal("bonus", text); ok && m != 0 {
			c.fail("bonus is %s; Pitboss keeps no bonus money", text)
		}
	}
	return a
}
