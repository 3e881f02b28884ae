package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/adapters/projector/projectortest"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
)

// TestMinPositionBeyondHead: a min_position beyond the event store's head
// can never be reached, so it is 400 POSITION_BEYOND_HEAD at once (no
// wait) with details.head; a position that is committed but not yet
// applied by the read model keeps waiting and is 503 READ_MODEL_BEHIND
// after the wait, and one the read model has reached is 200.
func TestMinPositionBeyondHead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, _ := pgtest.NewDatabase(t)
	ledger, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	lctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ledger.Run(lctx) }()
	t.Cleanup(func() { stop(); <-done })
	clock := &projectortest.Clock{}
	if _, err := projectortest.Session(ctx, commands.NewHandler(ledger, clock, projectortest.IDs{}), clock); err != nil {
		t.Fatal(err)
	}
	head, _, err := eventstore.NewAccounts(pool).Head(ctx)
	if err != nil || head < 2 {
		t.Fatalf("head %d: %v", head, err)
	}
	gw := gatewaystore.NewGateway(pool)
	if _, err := gw.CreateClient(ctx, projectortest.Client, "Acme", "sandbox"); err != nil {
		t.Fatal(err)
	}
	key, _, err := gw.IssueKey(ctx, projectortest.Client, []string{gateway.ScopeTransactionsRead, gateway.ScopeReportsRead, gateway.ScopeWalletRead}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The read models apply nothing: every committed event is "just
	// committed, not yet projected". Their watermark stays 0.
	//
	// A case that must wait is asked of a server that waits maxWait, and
	// must take at least that long. A case that must answer at once is
	// asked of a server that would wait an hour, under a request deadline
	// of 30 s: had it waited, the deadline would end the request with
	// another answer. No case depends on how fast this machine is.
	const maxWait = 400 * time.Millisecond
	rm := readstore.NewReadModels(pool)
	server := func(wait time.Duration) http.Handler {
		return api.NewServer(api.Config{DefaultEnvironment: "sandbox"}, api.Deps{Keys: gw, Wallets: gw,
			Queries: &projections.Queries{Transactions: rm, Reports: rm, Positions: rm, Ledger: eventstore.NewAccounts(pool),
				MaxWait: wait},
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Handler()
	}
	waiting, patient := server(maxWait), server(time.Hour)
	get := func(path string, waits bool) (*httptest.ResponseRecorder, time.Duration) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		srv := patient
		if waits {
			srv = waiting
		}
		start := time.Now()
		srv.ServeHTTP(rec, req)
		return rec, time.Since(start)
	}
	pos := func(n int64) string { return strconv.FormatInt(n, 10) }
	cases := []struct {
		name     string
		path     string
		status   int
		code     string
		waits    bool
		position string // X-Ledger-Position of a 200
	}{
		{"transactions: beyond the head", "/api/v1/transactions?min_position=" + pos(head+1), 400, wire.CodePositionBeyondHead, false, ""},
		{"transactions: far beyond the head", "/api/v1/transactions?min_position=999999999", 400, wire.CodePositionBeyondHead, false, ""},
		{"transactions: the head, committed but not projected", "/api/v1/transactions?min_position=" + pos(head), 503, wire.CodeReadModelBehind, true, ""},
		{"transactions: committed, not projected", "/api/v1/transactions?min_position=1", 503, wire.CodeReadModelBehind, true, ""},
		{"transactions: reached", "/api/v1/transactions?min_position=0", 200, "", false, "0"},
		{"ggr: beyond the head", "/api/v1/reports/ggr?min_position=" + pos(head+1), 400, wire.CodePositionBeyondHead, false, ""},
		{"ggr: committed, not projected", "/api/v1/reports/ggr?min_position=" + pos(head), 503, wire.CodeReadModelBehind, true, ""},
		{"commission: beyond the head", "/api/v1/reports/commission?min_position=" + pos(head+100), 400, wire.CodePositionBeyondHead, false, ""},
		{"balance: beyond the head", "/api/v1/wallet/balance?min_position=" + pos(head+1), 400, wire.CodePositionBeyondHead, false, ""},
		{"balance: the head", "/api/v1/wallet/balance?min_position=" + pos(head), 200, "", false, pos(head)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, took := get(tc.path, tc.waits)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.waits && took < maxWait {
				t.Errorf("took %v; want the whole wait of %v", took, maxWait)
			}
			if tc.status == 200 {
				if got := rec.Header().Get(api.HeaderLedgerPosition); got != tc.position {
					t.Errorf("X-Ledger-Position %q, want %q", got, tc.position)
				}
				return
			}
			var e fxError
			dec := json.NewDecoder(rec.Body)
			dec.UseNumber()
			if err := dec.Decode(&e); err != nil || e.Error.Code != tc.code {
				t.Fatalf("error %+v (%v), want code %s", e.Error, err, tc.code)
			}
			switch tc.status {
			case 400:
				if e.Error.Details["head"] != json.Number(pos(head)) || e.Error.Details["field"] != "min_position" ||
					rec.Header().Get("Retry-After") != "" {
					t.Errorf("400: details %v, Retry-After %q; want head %d, field min_position, no Retry-After",
						e.Error.Details, rec.Header().Get("Retry-After"), head)
				}
			case 503:
				if rec.Header().Get("Retry-After") != "1" || e.Error.Details["position"] != json.Number("0") {
					t.Errorf("503: details %v, Retry-After %q", e.Error.Details, rec.Header().Get("Retry-After"))
				}
			}
		})
	}
}
