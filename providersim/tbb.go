package providersim

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/pitboss/pitboss/gateway"
)

// tbb is The Bet Brothers' supplier-side Game Events wallet
// (docs/protocols/tbb.md): every raw body signed HMAC-SHA256 with the
// provider's secret (the password TBB hands a supplier), lowercase hex in
// X-REQUEST-SIGN; integer amounts in the currency's minor units; the
// session token in every call; HTTP 200 with the token and balance, or the
// addendum's {"code", "message"} with the code as the HTTP status. A win
// names no bet: it settles its round; a refund names what it refunds.
type tbb struct{ secret string }

// tbbProviderID is the provider_id every call carries: the document's
// integer id, which Pitboss does not hand out (our provider ids are text,
// sent as provider_name), so any integer is accepted.
const tbbProviderID = 1

// tbbCodes are the addendum's error codes, each its own HTTP status.
var tbbCodes = map[int]bool{400: true, 402: true, 403: true, 404: true, 405: true, 406: true, 407: true, 408: true,
	418: true, 500: true, 503: true, 504: true}

// has: no session check (a balance read opens play) and no promo calls
// (the Game Events carry no free-spin mark).
func (tbb) has(k kind) bool {
	return k == callBalance || k == callBet || k == callWin || k == callRollback
}

func (tbb) status(o outcome) string {
	switch o {
	case duplicate:
		return "400"
	case winAfterRollback, unknownRollback:
		return "406" // previous transaction not found
	case lateOriginal:
		return "408" // bet is rejected
	}
	return "200"
}

// ledgerID: a refund is booked under refund@ and the transaction it
// refunds (the document's own example gives a refund the refunded
// transaction's id).
func (tbb) ledgerID(k kind, t tx) string {
	if k == callRollback {
		return "refund@" + t.Ref
	}
	return t.ID
}

func (d tbb) build(r *run, k kind, t tx) wireRequest {
	s := r.sess
	op := map[kind]string{callBalance: "balance", callBet: "bet", callWin: "win", callRollback: "refund"}[k]
	b := map[string]any{"token": s.ID, "provider_name": r.cfg.Provider, "provider_id": tbbProviderID,
		"currency_code": s.Currency.Code()}
	if k != callBalance {
		b["amount"] = t.Amount
		b["is_mobile"] = false
		b["player_id"] = s.Player
		b["round_id"] = t.Round
		b["game_symbol"] = s.Game
		b["transaction_id"] = t.ID
	}
	switch k {
	case callWin:
		b["round_close"] = t.Closed
	case callRollback:
		b["refunded_transaction_id"] = t.Ref
	}
	req := wireRequest{kind: k, tx: t, path: "/provider/tbb/" + url.PathEscape(r.cfg.Provider) + "/wallet/" + op, body: jsonBody(b)}
	req.header = func(body []byte) http.Header {
		return http.Header{"X-REQUEST-SIGN": {gateway.Signature(d.secret, body)}}
	}
	return req
}

func (tbb) read(c *checker, req wireRequest, rep reply) answer {
	o := c.object(rep.body)
	if o == nil {
		return answer{}
	}
	if rep.code != http.StatusOK {
		return tbbRefusal(c, o, rep)
	}
	a := answer{Status: "200"}
	if req.kind == callBalance {
		c.only(o, "token", "balance")
	} else {
		c.only(o, "transaction_id", "balance", "token")
		if id, ok := c.str(o, "transaction_id"); ok {
			if id == "" {
				c.fail("transaction_id is empty")
			}
			a.ID = id
		}
	}
	c.equal(o, "token", c.r.sess.ID)
	if text, ok := c.number(o, "balance"); ok {
		if m, err := strconv.ParseInt(text, 10, 64); err != nil {
			c.fail("balance %s is not an integer of %s minor units", text, c.r.sess.Currency.Code())
		} else {
			a.Balance = &m
		}
	}
	return a
}

// tbbRefusal reads the addendum's {"code", "message"}: code one of its
// table, and the HTTP status the same number.
func tbbRefusal(c *checker, o obj, rep reply) answer {
	c.only(o, "code", "message")
	c.str(o, "message")
	text, ok := c.number(o, "code")
	if !ok {
		return answer{Status: "?"}
	}
	code, err := strconv.Atoi(text)
	switch {
	case err != nil:
		c.fail("code %s is not an integer", text)
	case !tbbCodes[code]:
		c.fail("code %d is not in the addendum", code)
	case rep.code != code:
		c.fail("HTTP %d with code %d, want %d", rep.code, code, code)
	}
	return answer{Status: text}
}
