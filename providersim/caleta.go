package providersim

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
)

// caleta is the Caleta Gaming System API 1.5's Wallet API
// (docs/protocols/caleta.md): bodies signed with the provider's RSA key
// (RSA-SHA256, standard base64, X-Auth-Signature), integer amounts of
// 1/100000 of the currency's unit, every answer HTTP 200 with an RS_
// status.
type caleta struct{ key *rsa.PrivateKey }

// caletaDigits is how many decimals a Caleta amount carries.
const caletaDigits = 5

// has: every call; a promo bet and win are a free bet's (is_free, with
// the campaign's and reward's ids), which the campaign pays.
func (caleta) has(kind) bool { return true }

func (caleta) status(o outcome) string {
	switch o {
	case duplicate:
		return "RS_ERROR_DUPLICATE_TRANSACTION"
	case winAfterRollback, lateOriginal:
		return "RS_ERROR_TRANSACTION_ROLLED_BACK"
	}
	return "RS_OK" // accepted; a rollback of a call never seen is RS_OK too
}

func (caleta) ledgerID(_ kind, t tx) string { return t.ID }

// step is how many Caleta units one minor unit of the session's currency
// is.
func (caleta) step(r *run) int64 {
	s := int64(1)
	for range caletaDigits - r.sess.Currency.Exponent() {
		s *= 10
	}
	return s
}

func (d caleta) build(r *run, k kind, t tx) wireRequest {
	s := r.sess
	b := map[string]any{"token": s.ID}
	op := map[kind]string{callOpen: "check", callBalance: "balance", callBet: "bet", callWin: "win", callRollback: "rollback",
		callPromoBet: "bet", callPromoWin: "win"}[k]
	req := wireRequest{kind: k, path: "/provider/caleta/" + url.PathEscape(r.cfg.Provider) + "/wallet/" + op, tx: t}
	if k != callOpen {
		req.echo = r.id("req")
		b["request_uuid"] = req.echo
		b["game_code"] = s.Game
	}
	switch k {
	case callBalance:
		b["supplier_user"] = s.Player
	case callBet, callWin, callPromoBet, callPromoWin:
		b["supplier_user"] = s.Player
		b["transaction_uuid"] = t.ID
		b["round"] = t.Round
		b["round_closed"] = t.Closed
		b["is_free"] = k == callPromoBet || k == callPromoWin
		b["currency"] = s.Currency.Code()
		b["amount"] = t.Amount * d.step(r)
		if k == callWin || k == callPromoWin {
			b["reference_transaction_uuid"] = t.Ref
		}
		if k == callPromoBet || k == callPromoWin { // the free bet's campaign and reward, the same on its win
			campaign, reward := t.Campaign, t.Reward
			if reward == "" {
				campaign, reward = "campaign-"+r.nonce, "reward-"+t.Round
			}
			if campaign != "" { // a single-use reward has none
				b["campaign_uuid"] = campaign
			}
			b["reward_uuid"] = reward
		}
	case callRollback:
		b["transaction_uuid"] = t.ID
		b["reference_transaction_uuid"] = t.Ref
		b["round"] = t.Round
		b["round_closed"] = t.Closed
		b["user"] = s.Player
	}
	req.body = jsonBody(b)
	req.header = func(body []byte) http.Header {
		sum := sha256.Sum256(body)
		sig, err := rsa.SignPKCS1v15(rand.Reader, d.key, crypto.SHA256, sum[:])
		if err != nil { // only a broken key fails; the call then goes unsigned and is refused
			return http.Header{}
		}
		return http.Header{"X-Auth-Signature": {base64.StdEncoding.EncodeToString(sig)}}
	}
	return req
}

func (d caleta) read(c *checker, req wireRequest, rep reply) answer {
	if rep.code != http.StatusOK {
		c.fail("HTTP %d; every Caleta answer is HTTP 200", rep.code)
	}
	o := c.object(rep.body)
	if o == nil {
		return answer{}
	}
	var a answer
	a.Status, _ = c.str(o, "status")
	if req.kind == callOpen {
		c.only(o, "token", "status")
		if a.Status == "RS_OK" {
			c.equal(o, "token", c.r.sess.ID)
		}
		return a
	}
	c.only(o, "user", "status", "request_uuid", "currency", "balance")
	c.equal(o, "request_uuid", req.echo)
	if a.Status != "RS_OK" {
		c.absent(o, "on a refusal (only RS_OK carries it)", "user", "currency", "balance")
		return a
	}
	c.equal(o, "user", c.r.sess.Player)
	c.equal(o, "currency", c.r.sess.Currency.Code())
	if text, ok := c.number(o, "balance"); ok {
		units, err := strconv.ParseInt(text, 10, 64)
		switch {
		case err != nil:
			c.fail("balance %s is not an integer", text)
		case units%d.step(c.r) != 0:
			c.fail("balance %s is not a whole number of %s minor units", text, c.r.sess.Currency.Code())
		default:
			minor := units / d.step(c.r)
			a.Balance = &minor
		}
	}
	return a
}
