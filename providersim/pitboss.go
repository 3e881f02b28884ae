package providersim

import (
	"net/http"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

// pitboss is our own wallet protocol (docs/provider-wallet.md):
// X-Provider-Id and a v2 X-Signature (HMAC-SHA256 of the time, method,
// path and body with the provider's secret, signed afresh on every send),
// decimal amounts, HTTP 200 {"status": "OK", ...} or the service's error
// shape with its HTTP status.
type pitboss struct{ secret string }

func (pitboss) has(k kind) bool { return k != callOpen }

func (pitboss) status(o outcome) string {
	switch o {
	case duplicate:
		return "IDEMPOTENCY_CONFLICT"
	case winAfterRollback:
		return "BET_ROLLED_BACK"
	case lateOriginal:
		return "ROLLED_BACK_BEFORE_ARRIVAL"
	}
	return "OK" // accepted; a rollback of a call never seen moves nothing and answers OK
}

func (pitboss) ledgerID(_ kind, t tx) string { return t.ID }

// pitbossErrors is each error code's HTTP status, from
// docs/provider-wallet.md#errors; retryable are the codes whose
// details.retryable is true.
var (
	pitbossErrors = map[string]int{
		"INVALID_JSON": 400, "BODY_TOO_LARGE": 400, "INVALID_REQUEST": 400, "INVALID_AMOUNT": 400,
		"AMOUNT_TOO_PRECISE": 400, "CURRENCY_MISMATCH": 400, "INSUFFICIENT_FUNDS": 400,
		"UNAUTHORIZED": 401, "INVALID_SIGNATURE": 401, "TIMESTAMP_OUT_OF_RANGE": 401,
		"NOT_FOUND": 404, "TRANSACTION_NOT_FOUND": 404,
		"IDEMPOTENCY_CONFLICT": 409, "SESSION_EXPIRED": 409, "ROLLED_BACK_BEFORE_ARRIVAL": 409,
		"ALREADY_ROLLED_BACK": 409, "BET_ROLLED_BACK": 409, "BET_SETTLED": 409, "NOT_ROLLBACKABLE": 409,
		"PLAYER_MISMATCH": 409, "RATE_LIMITED": 429, "INTERNAL_ERROR": 500, "SERVICE_UNAVAILABLE": 503,
	}
	pitbossRetryable = map[string]bool{"RATE_LIMITED": true, "INTERNAL_ERROR": true, "SERVICE_UNAVAILABLE": true}
)

func (d pitboss) build(r *run, k kind, t tx) wireRequest {
	b := map[string]any{"session_id": r.sess.ID}
	op := "balance"
	switch k {
	case callBet, callPromoBet, callWin, callPromoWin:
		op = "bet"
		if k == callWin || k == callPromoWin {
			op = "win"
			if t.Ref != "" {
				b["reference_transaction_id"] = t.Ref
			}
		}
		b["transaction_id"] = t.ID
		b["round_id"] = t.Round
		b["round_closed"] = t.Closed
		b["amount"] = r.money(t.Amount)
		if k == callPromoBet || k == callPromoWin {
			b["promo"] = true
		}
		if k == callPromoBet {
			b["amount"] = r.money(0) // a free spin: the player pays nothing
		}
	case callRollback:
		op = "rollback"
		b["transaction_id"] = t.ID
		b["reference_transaction_id"] = t.Ref
		b["round_id"] = t.Round
	}
	path := "/provider/v1/wallet/" + op
	req := wireRequest{kind: k, tx: t, path: path, body: jsonBody(b)}
	provider := r.cfg.Provider
	req.header = func(body []byte) http.Header {
		return http.Header{"X-Provider-Id": {provider}, "X-Signature": {gateway.SignProviderCall(d.secret, time.Now(),
			gateway.ProviderCall{Method: http.MethodPost, Path: path, Body: body})}}
	}
	return req
}

func (pitboss) read(c *checker, req wireRequest, rep reply) answer {
	o := c.object(rep.body)
	if o == nil {
		return answer{}
	}
	if rep.code != http.StatusOK {
		return pitbossRefusal(c, o, rep)
	}
	var a answer
	c.equal(o, "currency", c.r.sess.Currency.Code())
	if text, ok := c.number(o, "balance"); ok {
		if m, ok := c.decimal("balance", text); ok {
			a.Balance = &m
		}
	}
	a.Status, _ = c.str(o, "status")
	if req.kind == callBalance {
		c.only(o, "status", "balance", "currency")
		return a
	}
	c.only(o, "status", "balance", "currency", "transaction_id", "external_transaction_id", "round_id", "round_closed", "replayed")
	a.ID, _ = c.str(o, "transaction_id")
	c.equal(o, "external_transaction_id", req.tx.ID)
	if req.tx.Round != "" {
		c.equal(o, "round_id", req.tx.Round)
	}
	replayed := false
	if _, ok := o["replayed"]; ok {
		replayed, _ = c.boolean(o, "replayed")
	}
	a.Replayed = &replayed
	return a
}

// pitbossRefusal reads the service's error shape and checks its HTTP
// status and details.retryable against the document's table.
func pitbossRefusal(c *checker, o obj, rep reply) answer {
	c.only(o, "success", "error")
	if ok, present := c.boolean(o, "success"); present && ok {
		c.fail("success is true on HTTP %d", rep.code)
	}
	e := c.sub(o, "error")
	if e == nil {
		return answer{Status: "?"}
	}
	c.str(e, "message")
	c.str(e, "request_id")
	code, ok := c.str(e, "code")
	if !ok {
		return answer{Status: "?"}
	}
	want, known := pitbossErrors[code]
	switch {
	case !known:
		c.fail("error code %s is not in the document", code)
	case rep.code != want:
		c.fail("HTTP %d with code %s, want %d", rep.code, code, want)
	}
	if details := c.sub(e, "details"); details != nil {
		if r, ok := c.boolean(details, "retryable"); ok && r != pitbossRetryable[code] {
			c.fail("details.retryable is %v for %s", r, code)
		}
	}
	return answer{Status: code}
}
