package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pitboss/pitboss/adapters/delivery"
	"github.com/pitboss/pitboss/gateway"
)

// `pitboss receive`: a receiver for forwarded callbacks and webhooks on
// this machine, so a sandbox (`make run`, PITBOSS_PRIVATE_CALLBACKS=sandbox)
// can be tried without a public endpoint. It prints each delivery and, given
// the signing secrets, checks its signature with delivery.Verify, the code
// docs/callbacks-and-webhooks.md shows receivers.

// defaultReceiveAddr is where `pitboss receive` listens unless told.
const defaultReceiveAddr = "127.0.0.1:9999"

// receiveTolerance is how far a signature's t may be from now: the
// tolerance docs/callbacks-and-webhooks.md asks receivers for.
const receiveTolerance = 5 * time.Minute

// maxReceivedBody bounds the part of a request body the receiver reads.
const maxReceivedBody = 1 << 20

// receivedHeaders are the request headers the receiver prints, in order.
var receivedHeaders = []string{delivery.EventTypeHeader, delivery.KindHeader, delivery.EventIDHeader,
	delivery.DeliveryIDHeader, delivery.IdempotencyKeyHeader, delivery.AttemptHeader, delivery.SignatureHeader}

// stringList is a flag that may be given several times.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error {
	if v == "" {
		return errors.New("must not be empty")
	}
	*l = append(*l, v)
	return nil
}

type receiveOptions struct {
	addr    string
	secrets []string
	status  int
}

// parseReceiveFlags reads receive's command line.
func parseReceiveFlags(args []string, stdout, stderr io.Writer) (receiveOptions, error) {
	fs := flag.NewFlagSet("receive", flag.ContinueOnError)
	var o receiveOptions
	var secrets stringList
	fs.StringVar(&o.addr, "addr", defaultReceiveAddr, "address to listen on")
	fs.Var(&secrets, "secret", "a signing secret (whsec_...) to check signatures with: the forwarded callback's or a webhook\n"+
		"endpoint's; give it once per secret; without it signatures are printed, not checked")
	fs.IntVar(&o.status, "status", http.StatusOK, "status to answer every delivery with (a non-2xx one makes Pitboss retry)")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return o, err
	}
	if o.status < 200 || o.status > 599 {
		printUsage(fs, stderr)
		return o, &exitError{exitUsage, fmt.Errorf("receive: --status %d is not an HTTP status (200 to 599)", o.status)}
	}
	o.secrets = secrets
	return o, nil
}

// receive serves the receiver until ctx ends.
func receive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseReceiveFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("receive: listen: %w", err)
	}
	base := "http://" + ln.Addr().String()
	check := "signatures are printed, not checked (give --secret to check them)"
	if len(o.secrets) > 0 {
		check = fmt.Sprintf("signatures are checked with %d secret(s)", len(o.secrets))
	}
	fmt.Fprintf(stdout, "pitboss receive: listening on %s; %s; Ctrl-C stops\n"+
		"  forward callback URL: %s/callback   webhook endpoint URL: %s/webhook (any path is received)\n",
		base, check, base, base)
	srv := &http.Server{Handler: newReceiver(stdout, o.secrets, o.status, time.Now), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("receive: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("receive: stop: %w", err)
	}
	<-done
	return nil
}

// receiver prints each request it gets and answers status.
type receiver struct {
	mu      sync.Mutex // one request's lines together
	out     io.Writer
	secrets []string
	status  int
	now     func() time.Time
}

func newReceiver(out io.Writer, secrets []string, status int, now func() time.Time) *receiver {
	return &receiver{out: out, secrets: secrets, status: status, now: now}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReceivedBody+1))
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s %s  %s\n", r.Method, r.URL.RequestURI(), rc.now().UTC().Format(time.RFC3339))
	for _, h := range receivedHeaders {
		if v := r.Header.Get(h); v != "" {
			fmt.Fprintf(&b, "  %s: %s\n", h, v)
		}
	}
	switch {
	case err != nil:
		fmt.Fprintf(&b, "  body: not read: %v\n", err)
	case len(body) > maxReceivedBody:
		fmt.Fprintf(&b, "  body: longer than %d bytes, not checked\n", maxReceivedBody)
	default:
		fmt.Fprintf(&b, "  signature: %s\n", rc.verdict(r.Header.Get(delivery.SignatureHeader), body))
		fmt.Fprintf(&b, "%s\n", indentJSON(body))
	}
	rc.mu.Lock()
	_, _ = io.WriteString(rc.out, b.String())
	rc.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rc.status)
	_, _ = io.WriteString(w, `{"received":true}`)
}

// verdict checks the signature header against every secret given.
func (rc *receiver) verdict(header string, body []byte) string {
	switch {
	case header == "":
		return "missing (no " + delivery.SignatureHeader + " header)"
	case len(rc.secrets) == 0:
		return "not checked (no --secret given)"
	}
	var last error
	for i, s := range rc.secrets {
		err := delivery.Verify(header, s, body, rc.now(), receiveTolerance)
		if err == nil {
			return fmt.Sprintf("valid (secret %d, %s)", i+1, secretHint(s))
		}
		// a mismatch says least; a malformed or stale one says more
		if last == nil || !errors.Is(err, delivery.ErrSignatureMismatch) {
			last = err
		}
	}
	return "INVALID: " + last.Error()
}

// secretHint names a secret without showing it.
func secretHint(s string) string {
	if len(s) <= len(gateway.SigningSecretPrefix)+4 {
		return "…"
	}
	return s[:len(gateway.SigningSecretPrefix)+4] + "…"
}

// indentJSON returns a JSON body indented, anything else as it is.
func indentJSON(body []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, body, "  ", "  ") == nil {
		return "  " + out.String()
	}
	return "  " + string(body)
}

// printSandboxReceiver prints how to watch the sandbox client's forwarded
// callbacks and webhooks arrive at `pitboss receive` (bin: how this binary
// was called). It follows the sandbox's other examples: $PB, $KEY,
// $ADMIN, $SESSION and $SECRET are theirs.
func printSandboxReceiver(out io.Writer, bin string, pt gateway.PrivateTargets) {
	note := "private targets are allowed for sandbox clients (" + privateCallbacksVar + "=" + pt.String() + ")"
	if !pt.Allows(gateway.EnvironmentSandbox) {
		note = "needs " + privateCallbacksVar + "=sandbox on the server (make run sets it; it is " + pt.String() + " here)"
	}
	fmt.Fprintf(out, `
Callbacks and webhooks on this machine (docs/callbacks-and-webhooks.md); %s:

  # point the sandbox client's forwarded callbacks and a webhook endpoint for every kind at a local receiver;
  # keep their signing secrets (each is shown once)
  curl -s -X PATCH $PB/admin/v1/clients/%s -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
    -d '{"forward_callback_url":"http://%s/callback"}'
  CB_SECRET=$(curl -s -X POST $PB/api/v1/forward-callback/rotate-secret -H "Authorization: Bearer $KEY" | sed 's/.*"secret":"\([^"]*\)".*/\1/')
  WH_SECRET=$(curl -s -X POST $PB/api/v1/webhooks -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    -d '{"url":"http://%s/webhook","kinds":["*"]}' | sed 's/.*"secret":"\([^"]*\)".*/\1/')
  # the receiver prints each delivery and checks its signature (Ctrl-C or kill %%1 stops it)
  %s receive --addr %s --secret "$CB_SECRET" --secret "$WH_SECRET" &
  # a deposit (a webhook) and a bet (a webhook and the forwarded callback)
  curl -s -X POST $PB/api/v1/transactions -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    -d '{"type":"deposit","transaction_id":"dep-'$(date +%%s)'","player_id":"player-1","amount":"10.00","currency":"EUR"}'
  BODY='{"session_id":"'$SESSION'","transaction_id":"bet-'$(date +%%s)'","round_id":"round-2","amount":"1.00"}' TS=$(date +%%s)
  curl -s -X POST $PB/provider/v1/wallet/bet -H 'X-Provider-Id: demo' -H 'Content-Type: application/json' \
    -H "X-Signature: t=$TS,v2=$(printf '%%s' "$TS.POST./provider/v1/wallet/bet.$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')" -d "$BODY"
  # what was sent, attempt by attempt
  curl -s "$PB/api/v1/deliveries?per_page=5" -H "Authorization: Bearer $KEY"
`, note, sandboxClient, defaultReceiveAddr, defaultReceiveAddr, bin, defaultReceiveAddr)
}
