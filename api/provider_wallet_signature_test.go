package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Issue 17, item 1: the provider wallet's signature bound only the body,
// so a body signed for /bet was as good at /win, and a signed call never
// expired. A provider on the v2 scheme (every provider created since
// migration 00012, unless set otherwise) signs the time, the method, the
// path and the body: docs/provider-wallet.md#authentication.

// walletPath is the path of a wallet call.
func walletPath(op string) string { return "/provider/v1/wallet/" + op }

// postSigned posts body to the wallet call op as the harness's provider,
// with sig as X-Signature.
func (w slWallet) postSigned(op, sig string, body []byte) *httptest.ResponseRecorder {
	w.h.t.Helper()
	return w.h.Do(apitest.Request{Method: http.MethodPost, Path: walletPath(op), Body: body,
		Header: map[string]string{"X-Provider-Id": w.h.provider, "X-Signature": sig}})
}

// signedAt is the v2 signature of body for op at Unix second ts, with the
// harness's provider secret.
func (w slWallet) signedAt(ts int64, op string, body []byte) string {
	return apitest.SignV2(w.h.providerSecret, ts, http.MethodPost, walletPath(op), body)
}

// now is the server clock's Unix second.
func (w slWallet) now() int64 { return w.h.Clock.Now().Unix() }

func (w slWallet) betBody(txID, amount string) []byte {
	return []byte(`{"session_id":"` + w.session + `","transaction_id":"` + txID + `","round_id":"r1","amount":"` + amount + `"}`)
}

func TestProviderWalletSignatureV2(t *testing.T) {
	h := newSLHarness(t)

	// The finding, exactly: a bet's signed body posted to /win credited
	// it. Neither a body-only signature nor a v2 signature made for /bet
	// is accepted at /win.
	t.Run("a bet's signed call replayed to /win is refused", func(t *testing.T) {
		w := newSLWallet(t, h, "100")
		body := w.betBody("t1", "0.25")
		wantError(t, w.postSigned("win", apitest.Sign(h.providerSecret, body), body),
			http.StatusUnauthorized, wire.CodeInvalidSignature, false)
		betSig := w.signedAt(w.now(), "bet", body)
		wantError(t, w.postSigned("win", betSig, body), http.StatusUnauthorized, wire.CodeInvalidSignature, false)
		if got := h.Balance(w.wallet); got != 10000 {
			t.Fatalf("wallet %d after the replays to /win, want 10000", got)
		}
		if n := len(h.Events(w.wallet, domain.EventWinCredited)); n != 0 {
			t.Fatalf("%d win events, want 0", n)
		}
		// The same signature at the call it was made for is that call.
		wantOK(t, w.postSigned("bet", betSig, body), "99.75")
	})

	t.Run("a v1 signature is refused from a v2 provider", func(t *testing.T) {
		w := newSLWallet(t, h, "100")
		body := w.betBody("b-v1", "1")
		e := wantError(t, w.postSigned("bet", apitest.Sign(h.providerSecret, body), body),
			http.StatusUnauthorized, wire.CodeInvalidSignature, false)
		if !strings.Contains(e.Error.Message, "v2") {
			t.Fatalf("message %q does not say the provider signs with v2", e.Error.Message)
		}
		balance := []byte(`{"session_id":"` + w.session + `"}`)
		wantError(t, w.postSigned("balance", apitest.Sign(h.providerSecret, balance), balance),
			http.StatusUnauthorized, wire.CodeInvalidSignature, false)
		if got := h.Balance(w.wallet); got != 10000 {
			t.Fatalf("wallet %d, want 10000", got)
		}
	})

	// The window is ±120 s of the server's clock, in whole seconds, both
	// edges included. A call outside it moves no money.
	t.Run("timestamps outside ±120 s are refused, the edges accepted", func(t *testing.T) {
		w := newSLWallet(t, h, "100")
		now := w.now()
		for i, tc := range []struct {
			name string
			ts   int64
			code string // empty: accepted
		}{
			{"expired: 121 s old", now - 121, wire.CodeTimestampOutOfRange},
			{"a day old", now - 86400, wire.CodeTimestampOutOfRange},
			{"the epoch", 0, wire.CodeTimestampOutOfRange},
			{"future: 121 s ahead", now + 121, wire.CodeTimestampOutOfRange},
			{"milliseconds, not seconds", now * 1000, wire.CodeTimestampOutOfRange},
			{"120 s old", now - 120, ""},
			{"120 s ahead", now + 120, ""},
			{"now", now, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				body := w.betBody("b-window-"+strconv.Itoa(i), "1")
				rec := w.postSigned("bet", w.signedAt(tc.ts, "bet", body), body)
				if tc.code == "" {
					if rec.Code != http.StatusOK {
						t.Fatalf("status %d: %s", rec.Code, rec.Body)
					}
					return
				}
				e := wantError(t, rec, http.StatusUnauthorized, tc.code, false)
				if st := e.Error.Details["server_time"]; st != json.Number(strconv.FormatInt(now, 10)) {
					t.Fatalf("details.server_time = %v, want %d", e.Error.Details["server_time"], now)
				}
			})
		}
		if got := h.Balance(w.wallet); got != 10000-3*100 {
			t.Fatalf("wallet %d, want %d: only the three calls in the window bet", got, 10000-3*100)
		}
	})

	// A provider retries with the same body and a fresh signature; a
	// captured call re-sent as it was is the same call. Either way the
	// ledger's idempotency by transaction_id answers the original.
	t.Run("a retry with a fresh timestamp is answered as a replay", func(t *testing.T) {
		w := newSLWallet(t, h, "100")
		body := w.betBody("b-retry", "10")
		firstSig := w.signedAt(w.now(), "bet", body)
		first := wantOK(t, w.postSigned("bet", firstSig, body), "90.00")
		same := wantOK(t, w.postSigned("bet", firstSig, body), "90.00")
		h.Clock.Advance(100 * time.Second)
		retry := wantOK(t, w.postSigned("bet", w.signedAt(w.now(), "bet", body), body), "90.00")
		if first.Replayed || !same.Replayed || !retry.Replayed || same.TransactionID != first.TransactionID ||
			retry.TransactionID != first.TransactionID {
			t.Fatalf("first %+v, same request again %+v, retry %+v", first, same, retry)
		}
		if n := len(h.Events(w.wallet, domain.EventBetPlaced)); n != 1 {
			t.Fatalf("%d bet events, want 1", n)
		}
		// Past the window the first request itself is refused.
		h.Clock.Advance(21 * time.Second)
		wantError(t, w.postSigned("bet", firstSig, body), http.StatusUnauthorized, wire.CodeTimestampOutOfRange, false)
		if got := h.Balance(w.wallet); got != 9000 {
			t.Fatalf("wallet %d, want 9000", got)
		}
	})

	t.Run("a signature over anything else is refused", func(t *testing.T) {
		w := newSLWallet(t, h, "100")
		body := w.betBody("b-other", "1")
		now := w.now()
		right := w.signedAt(now, "bet", body)
		mac := right[strings.Index(right, "v2=")+3:]
		ts := strconv.FormatInt(now, 10)
		for _, tc := range []struct{ name, sig string }{
			{"another secret", apitest.SignV2("not-the-secret", now, http.MethodPost, walletPath("bet"), body)},
			{"another body", w.signedAt(now, "bet", w.betBody("b-other", "2"))},
			{"another method", apitest.SignV2(h.providerSecret, now, http.MethodPut, walletPath("bet"), body)},
			{"another path", apitest.SignV2(h.providerSecret, now, http.MethodPost, "/provider/v1/wallet/bet/", body)},
			{"another time", "t=" + strconv.FormatInt(now+1, 10) + ",v2=" + mac},
			{"missing", ""},
			{"no t", "v2=" + mac},
			{"no v2", "t=" + ts},
			{"t twice", "t=" + ts + ",t=" + ts + ",v2=" + mac},
			{"t not a number", "t=now,v2=" + mac},
			{"t signed", "t=+" + ts + ",v2=" + mac},
			{"v2 not hex", "t=" + ts + ",v2=" + strings.Repeat("z", 64)},
			{"v2 short", "t=" + ts + ",v2=" + mac[:62]},
			{"an empty entry", "t=" + ts + ",,v2=" + mac},
			{"v1 label", "t=" + ts + ",v1=" + mac},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, w.postSigned("bet", tc.sig, body), http.StatusUnauthorized, wire.CodeInvalidSignature, false)
			})
		}
		if got := h.Balance(w.wallet); got != 10000 {
			t.Fatalf("wallet %d, want 10000", got)
		}
		// Upper-case hex, spaces after the commas, a second v2 entry (a
		// provider rotating its secret) and an unknown entry are fine.
		rec := w.postSigned("bet", "t="+ts+", v2="+strings.Repeat("0", 64)+", v9=x, v2="+strings.ToUpper(mac), body)
		wantOK(t, rec, "99.00")
	})
}

// A provider created before migration 00012 stays on v1 until it is moved:
// its body-only signatures are still accepted (weaker: they bind neither
// the call nor a time, so it should move), it may already send v2 (then
// v2's rules apply), and once moved to v2 it must send v2.
func TestProviderWalletSignatureV1(t *testing.T) {
	h := newSLHarness(t)
	ctx := t.Context()
	if err := h.Gateway.SetProviderSignatureScheme(ctx, h.provider, gateway.SignatureV1); err != nil {
		t.Fatal(err)
	}
	w := newSLWallet(t, h, "100")
	body := w.betBody("b-1", "1")

	wantOK(t, h.WalletCallV1(h.provider, h.providerSecret, "balance", map[string]any{"session_id": w.session}), "100.00")
	wantOK(t, w.postSigned("bet", apitest.Sign(h.providerSecret, body), body), "99.00")
	// What v1 does not bind: a bet's signed body, captured before it
	// reached us, is as good as a win. This is the weakness v2 closes.
	captured := w.betBody("b-captured", "1")
	wantOK(t, w.postSigned("win", apitest.Sign(h.providerSecret, captured), captured), "100.00")
	wantError(t, w.postSigned("bet", apitest.Sign("not-the-secret", w.betBody("b-2", "1")), w.betBody("b-2", "1")),
		http.StatusUnauthorized, wire.CodeInvalidSignature, false)

	// A v1 provider switching its signer first: v2 is accepted, and binds.
	v2Body := w.betBody("b-v2", "1")
	wantOK(t, w.postSigned("bet", w.signedAt(w.now(), "bet", v2Body), v2Body), "99.00")
	wantError(t, w.postSigned("win", w.signedAt(w.now(), "bet", v2Body), v2Body), http.StatusUnauthorized, wire.CodeInvalidSignature, false)
	wantError(t, w.postSigned("bet", w.signedAt(w.now()-121, "bet", v2Body), v2Body),
		http.StatusUnauthorized, wire.CodeTimestampOutOfRange, false)

	// Moved to v2, body-only signatures are refused; rewriting the
	// provider (its secret, its name) does not move it back.
	if err := h.Gateway.SetProviderSignatureScheme(ctx, h.provider, gateway.SignatureV2); err != nil {
		t.Fatal(err)
	}
	if err := h.Gateway.UpsertProvider(ctx, gateway.Provider{ID: h.provider, Name: "Renamed", Secret: h.providerSecret,
		Enabled: true}); err != nil {
		t.Fatal(err)
	}
	wantError(t, w.postSigned("bet", apitest.Sign(h.providerSecret, body), body), http.StatusUnauthorized, wire.CodeInvalidSignature, false)
	if a := wantOK(t, w.postSigned("bet", w.signedAt(w.now(), "bet", body), body), "99.00"); !a.Replayed {
		t.Fatalf("the first bet sent again, now signed v2: %+v, want a replay", a)
	}
	if got := h.Balance(w.wallet); got != 9900 {
		t.Fatalf("wallet %d, want 9900", got)
	}
}
