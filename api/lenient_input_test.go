package api_test

import (
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// TestLenientInputIsRefused: an input with more than one spelling is
// refused with the code of what is wrong, so every reader of a request
// reads the same thing from it (issue 17, item 11).
func TestLenientInputIsRefused(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{AdminToken: admToken})
	c := h.NewClient(gateway.ScopeTransactionsWrite)

	t.Run("amounts have one spelling", func(t *testing.T) {
		for _, amount := range []string{"+1", "1.", ".5", "-.5", "+0.50"} {
			rec := h.With(t).Call(http.MethodPost, "/api/v1/transactions", c.Key, map[string]string{"type": "deposit",
				"transaction_id": apitest.UID("dep"), "player_id": "p1", "amount": amount, "currency": "EUR"})
			apitest.WantError(t, rec, http.StatusBadRequest, wire.CodeInvalidAmount)
		}
		apitest.Expect(t, h.With(t).Call(http.MethodPost, "/api/v1/transactions", c.Key, map[string]string{"type": "deposit",
			"transaction_id": apitest.UID("dep"), "player_id": "p1", "amount": "0.50", "currency": "EUR"}), http.StatusOK, "")
	})

	t.Run("a JSON body is sent as application/json", func(t *testing.T) {
		body := func() map[string]string {
			return map[string]string{"type": "deposit", "transaction_id": apitest.UID("dep"), "player_id": "p1",
				"amount": "1.00", "currency": "EUR"}
		}
		for _, ct := range []string{"", "text/plain", "application/jsonx", "application/x-www-form-urlencoded",
			"application/json-patch+json", "application/json; charset=latin1"} {
			rec := h.With(t).Do(apitest.Request{Method: http.MethodPost, Path: "/api/v1/transactions", Key: c.Key,
				Body: body(), Header: map[string]string{"Content-Type": ct}})
			e := apitest.WantError(t, rec, http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["header"] != "Content-Type" {
				t.Errorf("Content-Type %q: details %v, want header Content-Type", ct, e.Error.Details)
			}
		}
		for _, ct := range []string{"application/json", "Application/JSON", "application/json; charset=utf-8",
			"application/json;charset=UTF-8"} {
			rec := h.With(t).Do(apitest.Request{Method: http.MethodPost, Path: "/api/v1/transactions", Key: c.Key,
				Body: body(), Header: map[string]string{"Content-Type": ct}})
			apitest.Expect(t, rec, http.StatusOK, "")
		}
	})

	t.Run("a key's expires_at that is not a time names the field", func(t *testing.T) {
		for _, body := range []string{`{"scopes":["launch"],"expires_at":"tomorrow"}`,
			`{"scopes":["launch"],"expires_at":5}`, `{"scopes":["launch"],"expires_at":"2030-01-01"}`} {
			e := apitest.WantError(t, h.With(t).Admin(http.MethodPost, "/admin/v1/clients/"+c.ID+"/keys", body),
				http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] != "expires_at" {
				t.Errorf("%s: details %v, want field expires_at", body, e.Error.Details)
			}
		}
		k := apitest.Data[map[string]any](t, h.With(t).Admin(http.MethodPost, "/admin/v1/clients/"+c.ID+"/keys",
			`{"scopes":["launch"],"expires_at":"2099-01-01T00:00:00Z"}`))
		e := apitest.WantError(t, h.With(t).Admin(http.MethodPost, "/admin/v1/clients/"+c.ID+"/keys/"+k["id"].(string)+"/rotate",
			`{"expires_at":"tomorrow"}`), http.StatusBadRequest, wire.CodeInvalidRequest)
		if e.Error.Details["field"] != "expires_at" {
			t.Errorf("rotate: details %v, want field expires_at", e.Error.Details)
		}
	})
}
