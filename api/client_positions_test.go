package api_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
)

// TestClientsSeeTheirOwnPositions (issue 17, item 8): every position, head
// and count a client is shown is its own — X-Ledger-Position on reads, the
// heads in POSITION_BEYOND_HEAD, the console overview's lag and the last
// verification — so that no client learns another's volume; and
// read-your-writes keeps working.
func TestClientsSeeTheirOwnPositions(t *testing.T) {
	t.Parallel()
	h := newConsoleFixture(t)
	acme := h.NewClient(gateway.AllScopes...)
	busy := h.NewClient(gateway.AllScopes...)
	// acme writes twice; then busy writes five times, so the platform's
	// head is well past acme's.
	h.Deposit(acme, "p1", "10.00", "EUR")
	h.Deposit(acme, "p1", "5.00", "EUR")
	acmeHead := h.Head()
	for range 5 {
		h.Deposit(busy, "p1", "1.00", "EUR")
	}
	head := h.Head()
	if head <= acmeHead {
		t.Fatalf("platform head %d not past acme's %d", head, acmeHead)
	}
	h.WaitHistory(busy.Key, head)
	h.WaitHistory(acme.Key, acmeHead) // read-your-writes: acme's own position

	position := func(path string, c apitest.Client) int64 {
		t.Helper()
		rec := h.Call(http.MethodGet, path, c.Key, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		p, err := strconv.ParseInt(rec.Header().Get(api.HeaderLedgerPosition), 10, 64)
		if err != nil {
			t.Fatalf("GET %s: X-Ledger-Position %q", path, rec.Header().Get(api.HeaderLedgerPosition))
		}
		return p
	}
	t.Run("X-Ledger-Position is the client's own", func(t *testing.T) {
		for _, path := range []string{
			"/api/v1/transactions",
			"/api/v1/transactions?min_position=" + strconv.FormatInt(acmeHead, 10),
			"/api/v1/reports/ggr",
			"/api/v1/reports/commission",
			"/api/v1/wallet/balance?player_id=p1",
			"/api/v1/wallet/balance?min_position=" + strconv.FormatInt(acmeHead, 10),
			"/api/v1/console/overview",
			"/api/v1/audit/head",
		} {
			if got := position(path, acme); got != acmeHead {
				t.Errorf("GET %s: X-Ledger-Position %d, want acme's head %d (the platform's is %d)", path, got, acmeHead, head)
			}
			if got := position(path, busy); got != head {
				t.Errorf("GET %s as busy: X-Ledger-Position %d, want %d", path, got, head)
			}
		}
	})
	t.Run("a position beyond the client's own head", func(t *testing.T) {
		// busy's last position is committed, but it is not acme's: acme is
		// told its own head, not the platform's.
		for _, path := range []string{"/api/v1/transactions", "/api/v1/reports/ggr", "/api/v1/wallet/balance"} {
			e := apitest.WantError(t, h.Call(http.MethodGet, path+"?min_position="+strconv.FormatInt(head, 10), acme.Key, ""),
				http.StatusBadRequest, wire.CodePositionBeyondHead)
			if got := fmt.Sprint(e.Error.Details["head"]); got != strconv.FormatInt(acmeHead, 10) {
				t.Errorf("GET %s: details %v, want head %d (acme's)", path, e.Error.Details, acmeHead)
			}
		}
	})
	t.Run("overview lag", func(t *testing.T) {
		type lagPart struct {
			Name         string  `json:"name"`
			Position     int64   `json:"position"`
			BehindEvents int64   `json:"behind_events"`
			Oldest       *string `json:"oldest_unapplied_at"`
		}
		type overview struct {
			Position int64 `json:"position"`
			Lag      struct {
				Head        int64     `json:"head"`
				Relays      []lagPart `json:"relays"`
				Projections []lagPart `json:"projections"`
			} `json:"lag"`
		}
		// The relay and both projections catch up with everything (each
		// lag part then shows acme's head and nothing behind).
		var o overview
		eventually.True(t, 60*time.Second, "the overview to show everything caught up", func() bool {
			o = apitest.Data[overview](t, h.Call(http.MethodGet, "/api/v1/console/overview", acme.Key, ""))
			for _, p := range append(o.Lag.Relays, o.Lag.Projections...) {
				if p.BehindEvents != 0 {
					return false
				}
			}
			return len(o.Lag.Projections) == 2
		})
		if o.Position != acmeHead || o.Lag.Head != acmeHead {
			t.Errorf("overview position %d, lag head %d; want acme's head %d (platform: %d)", o.Position, o.Lag.Head, acmeHead, head)
		}
		for _, p := range append(o.Lag.Relays, o.Lag.Projections...) {
			if p.Position != acmeHead {
				t.Errorf("%s at %d, want acme's last event under its checkpoint, %d", p.Name, p.Position, acmeHead)
			}
		}
		// Behind counts the client's own events only: a relay whose
		// checkpoint is just before acme's two deposits is two behind,
		// however many of busy's come after.
		var first int64
		if err := h.Pool.QueryRow(context.Background(), `SELECT min(position) FROM events
			WHERE split_part(stream_id, ':', 2) = $1`, acme.ID).Scan(&first); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Pool.Exec(context.Background(), `INSERT INTO relay_checkpoints (name, tx_id, position) VALUES ('held-back', '0', $1)`,
			first-1); err != nil {
			t.Fatal(err)
		}
		lag, err := gatewaystore.NewLag(h.Pool).ClientLag(context.Background(), acme.ID)
		if err != nil {
			t.Fatal(err)
		}
		var held *gateway.RelayLag
		for i := range lag.Relays {
			if lag.Relays[i].Name == "held-back" {
				held = &lag.Relays[i]
			}
		}
		if held == nil || held.BehindEvents != 2 || held.Position != 0 || held.OldestUnpublishedAt == nil || held.LastPublishedAt != nil {
			t.Errorf("a relay held back before acme's events: %+v, want 2 behind at position 0", held)
		}
	})
	t.Run("last verification", func(t *testing.T) {
		rep, err := h.Audit.Verify(context.Background(), auditstore.VerifyOptions{SkipReadModels: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Audit.SaveRun(context.Background(), rep); err != nil {
			t.Fatal(err)
		}
		var hash []byte
		if err := h.Pool.QueryRow(context.Background(), `SELECT hash FROM events WHERE position = $1`, acmeHead).Scan(&hash); err != nil {
			t.Fatal(err)
		}
		rec := h.Call(http.MethodGet, "/api/v1/audit/head", acme.Key, "")
		var env struct {
			Data struct {
				LastVerify struct {
					OK           bool              `json:"ok"`
					Events       *int64            `json:"events"`
					HeadPosition *int64            `json:"head_position"`
					HeadHash     *string           `json:"head_hash"`
					Checks       []json.RawMessage `json:"checks"`
				} `json:"last_verify"`
			} `json:"data"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
			t.Fatal(err)
		}
		v := env.Data.LastVerify
		if !v.OK || v.Events == nil || *v.Events != 2 || v.HeadPosition == nil || *v.HeadPosition != acmeHead ||
			v.HeadHash == nil || *v.HeadHash != hex.EncodeToString(hash) {
			t.Errorf("last verify %s; want acme's 2 events up to %d (the run verified %d events up to %d)",
				rec.Body, acmeHead, rep.Events, rep.HeadPosition)
		}
		if len(v.Checks) == 0 {
			t.Fatal("no checks")
		}
		for _, c := range v.Checks {
			// The row counts and notes are the platform's: not shown.
			if s := string(c); strings.Contains(s, `"rows"`) || strings.Contains(s, `"note"`) {
				t.Errorf("check %s shows the platform's counts", s)
			}
		}
	})
}
