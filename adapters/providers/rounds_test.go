package providers_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

// Tests of the round-detail call (Caleta's POST /api/game/round) against
// real provider servers on loopback.

func roundReq() gateway.RoundDetailRequest {
	return gateway.RoundDetailRequest{ClientID: "casino-1", PlayerID: "player-7", RoundID: "CG-1718271",
		TransactionID: "bet-uuid-1"}
}

func TestCaletaRoundDetailIsSignedAndAnswersTheURL(t *testing.T) {
	p, got := recordingProvider(t, func(w http.ResponseWriter) {
		_, _ = io.WriteString(w, `{"url":"https://backoffice.caleta.example/round_details/CG-1718271/player-7"}`)
	})
	reg := newRegistry(t)
	u, err := reg.RoundDetailURL(context.Background(), kindRoute("caleta", gateway.ProviderKindCaleta, p.URL+"/"), roundReq())
	if err != nil {
		t.Fatal(err)
	}
	if u != "https://backoffice.caleta.example/round_details/CG-1718271/player-7" {
		t.Fatalf("round url %q", u)
	}
	s := <-got
	if s.method != http.MethodPost || s.path != "/api/game/round" || s.ctype != "application/json" {
		t.Fatalf("request %s %s (%s)", s.method, s.path, s.ctype)
	}
	// Signed as the launch is: the exact bytes, with our launch key.
	if err := gateway.VerifyRSASHA256(prepared(t, &testLaunchKey().PublicKey), s.body, s.sig); err != nil {
		t.Fatalf("X-Auth-Signature %q does not verify: %v", s.sig, err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	if gateway.VerifyRSASHA256(prepared(t, &other.PublicKey), s.body, s.sig) == nil {
		t.Fatal("the signature verifies with another key")
	}
	want := map[string]any{"operator_id": "op-77", "transaction_uuid": "bet-uuid-1", "user": "player-7", "round": "CG-1718271"}
	if m := decodeBody(t, s.body); !reflect.DeepEqual(m, want) {
		t.Fatalf("body %v\nwant %v", m, want)
	}

	// A round whose history holds no transaction leaves transaction_uuid
	// out (the document requires only operator_id).
	req := roundReq()
	req.TransactionID = ""
	if _, err := reg.RoundDetailURL(context.Background(), kindRoute("caleta", gateway.ProviderKindCaleta, p.URL), req); err != nil {
		t.Fatal(err)
	}
	if m := decodeBody(t, (<-got).body); m["transaction_uuid"] != nil || m["round"] != "CG-1718271" {
		t.Fatalf("body %v", m)
	}
}

func TestCaletaRoundDetailRefusals(t *testing.T) {
	tests := []struct {
		name, answer, code, message string
		status                      int
	}{
		{name: "405 Invalid Round", status: http.StatusMethodNotAllowed, answer: `{"code":"100","message":"Invalid Round"}`,
			code: "100", message: "Invalid Round"},
		{name: "405 with a numeric code", status: http.StatusMethodNotAllowed, answer: `{"code":100,"message":"Invalid Round"}`,
			code: "100", message: "Invalid Round"},
		{name: "404 error", status: http.StatusNotFound, answer: `{"error":"The operator_id does not correspond to any existing Operator."}`,
			message: "The operator_id does not correspond to any existing Operator."},
		{name: "400 not JSON", status: http.StatusBadRequest, answer: `bad request`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.answer)
			})
			second := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, `{"url":"https://never.example/"}`)
			})
			reg := newRegistry(t)
			rt := kindRoute("caleta", gateway.ProviderKindCaleta, first.URL, second.URL)
			for range 3 { // more than BreakerFailures
				_, err := reg.RoundDetailURL(context.Background(), rt, roundReq())
				var rej *gateway.ProviderRejectedError
				if !errors.As(err, &rej) {
					t.Fatalf("error %v, want a refusal", err)
				}
				if rej.Status != tc.status || rej.Code != tc.code || rej.Message != tc.message {
					t.Fatalf("refusal %+v", rej)
				}
			}
			if second.hits.Load() != 0 {
				t.Fatalf("a refusal failed over: second endpoint got %d calls", second.hits.Load())
			}
			if h := reg.Health(rt); h.Status != gateway.ProviderAvailable {
				t.Fatalf("health %+v after refusals, want available", h)
			}
		})
	}
}

// A round-detail call goes through the endpoints and breakers launches
// use: failures fail over, open the failing endpoint's breaker, and a
// launch then skips that endpoint too.
func TestCaletaRoundDetailFailsOverThroughTheLaunchBreakers(t *testing.T) {
	tests := []struct {
		name  string
		first http.HandlerFunc
	}{
		{"500", failing(http.StatusInternalServerError)},
		{"429", failing(http.StatusTooManyRequests)},
		{"url that is not http(s)", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"url":"javascript:alert(1)"}`)
		}},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `<html>`) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first := newProvider(t, tc.first)
			second := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/api/game/url" {
					_, _ = io.WriteString(w, `{"url":"https://second.example/play"}`)
					return
				}
				_, _ = io.WriteString(w, `{"url":"https://second.example/round"}`)
			})
			reg := newRegistry(t)
			rt := kindRoute("flaky", gateway.ProviderKindCaleta, first.URL, second.URL)
			for i := range 3 {
				u, err := reg.RoundDetailURL(context.Background(), rt, roundReq())
				if err != nil || u != "https://second.example/round" {
					t.Fatalf("round detail %d: %q, %v", i, u, err)
				}
			}
			// Two failures (BreakerFailures) opened the first endpoint's
			// breaker: the third call, and the launch after it, skipped it.
			if u, err := reg.Launch(context.Background(), rt, launchReq()); err != nil || u != "https://second.example/play" {
				t.Fatalf("launch: %q, %v", u, err)
			}
			if n := first.hits.Load(); n != 2 {
				t.Fatalf("first endpoint called %d times, want 2", n)
			}
			if h := reg.Health(rt); h.Status != gateway.ProviderDegraded || h.Available != 1 {
				t.Fatalf("health %+v, want degraded", h)
			}
		})
	}
}

func TestCaletaRoundDetailWithEveryEndpointDownIsUnavailable(t *testing.T) {
	a, b := newProvider(t, failing(http.StatusBadGateway)), newProvider(t, failing(http.StatusServiceUnavailable))
	reg := newRegistryOn(t, newStoppedClock().Now)
	rt := kindRoute("down", gateway.ProviderKindCaleta, a.URL, b.URL)
	_, err := reg.RoundDetailURL(context.Background(), rt, roundReq())
	pu := unavailable(t, err)
	if len(pu.Endpoints) != 2 || pu.Endpoints[0].Reason != "status_502" || pu.Endpoints[1].Reason != "status_503" {
		t.Fatalf("failures %+v", pu.Endpoints)
	}
}

// Only the caleta kind has a round-detail call: every other kind is
// ErrRoundDetailUnsupported, and nothing is called.
func TestRoundDetailOfOtherKindsIsUnsupported(t *testing.T) {
	p := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"url":"https://never.example/"}`)
	})
	reg := newRegistry(t)
	for _, kind := range gateway.ProviderKinds {
		if kind == gateway.ProviderKindCaleta {
			continue
		}
		t.Run(kind, func(t *testing.T) {
			rt := kindRoute("other", kind, p.URL)
			if kind == gateway.ProviderKindDemo {
				rt.Endpoints = nil
			}
			_, err := reg.RoundDetailURL(context.Background(), rt, roundReq())
			if !errors.Is(err, gateway.ErrRoundDetailUnsupported) {
				t.Fatalf("error %v, want ErrRoundDetailUnsupported", err)
			}
		})
	}
	if p.hits.Load() != 0 {
		t.Fatalf("a provider without a round-detail call was called %d times", p.hits.Load())
	}
}

func TestCaletaRoundDetailWithoutCredentialsIsNotConfigured(t *testing.T) {
	p := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"url":"https://never.example/"}`)
	})
	rt := kindRoute("c", gateway.ProviderKindCaleta, p.URL)
	rt.LaunchSecret = ""
	_, err := newRegistry(t).RoundDetailURL(context.Background(), rt, roundReq())
	if pu := unavailable(t, err); pu.Reason != "not_configured" {
		t.Fatalf("error %+v, want not_configured", pu)
	}
	if p.hits.Load() != 0 {
		t.Fatalf("a provider without credentials was called %d times", p.hits.Load())
	}
}
