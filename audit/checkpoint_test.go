package audit_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/domain"
)

func testKey(t *testing.T, seed byte) (ed25519.PrivateKey, ed25519.PublicKey) {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	return priv, priv.Public().(ed25519.PublicKey)
}

func samplePayload(keyID string) audit.CheckpointPayload {
	return audit.CheckpointPayload{
		Format: audit.CheckpointFormat, Scope: audit.CheckpointScopeClient, ClientID: "acme", Position: 57,
		ChainHash: strings.Repeat("ab", 32), SignedAt: "2026-11-26T00:00:00.123456Z", KeyID: keyID,
		Totals: []audit.CurrencyTotal{{Currency: "EUR", Postings: 4, Sum: "0.00", Debits: "12.50"},
			{Currency: "USD", Postings: 2, Sum: "0.00", Debits: "1.00"}},
	}
}

func TestCheckpointKeyID(t *testing.T) {
	t.Parallel()
	_, pub := testKey(t, 1)
	sum := sha256.Sum256(pub)
	if got := audit.CheckpointKeyID(pub); got != hex.EncodeToString(sum[:8]) || len(got) != 16 {
		t.Fatalf("key id %q", got)
	}
	if pem := audit.PublicKeyPEM(pub); !strings.HasPrefix(pem, "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA") {
		t.Fatalf("PEM %q is not an Ed25519 SubjectPublicKeyInfo", pem)
	}
}

func TestEncodeCheckpoint(t *testing.T) {
	t.Parallel()
	_, pub := testKey(t, 1)
	id := audit.CheckpointKeyID(pub)
	tests := []struct {
		name    string
		edit    func(p *audit.CheckpointPayload)
		want    string // the exact bytes; "" when an error is wanted
		wantErr string
	}{
		{name: "a client checkpoint", edit: func(*audit.CheckpointPayload) {},
			want: `{"format":"pitboss.checkpoint.v1","scope":"client","client_id":"acme","position":57,"chain_hash":"` +
				strings.Repeat("ab", 32) + `","signed_at":"2026-11-26T00:00:00.123456Z","key_id":"` + id +
				`","totals":[{"currency":"EUR","postings":4,"sum":"0.00","debits":"12.50"},{"currency":"USD","postings":2,"sum":"0.00","debits":"1.00"}]}`},
		{name: "the platform's, no totals", edit: func(p *audit.CheckpointPayload) {
			p.Scope, p.ClientID, p.Totals = audit.CheckpointScopePlatform, "", nil
		}, want: `{"format":"pitboss.checkpoint.v1","scope":"platform","client_id":"","position":57,"chain_hash":"` +
			strings.Repeat("ab", 32) + `","signed_at":"2026-11-26T00:00:00.123456Z","key_id":"` + id + `","totals":[]}`},
		{name: "a platform checkpoint naming a client", edit: func(p *audit.CheckpointPayload) { p.Scope = audit.CheckpointScopePlatform }, wantErr: "names no client"},
		{name: "a client checkpoint without a client", edit: func(p *audit.CheckpointPayload) { p.ClientID = "" }, wantErr: "not a client id"},
		{name: "an unknown scope", edit: func(p *audit.CheckpointPayload) { p.Scope = "world" }, wantErr: "scope"},
		{name: "another format", edit: func(p *audit.CheckpointPayload) { p.Format = "v0" }, wantErr: "format"},
		{name: "position zero", edit: func(p *audit.CheckpointPayload) { p.Position = 0 }, wantErr: "position"},
		{name: "upper-case hash", edit: func(p *audit.CheckpointPayload) { p.ChainHash = strings.ToUpper(p.ChainHash) }, wantErr: "chain_hash"},
		{name: "a time not UTC micro", edit: func(p *audit.CheckpointPayload) { p.SignedAt = "2026-11-26T00:00:00Z" }, wantErr: "signed_at"},
		{name: "a short key id", edit: func(p *audit.CheckpointPayload) { p.KeyID = "abc" }, wantErr: "key_id"},
		{name: "totals out of order", edit: func(p *audit.CheckpointPayload) { p.Totals[0], p.Totals[1] = p.Totals[1], p.Totals[0] }, wantErr: "order"},
		{name: "an amount not decimal", edit: func(p *audit.CheckpointPayload) { p.Totals[0].Sum = "1e3" }, wantErr: "malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := samplePayload(id)
			tc.edit(&p)
			got, err := audit.EncodeCheckpoint(p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("encoded %s (%v)\nwant    %s", got, err, tc.want)
			}
			back, err := audit.ParseCheckpoint(got)
			if err != nil || back.Position != p.Position || back.Scope != p.Scope {
				t.Fatalf("parse back: %+v %v", back, err)
			}
		})
	}
}

func TestParseCheckpointRefusesNonCanonical(t *testing.T) {
	t.Parallel()
	_, pub := testKey(t, 1)
	good, err := audit.EncodeCheckpoint(samplePayload(audit.CheckpointKeyID(pub)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(string) string
	}{
		{"white space", func(s string) string { return strings.Replace(s, `,"scope"`, `, "scope"`, 1) }},
		{"keys reordered", func(s string) string {
			return strings.Replace(s, `"format":"pitboss.checkpoint.v1","scope":"client"`, `"scope":"client","format":"pitboss.checkpoint.v1"`, 1)
		}},
		{"an extra key", func(s string) string { return strings.Replace(s, `{"format"`, `{"note":"x","format"`, 1) }},
		{"a trailing newline", func(s string) string { return s + "\n" }},
		{"an escaped character", func(s string) string { return strings.Replace(s, `"acme"`, `"\u0061cme"`, 1) }},
		{"a second object", func(s string) string { return s + "{}" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := audit.ParseCheckpoint([]byte(tc.edit(string(good)))); err == nil {
				t.Fatal("a non-canonical payload was accepted")
			}
		})
	}
}

func TestCheckpointSignature(t *testing.T) {
	t.Parallel()
	priv, pub := testKey(t, 1)
	_, otherPub := testKey(t, 2)
	otherPriv, _ := testKey(t, 2)
	p := samplePayload(audit.CheckpointKeyID(pub))
	payload, sig, err := audit.SignCheckpoint(p, priv)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := audit.SignCheckpoint(p, otherPriv); err == nil {
		t.Fatal("signed with a key the payload does not name")
	}
	flip := func(b []byte, i int) []byte { c := bytes.Clone(b); c[i] ^= 1; return c }
	tests := []struct {
		name    string
		payload []byte
		sig     []byte
		pub     ed25519.PublicKey
		wantErr string
	}{
		{"intact", payload, sig, pub, ""},
		{"one payload byte changed", bytes.Replace(payload, []byte(`"position":57`), []byte(`"position":58`), 1), sig, pub, "does not verify"},
		{"one signature bit changed", payload, flip(sig, 10), pub, "does not verify"},
		{"another key", payload, sig, otherPub, "does not verify"},
		{"a short key", payload, sig, pub[:31], "32"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := audit.VerifyCheckpointSignature(tc.payload, tc.sig, tc.pub)
			if tc.wantErr == "" {
				if err != nil || got.ClientID != "acme" {
					t.Fatalf("%+v %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestCanonicalAmount(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, code, want, wantErr string }{
		{"0", "EUR", "0.00", ""},
		{"21.00", "EUR", "21.00", ""},
		{"-36.0", "EUR", "-36.00", ""},
		{"-0.000", "EUR", "0.00", ""},
		{"1.230", "EUR", "1.23", ""},
		{"007.5", "EUR", "7.50", ""},
		{"123456789012345678901234567890.12", "EUR", "123456789012345678901234567890.12", ""},
		{"1.235", "EUR", "", "decimals"},
		{"1e3", "EUR", "", "not decimal"},
		{"", "EUR", "", "not decimal"},
	}
	for _, tc := range tests {
		got, err := audit.CanonicalAmount(tc.in, tc.code)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: %q %v, want error %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestCheckpointTally(t *testing.T) {
	t.Parallel()
	// given acme's six deposits (1..6 euros) and one of another client's
	// between them
	evs := ledger(t, 6)
	other := domain.PlayerWallet("zeta", "p9", eur)
	ext := domain.ExternalAccount("zeta", eur)
	amt := domain.FromMinor(5000, eur)
	evs = append(evs[:3], append([]domain.Event{{ID: "00000000-0000-4000-8000-999999999999", Type: domain.EventDeposited,
		StreamID: other, Version: 1, OccurredAt: evs[2].OccurredAt,
		Data: domain.EventData{ClientID: "zeta", PlayerID: "p9", Currency: "EUR", Amount: amt.String(),
			Postings: []domain.Posting{{Account: ext, Amount: amt.Neg().String()}, {Account: other, Amount: amt.String()}}}}}, evs[3:]...)...)
	for i := range evs {
		evs[i].Position = int64(i + 1)
	}
	recs := rows(t, evs)
	tests := []struct {
		client   string
		upTo     int
		wantPos  int64
		wantTot  audit.CurrencyTotal
		wantNone bool
	}{
		{"", 7, 7, audit.CurrencyTotal{Currency: "EUR", Postings: 14, Sum: "0.00", Debits: "71.00"}, false},
		{"acme", 7, 7, audit.CurrencyTotal{Currency: "EUR", Postings: 12, Sum: "0.00", Debits: "21.00"}, false},
		{"acme", 4, 3, audit.CurrencyTotal{Currency: "EUR", Postings: 6, Sum: "0.00", Debits: "6.00"}, false},
		{"zeta", 7, 4, audit.CurrencyTotal{Currency: "EUR", Postings: 2, Sum: "0.00", Debits: "50.00"}, false},
		{"nobody", 7, 0, audit.CurrencyTotal{}, true},
	}
	for _, tc := range tests {
		tally := audit.NewCheckpointTally(tc.client)
		for _, r := range recs[:tc.upTo] {
			tally.Add(r)
		}
		pos, hash := tally.Last()
		tot := tally.Totals()
		if pos != tc.wantPos || (tc.wantNone && len(tot) != 0) || (!tc.wantNone && (len(tot) != 1 || tot[0] != tc.wantTot)) {
			t.Errorf("%q up to %d: last %d, totals %+v; want %d, %+v", tc.client, tc.upTo, pos, tot, tc.wantPos, tc.wantTot)
		}
		if pos > 0 && !bytes.Equal(hash, recs[pos-1].Hash) {
			t.Errorf("%q: hash of the last row counted is not the row's", tc.client)
		}
		if len(tally.Problems()) > 0 {
			t.Errorf("%q: problems %v", tc.client, tally.Problems())
		}
	}
}
