package operatorwallet_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/operatorwallet"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

func TestNewValidates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  operatorwallet.Config
		want string // "" accepted, else a part of the error
	}{
		{"pam", operatorwallet.Config{Protocol: "valkyrie-pam", BaseURL: "https://pam.example/api", Credential: "t"}, ""},
		{"tbb", operatorwallet.Config{Protocol: "tbb", BaseURL: "http://op.example/operator/wallet", Credential: "s",
			Timeout: time.Second}, ""},
		{"unknown protocol", operatorwallet.Config{Protocol: "softswiss", BaseURL: "https://x", Credential: "t"},
			"protocol"},
		{"no protocol", operatorwallet.Config{BaseURL: "https://x", Credential: "t"}, "protocol"},
		{"relative URL", operatorwallet.Config{Protocol: "tbb", BaseURL: "/wallet", Credential: "t"}, "base URL"},
		{"other scheme", operatorwallet.Config{Protocol: "tbb", BaseURL: "ftp://x/wallet", Credential: "t"}, "base URL"},
		{"URL with user", operatorwallet.Config{Protocol: "tbb", BaseURL: "https://u:p@x/w", Credential: "t"}, "base URL"},
		{"URL with query", operatorwallet.Config{Protocol: "tbb", BaseURL: "https://x/w?k=1", Credential: "t"}, "base URL"},
		{"no credential", operatorwallet.Config{Protocol: "tbb", BaseURL: "https://x/w"}, "credential"},
		{"credential with a newline", operatorwallet.Config{Protocol: "valkyrie-pam", BaseURL: "https://x",
			Credential: "a\nb"}, "credential"},
		{"negative timeout", operatorwallet.Config{Protocol: "tbb", BaseURL: "https://x/w", Credential: "t",
			Timeout: -time.Second}, "timeout"},
	}
	for _, tt := range tests {
		w, err := operatorwallet.New(tt.cfg)
		switch {
		case tt.want == "" && (err != nil || w == nil):
			t.Errorf("%s: %v, want accepted", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want an error about %s", tt.name, err, tt.want)
		}
	}
	_, err := operatorwallet.New(operatorwallet.Config{Protocol: "x", BaseURL: "https://secret@x"})
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("error %v quotes the URL", err)
	}
}

// client is a client of protocol at url with a short timeout.
func client(t *testing.T, protocol, url string, timeout time.Duration) wallet.OperatorWallet {
	t.Helper()
	cred := pamAPIToken
	if protocol == "tbb" {
		cred = tbbSecret
	}
	w, err := operatorwallet.New(operatorwallet.Config{Protocol: protocol, BaseURL: url, Credential: cred,
		Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestUnknownOutcomes: a timeout, a 5xx, a refused connection, a reset
// and an unreadable answer leave a movement's outcome unknown, in both
// protocols.
func TestUnknownOutcomes(t *testing.T) {
	t.Parallel()
	eur := domain.MustCurrency("EUR")
	servers := map[string]http.HandlerFunc{
		"timeout": func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // so the server notices the hang-up
			select {                           // past the client's timeout, until it hangs up
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		},
		"502": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) },
		"reset": func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.(*net.TCPConn).SetLinger(0)
				_ = conn.Close()
			}
		},
		"cut answer": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "500")
			_, _ = io.WriteString(w, `{"status":"OK","transactionResult":{`)
		},
		"oversized answer": func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"pad":"`+strings.Repeat("x", 2<<20)+`"}`)
		},
	}
	urls := map[string]string{}
	for name, h := range servers {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		urls[name] = srv.URL
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	urls["connection refused"] = closed.URL
	closed.Close()

	for _, protocol := range []string{"valkyrie-pam", "tbb"} {
		for name, url := range urls {
			t.Run(protocol+"/"+name, func(t *testing.T) {
				t.Parallel()
				w := client(t, protocol, url, 200*time.Millisecond)
				_, err := w.Move(t.Context(), move(t, wallet.Debit, "b-1", "", "1.00", eur))
				wantUnknown(t, err)
				if name == "timeout" && !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("timeout: %v, want the deadline's error wrapped", err)
				}
			})
		}
	}
}

// TestBalanceTransportFailure: a read that cannot reach the operator
// fails as the port says (the operator's answer is unknown).
func TestBalanceTransportFailure(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	for _, protocol := range []string{"valkyrie-pam", "tbb"} {
		_, err := client(t, protocol, srv.URL, time.Second).Balance(t.Context(), player(domain.MustCurrency("EUR")))
		wantUnknown(t, err)
	}
}

// TestNoRedirects: a redirect is not followed (a money call is never
// re-sent elsewhere, nor our credential): it is refused as our fault.
func TestNoRedirects(t *testing.T) {
	t.Parallel()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the redirect was followed: %s %s", r.Method, r.URL)
	}))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.RedirectHandler(other.URL, http.StatusTemporaryRedirect))
	t.Cleanup(srv.Close)
	_, err := client(t, "valkyrie-pam", srv.URL, time.Second).Move(t.Context(),
		move(t, wallet.Debit, "b-1", "", "1.00", domain.MustCurrency("EUR")))
	if r := refusal(t, err); r.Verdict != wallet.Fault || r.Code != "HTTP_307" {
		t.Errorf("refusal %+v, want our fault HTTP_307", r)
	}
}
