package chaos_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/chaos/stack"
	"github.com/pitboss/pitboss/internal/eventually"
)

// TestSecretsNeverLoggedOrStoredInClear runs the real binary at debug log
// level on the shared PostgreSQL and Kafka, and goes through everything
// that handles a secret: the sandbox, key issuance and rotation over the
// admin API, the client secret (issued and revealed), a signed launch (api_key and sig in the
// query string), a bearer launch, provider wallet calls, webhook and
// callback signing secrets, and signed deliveries. Then no key or secret
// may appear in any log line (the service's and the CLI's), nor in clear
// in any table or Kafka record.
func TestSecretsNeverLoggedOrStoredInClear(t *testing.T) {
	shortParallel(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin, err := pitbossBin()
	if err != nil {
		t.Fatal(err)
	}
	db, dbURL := pgtest.NewDatabase(t)
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 3)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = kafka.DeleteTopic(ctx, brokers, topic+".dlq")
	})
	svc, err := stack.NewService(bin, dir, dbURL, brokers, topic)
	if err != nil {
		t.Fatal(err)
	}
	svc.Env = append(svc.Env, "PITBOSS_LOG_LEVEL=debug")
	sb, err := svc.SetupSandbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rcv := stack.NewReceiver()
	defer rcv.Close()
	p := svc.Role("pitboss", "api,relay,forwarder")
	t.Cleanup(func() { _ = p.Stop(15 * time.Second) })
	if err := svc.StartRole(ctx, p); err != nil {
		t.Fatal(err)
	}
	h := stack.NewHTTPClient(2, 30*time.Second)
	admin := &stack.API{Base: svc.BaseURL(), Key: svc.AdminToken, HTTP: h}
	secrets := map[string]string{"sandbox API key": sb.Key, "provider secret": sb.ProviderSecret,
		"admin token": svc.AdminToken, "PITBOSS_SECRET_KEY": svc.SecretKey}
	must := func(o stack.Outcome, what string) map[string]any {
		t.Helper()
		if o.Err != nil || o.Status != http.StatusOK {
			t.Fatalf("%s: %v %d %s", what, o.Err, o.Status, o.Body)
		}
		var v struct {
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(o.Body, &v); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v.Data
	}
	str := func(m map[string]any, k string) string {
		s, _ := m[k].(string)
		if s == "" {
			t.Fatalf("no %s in %v", k, m)
		}
		return s
	}
	r := stack.DefaultRetry
	must(admin.Call(ctx, r, http.MethodPost, "/admin/v1/clients", map[string]any{"id": "sec", "name": "Secrets", "environment": "sandbox"}), "create client")
	must(admin.Call(ctx, r, http.MethodPatch, "/admin/v1/clients/sec", map[string]any{"forward_callback_url": rcv.URL()}), "callback url")
	k1 := must(admin.Call(ctx, r, http.MethodPost, "/admin/v1/clients/sec/keys", map[string]any{"scopes": []string{"launch", "transactions:read",
		"transactions:write", "wallet:read", "deliveries:read", "deliveries:write"}}), "issue key")
	secrets["issued API key"] = str(k1, "key")
	k2 := must(admin.Call(ctx, r, http.MethodPost, "/admin/v1/clients/sec/keys/"+str(k1, "id")+"/rotate", map[string]any{}), "rotate key")
	secrets["rotated API key"] = str(k2, "key")
	cs := must(admin.Call(ctx, r, http.MethodPost, "/admin/v1/clients/sec/client-secret", nil), "client secret")
	secrets["client secret"] = str(cs, "client_secret")
	// The tokens area shows it again and records the reveal: neither the
	// log line nor the trail's row may carry it.
	if got := must(admin.Call(ctx, r, http.MethodPost, "/admin/v1/clients/sec/client-secret/reveal",
		map[string]any{"reason": "secrets test"}), "reveal client secret"); str(got, "client_secret") != secrets["client secret"] {
		t.Fatalf("revealed %q, issued %q", got["client_secret"], secrets["client secret"])
	}
	api := &stack.API{Base: svc.BaseURL(), Key: secrets["rotated API key"], HTTP: h}
	cb := must(api.Call(ctx, r, http.MethodPost, "/api/v1/forward-callback/rotate-secret", []byte(`{}`)), "callback secret")
	secrets["callback signing secret"] = str(cb, "secret")
	rcv.SetSecret(secrets["callback signing secret"])
	wh := must(api.Call(ctx, r, http.MethodPost, "/api/v1/webhooks", map[string]any{"url": rcv.URL() + "/wh", "kinds": []string{"*"}}), "webhook")
	secrets["webhook signing secret"] = str(wh, "secret")
	rcv.SetSecret(secrets["callback signing secret"], secrets["webhook signing secret"])

	// Money, a bearer launch, and provider calls.
	if err := api.Deposit(ctx, "sec-dep", "sp", "50.00", "EUR"); err != nil {
		t.Fatal(err)
	}
	session, err := api.Launch(ctx, sb.Provider, sb.Game, "sp", "EUR")
	if err != nil {
		t.Fatal(err)
	}
	prov := &stack.Provider{Base: svc.BaseURL(), ID: sb.Provider, Secret: sb.ProviderSecret, HTTP: h}
	for i, op := range []string{"bet", "win", "bet", "rollback"} {
		body := fmt.Sprintf(`{"session_id":%q,"transaction_id":"sec-%d","amount":"1.00","reference_transaction_id":"sec-%d"}`, session, i, i-1)
		if op == "bet" {
			body = fmt.Sprintf(`{"session_id":%q,"transaction_id":"sec-%d","amount":"1.00"}`, session, i)
		}
		if op == "rollback" {
			body = fmt.Sprintf(`{"session_id":%q,"transaction_id":"sec-%d","reference_transaction_id":"sec-2"}`, session, i)
		}
		if o := prov.Call(ctx, r, op, []byte(body)); o.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", op, o.Status, o.Body)
		}
	}
	// A bad signature, and an unknown key: refusals are logged too.
	if rep, _ := prov.Send(ctx, "balance", []byte(`{"session_id":"x"}`)); rep.Status != http.StatusOK {
		bad := &stack.Provider{Base: prov.Base, ID: prov.ID, Secret: "wrong", HTTP: h}
		_, _ = bad.Send(ctx, "bet", []byte(`{"session_id":"x"}`))
	}
	_, _ = (&stack.API{Base: svc.BaseURL(), Key: secrets["issued API key"] + "x", HTTP: h}).Do(ctx, http.MethodGet, "/api/v1/wallet/balance", nil)
	// A signed launch: api_key and sig travel in the query string.
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	m := hmac.New(sha256.New, []byte(secrets["client secret"]))
	m.Write([]byte(strings.Join([]string{secrets["rotated API key"], "sp2", sb.Game, "10.00", ts}, "|")))
	q := url.Values{"api_key": {secrets["rotated API key"]}, "user_id": {"sp2"}, "game_uid": {sb.Game}, "balance": {"10.00"},
		"ts": {ts}, "sig": {hex.EncodeToString(m.Sum(nil))}, "currency_code": {"EUR"}}
	if rep, err := api.Do(ctx, http.MethodGet, "/v1/launch?"+q.Encode(), nil); err != nil || rep.Status != http.StatusOK {
		t.Fatalf("signed launch: %v %d %s", err, rep.Status, rep.Body)
	}
	// Wait for the signed deliveries (callbacks and webhooks).
	eventually.NoError(t, 3*time.Minute, "eight deliveries", func() error {
		if n := len(rcv.Receipts()); n < 8 {
			return fmt.Errorf("only %d deliveries arrived", n)
		}
		return nil
	})
	for _, rc := range rcv.Receipts() {
		if !rc.SignatureOK {
			t.Fatalf("a delivery with a bad signature: %+v", rc)
		}
	}
	// The CLI paths too: key issue prints the key on stdout, by design;
	// its stderr (the logs) must not.
	if _, err := svc.CLI(ctx, "key", "issue", "--client", "sec", "--scopes", "wallet:read"); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(15 * time.Second); err != nil {
		t.Fatal(err)
	}

	logs, err := os.ReadFile(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) < 1000 || !strings.Contains(string(logs), `"level":"DEBUG"`) && !strings.Contains(string(logs), `"msg":"http"`) {
		t.Fatalf("the log is suspiciously small (%d bytes): the test would prove nothing", len(logs))
	}
	var stored strings.Builder
	rows, err := db.Query(ctx, `SELECT format('SELECT string_agg(row_to_json(t)::text, E''\n'') FROM %I.%I t', table_schema, table_name)
	    FROM information_schema.tables WHERE table_schema IN ('public', 'readmodels') AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var queries []string
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			t.Fatal(err)
		}
		queries = append(queries, q)
	}
	rows.Close()
	for _, q := range queries {
		var s *string
		if err := db.QueryRow(ctx, q).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if s != nil {
			stored.WriteString(*s)
		}
	}
	var nEvents int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&nEvents); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer rcancel()
	recs, err := kafkatest.ReadUntil(rctx, brokers, topic, func(rs []kafkatest.Record) bool { return len(rs) >= nEvents })
	if err != nil {
		t.Fatalf("%d of %d events on Kafka: %v\n%s", len(recs), nEvents, err, p.LogTail(20))
	}
	var onKafka strings.Builder
	for _, rec := range recs {
		onKafka.Write(rec.Value)
		for k, v := range rec.Headers {
			onKafka.WriteString(k + "=" + v + "\n")
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	t.Logf("searched %d bytes of logs (%d files), %d bytes of table rows (%d tables), %d Kafka records for %d secrets",
		len(logs), len(files), stored.Len(), len(queries), len(recs), len(secrets))
	// Positive controls: the searches do see what is there. Keys are
	// stored as their SHA-256 (docs/threat-model.md), so the hash of the
	// issued key is in the dump; the log has the provider calls.
	sum := sha256.Sum256([]byte(secrets["issued API key"]))
	if !strings.Contains(stored.String(), hex.EncodeToString(sum[:])) {
		t.Errorf("the SHA-256 of the issued key is not in the table dump: keys not stored hashed, or the dump is blind")
	}
	if !strings.Contains(string(logs), `/provider/v1/wallet/bet`) {
		t.Errorf("the log does not show the provider calls: the search is blind")
	}
	for what, secret := range secrets {
		if len(secret) < 16 {
			t.Fatalf("%s %q is too short to search for", what, secret)
		}
		for where, text := range map[string]string{"the service log": string(logs), "a table": stored.String(),
			"a Kafka record": onKafka.String()} {
			if strings.Contains(text, secret) {
				i := strings.Index(text, secret)
				t.Errorf("the %s appears in %s: …%s…", what, where, text[max(0, i-120):min(len(text), i+len(secret)+40)])
			}
		}
	}
}
