package api_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/audit"
)

// makeCheckpoint signs the ledger's head as `pitboss checkpoint` does.
// The keys are sealed with the harness's master key, as the server's own
// checkpoints (and statements) are.
func makeCheckpoint(t testing.TB, h *apitest.Harness) auditstore.MakeResult {
	t.Helper()
	res, err := auditstore.NewCheckpoints(h.Pool, h.Box).Make(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

type ckptPage struct {
	Success   bool                     `json:"success"`
	Data      []audit.CheckpointRecord `json:"data"`
	NextAfter *int64                   `json:"next_after"`
	Error     *struct {
		Code    string         `json:"code"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

type ckptKeys struct {
	Success bool `json:"success"`
	Data    []struct {
		KeyID        string `json:"key_id"`
		PublicKey    string `json:"public_key"`
		PublicKeyPEM string `json:"public_key_pem"`
		CreatedAt    string `json:"created_at"`
		Active       bool   `json:"active"`
	} `json:"data"`
}

// A client reads only its own signed checkpoints, each verifying with a
// key the keys route lists; paging, 400, 401 and 403 as the events route.
func TestAuditCheckpointsAPI(t *testing.T) {
	t.Parallel()
	h := newAuFixture(t)
	// given two runs, the second after a key rotation
	first := makeCheckpoint(t, h.Harness)
	if _, err := auditstore.NewCheckpoints(h.Pool, h.Box).RotateKey(t.Context()); err != nil {
		t.Fatal(err)
	}
	second := makeCheckpoint(t, h.Harness)
	if first.Clients != 2 || second.Clients != 2 || first.Platform.KeyID == second.Platform.KeyID {
		t.Fatalf("runs %+v %+v", first, second)
	}
	get := func(path, key string) (int, ckptPage, string) {
		rec := h.Get(path, key)
		var p ckptPage
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatalf("%s: %d %s: %v", path, rec.Code, rec.Body.String(), err)
		}
		return rec.Code, p, rec.Body.String()
	}

	// the keys route lists both keys, the newest active
	rec := h.Get("/api/v1/audit/checkpoint-keys", h.acme)
	var keys ckptKeys
	if err := json.Unmarshal(rec.Body.Bytes(), &keys); err != nil || rec.Code != 200 || len(keys.Data) != 2 ||
		keys.Data[0].KeyID != first.Platform.KeyID || keys.Data[0].Active || !keys.Data[1].Active ||
		!strings.HasPrefix(keys.Data[1].PublicKeyPEM, "-----BEGIN PUBLIC KEY-----") {
		t.Fatalf("keys: %d %s", rec.Code, rec.Body.String())
	}
	listed := map[string]string{}
	for _, k := range keys.Data {
		listed[k.KeyID] = k.PublicKey
	}

	for _, client := range []string{"acme", "other"} {
		key := map[string]string{"acme": h.acme, "other": h.other}[client]
		// when the client pages through its checkpoints one by one
		var got []audit.CheckpointRecord
		after := int64(0)
		for range 5 {
			code, p, body := get(fmt.Sprintf("/api/v1/audit/checkpoints?after=%d&limit=1", after), key)
			if code != 200 || !p.Success || p.NextAfter == nil {
				t.Fatalf("%s after %d: %d %s", client, after, code, body)
			}
			got = append(got, p.Data...)
			after = *p.NextAfter
			if len(p.Data) < 1 {
				break
			}
		}
		// then it got exactly its two, each its own and signed
		if len(got) != 2 {
			t.Fatalf("%s: %d checkpoints, want 2", client, len(got))
		}
		for i, r := range got {
			if r.PublicKey != listed[r.KeyID] {
				t.Fatalf("%s: checkpoint %d's key %s is not the listed one", client, r.ID, r.KeyID)
			}
			pub, _ := base64.StdEncoding.DecodeString(listed[r.KeyID])
			sig, _ := base64.StdEncoding.DecodeString(r.Signature)
			if !ed25519.Verify(pub, []byte(r.Payload), sig) {
				t.Fatalf("%s: checkpoint %d's signature does not verify", client, r.ID)
			}
			p, err := audit.ParseCheckpoint([]byte(r.Payload))
			if err != nil || p.Scope != audit.CheckpointScopeClient || p.ClientID != client {
				t.Fatalf("%s was shown %s (%v)", client, r.Payload, err)
			}
			var head int64
			if err := h.Pool.QueryRow(t.Context(), `SELECT max(position) FROM events WHERE split_part(stream_id, ':', 2) = $1`,
				client).Scan(&head); err != nil {
				t.Fatal(err)
			}
			if p.Position != head || p.Position >= first.Platform.Position && client == "other" {
				t.Fatalf("%s's checkpoint at %d, its last event at %d (platform %d)", client, p.Position, head, first.Platform.Position)
			}
			if want := []string{first.Platform.KeyID, second.Platform.KeyID}[i]; r.KeyID != want {
				t.Fatalf("%s: checkpoint %d signed by %s, want %s", client, i, r.KeyID, want)
			}
		}
	}

	tests := []struct {
		name, query, key string
		status           int
		code, field      string
	}{
		{"a negative after", "?after=-1", h.acme, 400, wire.CodeInvalidRequest, "after"},
		{"an after that is not a number", "?after=x", h.acme, 400, wire.CodeInvalidRequest, "after"},
		{"limit zero", "?limit=0", h.acme, 400, wire.CodeInvalidRequest, "limit"},
		{"limit above 1000", "?limit=1001", h.acme, 400, wire.CodeInvalidRequest, "limit"},
		{"no key", "", "", 401, wire.CodeUnauthorized, ""},
		{"an unknown key", "", "pk_sandbox_nope", 401, wire.CodeUnauthorized, ""},
		{"a key without audit:read", "", h.acmeNoScope, 403, wire.CodeForbidden, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, p, body := get("/api/v1/audit/checkpoints"+tc.query, tc.key)
			if code != tc.status || p.Success || p.Error == nil || p.Error.Code != tc.code ||
				(tc.field != "" && p.Error.Details["field"] != tc.field) {
				t.Fatalf("%d %s, want %d %s field %q", code, body, tc.status, tc.code, tc.field)
			}
		})
	}
	for _, k := range []struct {
		key    string
		status int
	}{{"", http.StatusUnauthorized}, {h.acmeNoScope, http.StatusForbidden}} {
		if rec := h.Get("/api/v1/audit/checkpoint-keys", k.key); rec.Code != k.status {
			t.Fatalf("checkpoint-keys with %q: %d %s", k.key, rec.Code, rec.Body.String())
		}
	}
}
