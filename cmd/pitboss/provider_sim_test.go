package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

// TestProviderSimExitsOnDeviation: `pitboss provider-sim` against a
// server whose balance answer is the wrong shape exits 1 and names the
// deviation; the credentials come from their files (the launch's api_key,
// the wallet call's v2 signature with the provider's secret).
func TestProviderSimExitsOnDeviation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile, secretFile := filepath.Join(dir, "sandbox.key"), filepath.Join(dir, "provider.secret")
	if err := os.WriteFile(keyFile, []byte("pb_key_from_file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretFile, []byte("secret-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var (
		mu        sync.Mutex
		launchKey string
		sigErrs   []error
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/v1/launch" {
			launchKey = r.URL.Query().Get("api_key")
			_, _ = w.Write([]byte(`{"ok":true,"session_id":"gs_fake"}`))
			return
		}
		body, _ := io.ReadAll(r.Body)
		p := gateway.Provider{ID: r.Header.Get("X-Provider-Id"), Secret: "secret-from-file", SignatureScheme: gateway.SignatureV2}
		if err := gateway.VerifyProviderCall(p, gateway.ProviderCall{Method: r.Method, Path: r.URL.Path, Body: body},
			r.Header.Get("X-Signature"), time.Now()); err != nil || p.ID != "acme" {
			sigErrs = append(sigErrs, err)
		}
		_, _ = w.Write([]byte(`{"status":"OK","balance":"100.00","currency":"EUR"}`))
	}))
	defer srv.Close()

	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"provider-sim", "--protocol", "pitboss", "--base-url", srv.URL,
		"--provider", "acme", "--game", "slot", "--api-key-file", keyFile, "--provider-secret-file", secretFile, "--spins", "1"},
		&out, &errOut)
	if code := exitStatus(err); code != 1 {
		t.Fatalf("exit %d (%v), want 1\n%s%s", code, err, out.String(), errOut.String())
	}
	want := `DEVIATION balance: balance answer: balance is "100.00", not a JSON number`
	if !strings.Contains(out.String(), want) {
		t.Fatalf("output does not name the deviation %q:\n%s", want, out.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if launchKey != "pb_key_from_file" {
		t.Fatalf("launched with api_key %q, want the file's", launchKey)
	}
	if len(sigErrs) > 0 {
		t.Fatalf("wallet calls not signed with the file's secret as acme: %v", sigErrs)
	}
}

// TestProviderSimUsage: a command line the simulator cannot run is exit
// 2, before any call; --help is exit 0.
func TestProviderSimUsage(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"no protocol":         {"--provider", "p", "--game", "g", "--api-key", "k", "--provider-secret", "s"},
		"unknown protocol":    {"--protocol", "hub99", "--provider", "p", "--game", "g", "--api-key", "k", "--provider-secret", "s"},
		"caleta without key":  {"--protocol", "caleta", "--provider", "p", "--game", "g", "--api-key", "k"},
		"unreadable key file": {"--protocol", "caleta", "--private-key-file", "/nonexistent.pem"},
		"secret given twice":  {"--protocol", "pitboss", "--provider-secret", "a", "--provider-secret-file", "/etc/hostname"},
		"unknown flag":        {"--protocol", "pitboss", "--bogus"},
		"stray argument":      {"--protocol", "pitboss", "extra"},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), append([]string{"provider-sim"}, args...), &out, &out)
			if code := exitStatus(err); code != exitUsage {
				t.Fatalf("exit %d (%v), want %d\n%s", code, err, exitUsage, out.String())
			}
		})
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"provider-sim", "--help"}, &out, &out); exitStatus(err) != 0 ||
		!strings.Contains(out.String(), "--private-key-file") {
		t.Fatalf("--help: %v\n%s", err, out.String())
	}
}

// TestProviderSimAbortKeepsCredentials: a run that cannot reach the
// service exits 1, and its error does not carry the URL's credentials
// (the launch's api_key; evolution's authToken is in its wallet URLs).
func TestProviderSimAbortKeepsCredentials(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	var out bytes.Buffer
	err := run(context.Background(), []string{"provider-sim", "--protocol", "evolution", "--base-url", srv.URL,
		"--provider", "acme", "--game", "slot", "--api-key", "pb_very_secret_key", "--provider-secret", "s"}, &out, &out)
	if code := exitStatus(err); code != 1 {
		t.Fatalf("exit %d (%v), want 1", code, err)
	}
	if strings.Contains(err.Error()+out.String(), "pb_very_secret_key") {
		t.Fatalf("the API key is printed: %v\n%s", err, out.String())
	}
}
