package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/delivery"
	"github.com/pitboss/pitboss/adapters/postgres/deliverystore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/gateway"
)

// TestReceiver: `pitboss receive` prints what a delivery carries and
// checks its signature with every secret it was given.
func TestReceiver(t *testing.T) {
	t.Parallel()
	const secret = "whsec_receiver_test_secret_0123456789abcdef"
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"member_account":"player-1","bet_amount":1.00,"event_type":"wallet.bet_placed.v1"}`)
	tests := []struct {
		name    string
		secrets []string
		status  int
		header  string // X-Pitboss-Signature
		want    string // the signature line
	}{
		{name: "valid with the second secret", secrets: []string{"whsec_other_secret", secret},
			header: delivery.Sign(secret, now, body), want: "signature: valid (secret 2, whsec_rece…)"},
		{name: "another secret", secrets: []string{"whsec_other_secret"},
			header: delivery.Sign(secret, now, body), want: "signature: INVALID: no v1 signature matches"},
		{name: "signed long ago", secrets: []string{secret}, header: delivery.Sign(secret, now.Add(-10*time.Minute), body),
			want: "signature: INVALID: signature timestamp outside the tolerance: signed 10m0s ago"},
		{name: "malformed", secrets: []string{secret}, header: "v1=abc",
			want: "signature: INVALID: signature header malformed: want t=<unix seconds>,v1=<hex>"},
		{name: "no secret given", header: delivery.Sign(secret, now, body), want: "signature: not checked (no --secret given)"},
		{name: "no signature", secrets: []string{secret}, want: "signature: missing (no X-Pitboss-Signature header)"},
		{name: "answering 500 to try retries", secrets: []string{secret}, status: http.StatusInternalServerError,
			header: delivery.Sign(secret, now, body), want: "signature: valid (secret 1, whsec_rece…)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status := tc.status
			if status == 0 {
				status = http.StatusOK
			}
			var out bytes.Buffer
			rc := newReceiver(&out, tc.secrets, status, func() time.Time { return now })
			req := httptest.NewRequest(http.MethodPost, "/callback?x=1", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(delivery.EventTypeHeader, "wallet.bet_placed.v1")
			req.Header.Set(delivery.IdempotencyKeyHeader, "ev-1:callback")
			req.Header.Set(delivery.AttemptHeader, "2")
			if tc.header != "" {
				req.Header.Set(delivery.SignatureHeader, tc.header)
			}
			rec := httptest.NewRecorder()
			rc.ServeHTTP(rec, req)
			if rec.Code != status || rec.Body.String() != `{"received":true}` {
				t.Fatalf("answer %d %s, want %d", rec.Code, rec.Body, status)
			}
			got := out.String()
			for _, want := range []string{"\nPOST /callback?x=1  2026-05-01T12:00:00Z\n",
				"  X-Pitboss-Event-Type: wallet.bet_placed.v1\n", "  Idempotency-Key: ev-1:callback\n",
				"  X-Pitboss-Attempt: 2\n", "  " + tc.want + "\n", `  "member_account": "player-1",`, `  "bet_amount": 1.00,`} {
				if !strings.Contains(got, want) {
					t.Errorf("output lacks %q:\n%s", want, got)
				}
			}
			if strings.Contains(got, secret) {
				t.Errorf("output shows the secret:\n%s", got)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer the receiver writes to while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestReceiveCommand: `pitboss receive` over TCP takes a delivery from the
// real sender (a sandbox client's, under PITBOSS_PRIVATE_CALLBACKS=sandbox)
// and finds its signature valid; it stops when its context ends.
func TestReceiveCommand(t *testing.T) {
	t.Parallel()
	const secret = "whsec_receive_command_0123456789abcdef"
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"receive", "--addr", "127.0.0.1:0", "--secret", secret}, pw, io.Discard)
		_ = pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatalf("no output: %v", lines.Err())
	}
	m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+);`).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("first line %q names no address", lines.Text())
	}
	rest := make(chan string)
	go func() {
		var b strings.Builder
		for lines.Scan() {
			b.WriteString(lines.Text() + "\n")
		}
		rest <- b.String()
	}()

	s := delivery.NewSender(delivery.SenderConfig{Timeout: 5 * time.Second, PrivateTargets: gateway.PrivateTargetsSandbox})
	r := s.Send(t.Context(), delivery.Request{URL: m[1] + "/webhook", Environment: gateway.EnvironmentSandbox,
		Body: []byte(`{"id":"ev-1","type":"deposit"}`), Secret: secret, DeliveryID: "dl_1", IdempotencyKey: "ev-1:wh_1",
		EventID: "ev-1", EventType: "wallet.deposited.v1", Kind: "deposit", Attempt: 1})
	if !r.Succeeded() || r.StatusCode != http.StatusOK {
		t.Fatalf("delivery to the receiver: %+v", r)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("receive: %v", err)
	}
	got := <-rest
	for _, want := range []string{"POST /webhook ", "X-Pitboss-Kind: deposit", "X-Pitboss-Delivery-Id: dl_1",
		"signature: valid (secret 1, whsec_rece…)", `"type": "deposit"`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestReceiveFlags(t *testing.T) {
	t.Parallel()
	o, err := parseReceiveFlags([]string{"--secret", "whsec_a", "--secret", "whsec_b", "--status", "503"}, io.Discard, io.Discard)
	if err != nil || o.addr != defaultReceiveAddr || len(o.secrets) != 2 || o.secrets[1] != "whsec_b" || o.status != 503 {
		t.Fatalf("options %+v, %v", o, err)
	}
	for _, args := range [][]string{{"--status", "99"}, {"--status", "600"}, {"--secret", ""}, {"stray"}} {
		if _, err := parseReceiveFlags(args, io.Discard, io.Discard); exitStatus(err) != exitUsage {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// receiverBlock is the part of the sandbox's output about the receiver.
func receiverBlock(t *testing.T, out string) string {
	t.Helper()
	i := strings.Index(out, "\nCallbacks and webhooks on this machine")
	if i < 0 {
		t.Fatalf("no receiver example in:\n%s", out)
	}
	return out[i:]
}

// TestPrintSandboxReceiver: the receiver example is valid shell, its
// receive command takes its flags, and what it registers is a callback URL
// and a webhook endpoint a sandbox client may have under sandbox and a
// production client may not.
func TestPrintSandboxReceiver(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	printSandboxReceiver(&out, "/opt/pitboss/bin/pitboss", gateway.PrivateTargetsSandbox)
	block := receiverBlock(t, out.String())
	if !strings.Contains(block, "private targets are allowed for sandbox clients (PITBOSS_PRIVATE_CALLBACKS=sandbox)") {
		t.Errorf("no word on the setting:\n%s", block)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err) // the project's scripts need it too
	}
	if msg, err := exec.Command(bash, "-n", "-c", block[strings.Index(block, "\n  #"):]).CombinedOutput(); err != nil {
		t.Fatalf("the example is not valid shell: %v\n%s", err, msg)
	}

	m := regexp.MustCompile(`\n  /opt/pitboss/bin/pitboss receive (.*) &\n`).FindStringSubmatch(block)
	if m == nil {
		t.Fatalf("no receive command in:\n%s", block)
	}
	args := strings.Fields(strings.NewReplacer(`"$CB_SECRET"`, "whsec_cb", `"$WH_SECRET"`, "whsec_wh").Replace(m[1]))
	o, err := parseReceiveFlags(args, io.Discard, io.Discard)
	if err != nil || o.addr != defaultReceiveAddr || len(o.secrets) != 2 {
		t.Fatalf("receive %q: %+v, %v", args, o, err)
	}

	var callback struct {
		URL string `json:"forward_callback_url"`
	}
	var hook struct {
		URL   string   `json:"url"`
		Kinds []string `json:"kinds"`
	}
	for v, re := range map[any]string{&callback: `-d '(\{"forward_callback_url"[^']*\})'`, &hook: `-d '(\{"url"[^']*\})'`} {
		m := regexp.MustCompile(re).FindStringSubmatch(block)
		if m == nil {
			t.Fatalf("no body %s in:\n%s", re, block)
		}
		if err := json.Unmarshal([]byte(m[1]), v); err != nil {
			t.Fatalf("body %s: %v", m[1], err)
		}
	}
	if callback.URL != "http://"+defaultReceiveAddr+"/callback" || hook.URL != "http://"+defaultReceiveAddr+"/webhook" {
		t.Fatalf("callback %q, webhook %q: want the receiver's default address", callback.URL, hook.URL)
	}
	if _, err := gateway.CheckWebhookKinds(hook.Kinds); err != nil {
		t.Fatalf("kinds %v: %v", hook.Kinds, err)
	}
	for _, u := range []string{callback.URL, hook.URL} {
		if err := gateway.CheckCallbackURL("url", u, gateway.PrivateTargetsSandbox.Allows(gateway.EnvironmentSandbox)); err != nil {
			t.Errorf("%s refused for the sandbox client: %v", u, err)
		}
		if err := gateway.CheckCallbackURL("url", u, gateway.PrivateTargetsSandbox.Allows(gateway.EnvironmentProduction)); err == nil {
			t.Errorf("%s accepted for a production client", u)
		}
	}

	out.Reset()
	printSandboxReceiver(&out, "pitboss", gateway.PrivateTargetsNone)
	if !strings.Contains(out.String(), "needs PITBOSS_PRIVATE_CALLBACKS=sandbox on the server (make run sets it; it is none here)") {
		t.Errorf("no word on the missing setting:\n%s", out.String())
	}
}

// TestSandboxReceiverExample runs the registration part of the example
// `pitboss sandbox` prints, as printed (bash and curl), against `pitboss
// serve` under PITBOSS_PRIVATE_CALLBACKS=sandbox: the sandbox client's
// callback URL and a webhook endpoint point at the receiver, and both
// signing secrets come back for `pitboss receive --secret`.
func TestSandboxReceiverExample(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the printed example cannot be run")
	}
	cfg, pool := testConfig(t)
	cfg.Delivery.PrivateTargets = gateway.PrivateTargetsSandbox
	var out bytes.Buffer
	if err := sandbox(t.Context(), cfg, nil, &out, io.Discard); err != nil {
		t.Fatalf("sandbox: %v", err)
	}
	block := receiverBlock(t, out.String())
	startServe(t, cfg, "api")

	var script strings.Builder
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "  export ") {
			script.WriteString(line + "\n")
		}
	}
	register := block[:strings.Index(block, "\n  # the receiver prints")]
	script.WriteString(register[strings.Index(register, "\n  #"):] + "\n")
	script.WriteString(`printf '\n%s\n%s\n' "$CB_SECRET" "$WH_SECRET"` + "\n")
	cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", script.String())
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("the example failed: %v\n%s", err, script.String())
	}
	// the PATCH prints its answer, then come the two secrets
	answer, secrets, _ := strings.Cut(string(got), "\n\n")
	lines := strings.Split(strings.TrimSuffix(secrets, "\n"), "\n")
	if !strings.HasPrefix(answer, `{"success":true,`) || len(lines) != 2 || len(lines[0]) != 49 || len(lines[1]) != 49 ||
		!strings.HasPrefix(lines[0], gateway.SigningSecretPrefix) || !strings.HasPrefix(lines[1], gateway.SigningSecretPrefix) {
		t.Fatalf("output %q: want the PATCH's answer and two signing secrets", got)
	}

	box, err := cfg.secretBox(cfg.logger())
	if err != nil {
		t.Fatal(err)
	}
	store, err := deliverystore.NewDeliveries(pool, box)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := store.ForwardCallback(t.Context(), sandboxClient)
	if err != nil || fc.URL != "http://"+defaultReceiveAddr+"/callback" || fc.SecretCreatedAt == nil {
		t.Fatalf("forward callback %+v, %v", fc, err)
	}
	hooks, err := store.ListWebhooks(t.Context(), sandboxClient)
	if err != nil || len(hooks) != 1 || hooks[0].URL != "http://"+defaultReceiveAddr+"/webhook" || hooks[0].Kinds[0] != "*" {
		t.Fatalf("webhooks %+v, %v", hooks, err)
	}
	if c, err := gatewaystore.NewGateway(pool).GetClient(t.Context(), sandboxClient); err != nil || c.Environment != gateway.EnvironmentSandbox {
		t.Fatalf("sandbox client %+v, %v", c, err)
	}
}
