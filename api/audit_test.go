package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// auFixture is the API on a database holding the events of two clients,
// booked through the real ledger.
type auFixture struct {
	*apitest.Harness
	t *testing.T
	// keys: acme with audit:read, acme without it, other with audit:read
	acme, acmeNoScope, other string
	events                   int
}

func newAuFixture(t *testing.T) *auFixture {
	t.Helper()
	ctx := t.Context()
	h := &auFixture{Harness: apitest.New(t, apitest.Options{}), t: t}
	for _, c := range []string{"acme", "other"} {
		h.AddClient(c, "sandbox")
	}
	h.acme, _ = h.IssueKey("acme", gateway.ScopeAuditRead)
	h.acmeNoScope, _ = h.IssueKey("acme", gateway.ScopeTransactionsRead, gateway.ScopeWalletRead)
	h.other, _ = h.IssueKey("other", gateway.ScopeAuditRead)

	eur := domain.MustCurrency("EUR")
	// interleave the two clients so each one's positions have gaps
	for i := range 4 {
		for _, c := range []string{"acme", "other"} {
			if c == "other" && i == 3 {
				continue
			}
			amt := domain.FromMinor(int64(100*(i+1)), eur)
			if _, err := h.Commands.Deposit(ctx, domain.ClientTx{Client: c, Player: "p1", ExternalTxID: fmt.Sprintf("d%d", i),
				Currency: eur}, amt); err != nil {
				t.Fatal(err)
			}
			h.events++
		}
	}
	return h
}

type auPage struct {
	Success bool `json:"success"`
	Data    []struct {
		Position      int64  `json:"position"`
		EventID       string `json:"event_id"`
		StreamID      string `json:"stream_id"`
		StreamVersion int64  `json:"stream_version"`
		Type          string `json:"type"`
		OccurredAt    string `json:"occurred_at"`
		Body          string `json:"body"`
		PrevHash      string `json:"prev_hash"`
		Hash          string `json:"hash"`
	} `json:"data"`
	NextAfter *int64 `json:"next_after"`
	Position  *int64 `json:"position"`
	HeadHash  string `json:"head_hash"`
	Error     *struct {
		Code    string         `json:"code"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

func (h *auFixture) get(query, key string) (*httptest.ResponseRecorder, auPage) {
	h.t.Helper()
	rec := h.Get("/api/v1/audit/events"+query, key)
	var p auPage
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		h.t.Fatalf("status %d body %q: %v", rec.Code, rec.Body.String(), err)
	}
	return rec, p
}

// positions reads every page of client's events with the given limit.
func (h *auFixture) positions(key string, limit int) []int64 {
	h.t.Helper()
	var out []int64
	after := int64(0)
	for range 100 {
		rec, p := h.get(fmt.Sprintf("?after=%d&limit=%d", after, limit), key)
		if rec.Code != http.StatusOK {
			h.t.Fatalf("page after %d: %d %s", after, rec.Code, rec.Body.String())
		}
		for _, e := range p.Data {
			out = append(out, e.Position)
		}
		after = *p.NextAfter
		if len(p.Data) < limit {
			return out
		}
	}
	h.t.Fatal("paging did not end")
	return nil
}

func TestAuditEventsAPI(t *testing.T) {
	t.Parallel()
	h := newAuFixture(t)
	// Each client sees its own head: the position and hash of its last
	// event (an anchor for the chain up to there), never the platform's
	// head, which would show every other client's volume (issue 17, item 8).
	heads := map[string]struct {
		position int64
		hash     []byte
	}{}
	for _, c := range []string{"acme", "other"} {
		var hd struct {
			position int64
			hash     []byte
		}
		if err := h.Pool.QueryRow(t.Context(), `SELECT position, hash FROM events WHERE split_part(stream_id, ':', 2) = $1
			ORDER BY position DESC LIMIT 1`, c).Scan(&hd.position, &hd.hash); err != nil {
			t.Fatal(err)
		}
		heads[c] = hd
	}
	if heads["other"].position >= int64(h.events) {
		t.Fatalf("the fixture must end with acme's events (other's head %d, platform head %d)", heads["other"].position, h.events)
	}

	tests := []struct {
		name   string
		query  string
		key    string
		status int
		code   string
		field  string
	}{
		{"own events", "", h.acme, 200, "", ""},
		{"own events, largest page", "?after=0&limit=1000", h.acme, 200, "", ""},
		{"the other client's events", "?limit=1", h.other, 200, "", ""},
		{"a negative after", "?after=-1", h.acme, 400, wire.CodeInvalidRequest, "after"},
		{"an after that is not a number", "?after=abc", h.acme, 400, wire.CodeInvalidRequest, "after"},
		{"limit zero", "?limit=0", h.acme, 400, wire.CodeInvalidRequest, "limit"},
		{"limit above 1000", "?limit=1001", h.acme, 400, wire.CodeInvalidRequest, "limit"},
		{"a fractional limit", "?limit=2.5", h.acme, 400, wire.CodeInvalidRequest, "limit"},
		{"no key", "", "", 401, wire.CodeUnauthorized, ""},
		{"an unknown key", "", "pk_sandbox_nope", 401, wire.CodeUnauthorized, ""},
		{"a key without audit:read", "", h.acmeNoScope, 403, wire.CodeForbidden, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, p := h.get(tc.query, tc.key)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body.String())
			}
			if tc.status != 200 {
				if p.Success || p.Error == nil || p.Error.Code != tc.code || (tc.field != "" && p.Error.Details["field"] != tc.field) {
					t.Fatalf("error body %s, want code %s field %q", rec.Body.String(), tc.code, tc.field)
				}
				return
			}
			client := "acme"
			if tc.key == h.other {
				client = "other"
			}
			head := heads[client]
			if !p.Success || len(p.Data) == 0 || p.Position == nil || *p.Position != head.position ||
				p.HeadHash != hex.EncodeToString(head.hash) ||
				rec.Header().Get(api.HeaderLedgerPosition) != strconv.FormatInt(head.position, 10) {
				t.Fatalf("page %s, header %q: want %s's own head %d and its hash", rec.Body.String(),
					rec.Header().Get(api.HeaderLedgerPosition), client, head.position)
			}
			last := int64(0)
			for _, e := range p.Data {
				// only the client's own events, in position order
				var body domain.Event
				var err error
				if body, err = domain.DecodeBody([]byte(e.Body)); err != nil || body.Data.ClientID != client ||
					!strings.Contains(e.StreamID, ":"+client+":") || e.Position <= last || body.Position != e.Position {
					t.Fatalf("event %+v (decoded %+v, %v) is not one of the events of %s, in order", e, body, err, client)
				}
				last = e.Position
				// each one verifies on its own: hash = SHA-256(prev_hash || body)
				prev, err := hex.DecodeString(e.PrevHash)
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(append(prev, e.Body...))
				if hex.EncodeToString(sum[:]) != e.Hash {
					t.Fatalf("position %d: the hash does not cover the body", e.Position)
				}
			}
			if *p.NextAfter != last {
				t.Fatalf("next_after %d, want the last position %d", *p.NextAfter, last)
			}
		})
	}

	t.Run("paging walks every own event once and no one else's", func(t *testing.T) {
		acme := h.positions(h.acme, 2)
		other := h.positions(h.other, 3)
		if len(acme) != 4 || len(other) != 3 {
			t.Fatalf("acme %v, other %v", acme, other)
		}
		if all := h.positions(h.acme, 1000); !slices.Equal(all, acme) {
			t.Fatalf("pages of 2 %v, one page %v", acme, all)
		}
		both := append(slices.Clone(acme), other...)
		slices.Sort(both)
		for i, p := range both {
			if p != int64(i+1) {
				t.Fatalf("acme %v and other %v together are not every position 1..%d (%d at %d)", acme, other, h.events, p, i)
			}
		}
	})

	t.Run("after the head: an empty page", func(t *testing.T) {
		rec, p := h.get(fmt.Sprintf("?after=%d", h.events), h.acme)
		if rec.Code != 200 || p.Data == nil || len(p.Data) != 0 || *p.NextAfter != int64(h.events) || *p.Position != int64(h.events) {
			t.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
	})

	t.Run("a server without the audit log", func(t *testing.T) {
		rec := h.Bare().Get("/api/v1/audit/events", h.acme)
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), wire.CodeUnavailable) {
			t.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
	})
}
