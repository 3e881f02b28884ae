package delivery_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/delivery"
	"github.com/pitboss/pitboss/gateway"
)

func TestSignAndVerify(t *testing.T) {
	t.Parallel()
	const secret = "whsec_test"
	body := []byte(`{"member_account":"p1","bet_amount":10.00}`)
	at := time.Unix(1_700_000_000, 0)
	header := delivery.Sign(secret, at, body)

	// then the header is exactly what a receiver computes by hand
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("1700000000." + string(body)))
	if want := "t=1700000000,v1=" + hex.EncodeToString(m.Sum(nil)); header != want {
		t.Fatalf("header %q, want %q", header, want)
	}

	tests := []struct {
		name   string
		header string
		secret string
		body   []byte
		now    time.Time
		want   error
	}{
		{"valid", header, secret, body, at.Add(time.Minute), nil},
		{"valid among several v1", "t=1700000000,v1=00ff," + header[len("t=1700000000,"):], secret, body, at, nil},
		{"other body", header, secret, []byte(`{"member_account":"p1","bet_amount":100.00}`), at, delivery.ErrSignatureMismatch},
		{"other secret", header, "whsec_other", body, at, delivery.ErrSignatureMismatch},
		{"too old", header, secret, body, at.Add(6 * time.Minute), delivery.ErrSignatureExpired},
		{"from the future", header, secret, body, at.Add(-6 * time.Minute), delivery.ErrSignatureExpired},
		{"no timestamp", header[len("t=1700000000,"):], secret, body, at, delivery.ErrSignatureMalformed},
		{"no signature", "t=1700000000", secret, body, at, delivery.ErrSignatureMalformed},
		{"garbage", "nonsense", secret, body, at, delivery.ErrSignatureMalformed},
		{"timestamp changed", strings.Replace(header, "t=1700000000", "t=1700000001", 1), secret, body, at, delivery.ErrSignatureMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := delivery.Verify(tc.header, tc.secret, tc.body, tc.now, 5*time.Minute)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestScheduleCeilings(t *testing.T) {
	t.Parallel()
	s := delivery.Schedule{Base: 10 * time.Second, Factor: 3, Cap: 6 * time.Hour, MaxAttempts: 15, MaxAge: 24 * time.Hour}
	want := []time.Duration{10 * time.Second, 30 * time.Second, 90 * time.Second, 270 * time.Second, 810 * time.Second,
		2430 * time.Second, 7290 * time.Second, 6 * time.Hour, 6 * time.Hour}
	for i, w := range want {
		if got := s.Ceiling(i + 1); got != w {
			t.Fatalf("ceiling after attempt %d = %v, want %v", i+1, got, w)
		}
	}
	if got := s.Ceiling(200); got != 6*time.Hour {
		t.Fatalf("ceiling after 200 attempts = %v (overflow?)", got)
	}
}

func TestScheduleNext(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	full := func(n int64) int64 { return n } // the jitter at its top
	none := func(int64) int64 { return 0 }   // the jitter at its bottom
	tests := []struct {
		name      string
		rnd       func(int64) int64
		attempt   int
		now       time.Time
		wantDelay time.Duration
		wantPark  bool
	}{
		{"first failure waits up to the base", full, 1, start, 10 * time.Second, false},
		{"full jitter may retry at once", none, 1, start, 0, false},
		{"third failure waits up to 90 s", full, 3, start, 90 * time.Second, false},
		{"the last attempt parks", full, 15, start, 0, true},
		{"beyond the maximum age parks", full, 8, start.Add(20 * time.Hour), 0, true},
		{"within the maximum age retries", none, 8, start.Add(20 * time.Hour), 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := delivery.Schedule{Base: 10 * time.Second, Factor: 3, Cap: 6 * time.Hour, MaxAttempts: 15,
				MaxAge: 24 * time.Hour, Rand: tc.rnd}
			d, park := s.Next(tc.attempt, start, tc.now)
			if d != tc.wantDelay || park != tc.wantPark {
				t.Fatalf("Next = %v, %v; want %v, %v", d, park, tc.wantDelay, tc.wantPark)
			}
		})
	}
	t.Run("the default jitter is spread over [0, ceiling]", func(t *testing.T) {
		s := delivery.Schedule{Base: time.Second, Factor: 2, Cap: time.Minute, MaxAttempts: 100, MaxAge: time.Hour}
		for n := 1; n <= 8; n++ {
			ceiling := s.Ceiling(n)
			var low, high bool
			for range 2000 {
				d, park := s.Next(n, start, start)
				if park || d < 0 || d > ceiling {
					t.Fatalf("attempt %d: delay %v (park %v) outside [0, %v]", n, d, park, ceiling)
				}
				low = low || d < ceiling/4
				high = high || d > ceiling*3/4
			}
			if !low || !high {
				t.Fatalf("attempt %d: 2000 delays never reached both quarters of [0, %v]", n, ceiling)
			}
		}
	})
}

func TestScheduleValidate(t *testing.T) {
	t.Parallel()
	bad := delivery.Schedule{Base: time.Minute, Cap: time.Second, Factor: 0, MaxAttempts: 0, MaxAge: -1}
	err := bad.Validate()
	for _, want := range []string{"base", "factor", "attempts", "age"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Validate = %v, want it to mention %s", err, want)
		}
	}
}

// receiver is a real HTTP server on loopback that answers with handler and
// counts the requests that reached it.
func receiver(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestSender(t *testing.T) {
	t.Parallel()
	const secret = "whsec_sender"
	body := []byte(`{"x":1}`)
	var got atomic.Pointer[http.Request]
	var gotBody atomic.Pointer[[]byte]
	ok, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(r)
		gotBody.Store(&b)
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte("thanks"))
	})
	failing, _ := receiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(strings.Repeat("é", 600))) // 1200 bytes of two-byte characters
	})
	redirect, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, ok.URL, http.StatusFound)
	})
	// slow answers 200 only after 30 s, or never when the sender hangs up
	// first: a result without a status proves the sender gave up at its
	// timeout, however slow this machine is. (The body is read first: only
	// then does the server watch the connection and see the hang-up.)
	slow, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(30 * time.Second):
		case <-r.Context().Done():
		}
	})
	s := delivery.NewSender(delivery.SenderConfig{Timeout: 300 * time.Millisecond, PrivateTargets: gateway.PrivateTargetsAll})
	req := func(url string) delivery.Request {
		return delivery.Request{URL: url, Body: body, Secret: secret, DeliveryID: "dl_1", IdempotencyKey: "ev:callback",
			EventID: "ev", EventType: "wallet.bet_placed.v1", Kind: "bet", Attempt: 3}
	}

	t.Run("a 2xx succeeds; the request is signed and carries the delivery headers", func(t *testing.T) {
		r := s.Send(t.Context(), req(ok.URL))
		if !r.Succeeded() || r.StatusCode != http.StatusAccepted || r.Excerpt != "thanks" || r.Error != "" {
			t.Fatalf("result %+v", r)
		}
		h := got.Load().Header
		if err := delivery.Verify(h.Get(delivery.SignatureHeader), secret, *gotBody.Load(), time.Now(), time.Minute); err != nil {
			t.Fatalf("signature: %v", err)
		}
		for k, want := range map[string]string{"Idempotency-Key": "ev:callback", "X-Pitboss-Attempt": "3",
			"X-Pitboss-Delivery-Id": "dl_1", "Content-Type": "application/json", "X-Pitboss-Kind": "bet"} {
			if h.Get(k) != want {
				t.Fatalf("header %s = %q, want %q", k, h.Get(k), want)
			}
		}
	})
	t.Run("a 500 fails and keeps at most 1 KiB of whole characters", func(t *testing.T) {
		r := s.Send(t.Context(), req(failing.URL))
		if r.Succeeded() || r.StatusCode != 500 || len(r.Excerpt) > delivery.MaxExcerpt || len(r.Excerpt) < 1000 ||
			strings.ContainsRune(r.Excerpt, '\uFFFD') {
			t.Fatalf("result status %d, error %q, excerpt of %d bytes", r.StatusCode, r.Error, len(r.Excerpt))
		}
	})
	t.Run("a redirect is not followed and fails", func(t *testing.T) {
		r := s.Send(t.Context(), req(redirect.URL))
		if r.Succeeded() || r.StatusCode != http.StatusFound {
			t.Fatalf("result %+v", r)
		}
	})
	t.Run("a receiver slower than the timeout fails", func(t *testing.T) {
		r := s.Send(t.Context(), req(slow.URL))
		if r.Succeeded() || r.StatusCode != 0 || !strings.Contains(r.Error, "timeout") {
			t.Fatalf("result %+v", r)
		}
	})
	t.Run("a refused connection fails", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		url := dead.URL
		dead.Close()
		if r := s.Send(t.Context(), req(url)); r.Succeeded() || r.Error == "" {
			t.Fatalf("result %+v", r)
		}
	})
}

func TestSenderRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	srv, hits := receiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	guarded := delivery.NewSender(delivery.SenderConfig{Timeout: time.Second})
	// localhost resolves to a loopback address: the check runs on what a
	// name resolves to, at connect time, not on the URL's text.
	for _, url := range []string{srv.URL, "http://localhost:" + port, "http://[::ffff:127.0.0.1]:" + port} {
		t.Run(url, func(t *testing.T) {
			r := guarded.Send(t.Context(), delivery.Request{URL: url, Body: []byte(`{}`), Secret: "s"})
			if r.Succeeded() || r.StatusCode != 0 || !strings.Contains(r.Error, "non-public address") {
				t.Fatalf("result %+v, want a refusal", r)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d requests reached the loopback receiver", n)
	}
	// and with private targets allowed, the same receiver is reached
	open := delivery.NewSender(delivery.SenderConfig{Timeout: time.Second, PrivateTargets: gateway.PrivateTargetsAll})
	if r := open.Send(t.Context(), delivery.Request{URL: srv.URL, Body: []byte(`{}`), Secret: "s"}); !r.Succeeded() {
		t.Fatalf("allowed: %+v", r)
	}
	if hits.Load() != 1 {
		t.Fatalf("hits %d, want 1", hits.Load())
	}
}

// TestSenderRefusesEmbeddedIPv4 (issue 17, item 5): IPv6 addresses that
// carry an inside IPv4 address are refused when the connection is made,
// and link-local addresses (cloud metadata) are refused in every form even
// when private targets are allowed. The refusal comes from the dialer's
// Control hook, on the address being connected to, before any packet.
// TestSenderPrivateTargetsByEnvironment: whether a delivery may reach an
// inside address is decided by its client's environment; a connection a
// sandbox delivery opened to a loopback receiver is never reused for a
// production one (each kind has its own transport), and link-local stays
// refused for everyone, even under all.
func TestSenderPrivateTargetsByEnvironment(t *testing.T) {
	t.Parallel()
	srv, hits := receiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	send := func(t *testing.T, s *delivery.Sender, url, env string) gateway.AttemptResult {
		t.Helper()
		return s.Send(t.Context(), delivery.Request{URL: url, Environment: env, Body: []byte(`{}`), Secret: "s"})
	}
	refused := func(t *testing.T, r gateway.AttemptResult, what string) {
		t.Helper()
		if r.Succeeded() || r.StatusCode != 0 || !strings.Contains(r.Error, "non-public address: "+what) {
			t.Fatalf("result %+v, want a refusal of %s", r, what)
		}
	}

	t.Run("sandbox", func(t *testing.T) {
		s := delivery.NewSender(delivery.SenderConfig{Timeout: time.Second, PrivateTargets: gateway.PrivateTargetsSandbox})
		// a sandbox client's delivery reaches the loopback receiver (and
		// leaves a kept-alive connection to it)
		if r := send(t, s, srv.URL, gateway.EnvironmentSandbox); !r.Succeeded() {
			t.Fatalf("sandbox delivery: %+v", r)
		}
		// a production client's delivery to the same receiver is refused
		// at the dial, not sent on that connection
		refused(t, send(t, s, srv.URL, gateway.EnvironmentProduction), "127.0.0.1: loopback")
		refused(t, send(t, s, srv.URL, ""), "127.0.0.1: loopback")
		if n := hits.Load(); n != 1 {
			t.Fatalf("%d requests reached the receiver, want only the sandbox one", n)
		}
		refused(t, send(t, s, "http://169.254.169.254:9/latest", gateway.EnvironmentSandbox), "169.254.169.254: link-local")
	})
	t.Run("none", func(t *testing.T) {
		s := delivery.NewSender(delivery.SenderConfig{Timeout: time.Second})
		refused(t, send(t, s, srv.URL, gateway.EnvironmentSandbox), "127.0.0.1: loopback")
	})
	t.Run("all: the metadata address stays refused", func(t *testing.T) {
		s := delivery.NewSender(delivery.SenderConfig{Timeout: time.Second, PrivateTargets: gateway.PrivateTargetsAll})
		for _, env := range []string{gateway.EnvironmentSandbox, gateway.EnvironmentProduction} {
			for host, want := range map[string]string{
				"169.254.169.254":          "169.254.169.254: link-local",
				"[::ffff:169.254.169.254]": "169.254.169.254: link-local",
				"[::a9fe:a9fe]":            "::a9fe:a9fe (IPv4-compatible form of 169.254.169.254): link-local",
				"[64:ff9b::a9fe:a9fe]":     "64:ff9b::a9fe:a9fe (NAT64 form of 169.254.169.254): link-local",
				"[2002:a9fe:a9fe::1]":      "2002:a9fe:a9fe::1 (6to4 form of 169.254.169.254): link-local",
			} {
				refused(t, send(t, s, "http://"+host+":9/latest", env), want)
			}
		}
	})
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d requests reached the receiver, want 1", n)
	}
}

func TestSenderRefusesEmbeddedIPv4(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host         string
		allowPrivate bool
		want         string // in the attempt's error
	}{
		{host: "[::7f00:1]", want: "::7f00:1 (IPv4-compatible form of 127.0.0.1): loopback"},
		{host: "[::a9fe:a9fe]", want: "::a9fe:a9fe (IPv4-compatible form of 169.254.169.254): link-local"},
		{host: "[::ffff:0:7f00:1]", want: "::ffff:0:7f00:1 (IPv4-translated form of 127.0.0.1): loopback"},
		{host: "[64:ff9b::7f00:1]", want: "64:ff9b::7f00:1 (NAT64 form of 127.0.0.1): loopback"},
		{host: "[2002:7f00:1::1]", want: "2002:7f00:1::1 (6to4 form of 127.0.0.1): loopback"},
		{host: "[2002:a9fe:a9fe::1]", want: "2002:a9fe:a9fe::1 (6to4 form of 169.254.169.254): link-local"},
		{host: "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
			want: "2001:0:4136:e378:8000:63bf:80ff:fffe (Teredo form of 127.0.0.1): loopback"},
		{host: "[fec0::1]", want: "fec0::1: site-local"},
		{host: "100.64.0.1", want: "100.64.0.1: carrier-grade NAT"},
		// whatever the setting
		{host: "169.254.169.254", allowPrivate: true, want: "169.254.169.254: link-local"},
		{host: "[::ffff:169.254.169.254]", allowPrivate: true, want: "169.254.169.254: link-local"}, // the dialer unmaps
		{host: "[::a9fe:a9fe]", allowPrivate: true, want: "::a9fe:a9fe (IPv4-compatible form of 169.254.169.254): link-local"},
		{host: "[64:ff9b::a9fe:a9fe]", allowPrivate: true, want: "64:ff9b::a9fe:a9fe (NAT64 form of 169.254.169.254): link-local"},
		{host: "[2001:0:4136:e378:8000:63bf:5601:5601]", allowPrivate: true,
			want: "2001:0:4136:e378:8000:63bf:5601:5601 (Teredo form of 169.254.169.254): link-local"},
		{host: "[fe80::1]", allowPrivate: true, want: "fe80::1: link-local"},
		{host: "0.0.0.0", allowPrivate: true, want: "0.0.0.0: this network"},
	}
	guarded := delivery.NewSender(delivery.SenderConfig{Timeout: time.Second})
	open := delivery.NewSender(delivery.SenderConfig{Timeout: time.Second, PrivateTargets: gateway.PrivateTargetsAll})
	for _, tc := range tests {
		name := tc.host
		if tc.allowPrivate {
			name += " allowing private"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := guarded
			if tc.allowPrivate {
				s = open
			}
			r := s.Send(t.Context(), delivery.Request{URL: "http://" + tc.host + ":9/in", Body: []byte(`{}`), Secret: "s"})
			if r.Succeeded() || r.StatusCode != 0 || !strings.Contains(r.Error, "non-public address: "+tc.want) {
				t.Fatalf("result %+v, want a refusal of %s", r, tc.want)
			}
		})
	}
}
