package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/projector/projectortest"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// TestMinPositionBeyondHead: a min_position beyond the event store's head
// can never be reached, so it is 400 POSITION_BEYOND_HEAD at once (no
// wait) with details.head; a position that is committed but not yet
// applied by the read model keeps waiting and is 503 READ_MODEL_BEHIND
// after the wait, and one the read model has reached is 200.
func TestMinPositionBeyondHead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := &projectortest.Clock{}
	// The read models apply nothing (no Pump): every committed event is
	// "just committed, not yet projected". Their watermark stays 0.
	//
	// A case that must wait is asked of a server that waits maxWait, and
	// must take at least that long. A case that must answer at once is
	// asked of a server that would wait an hour, under a request deadline
	// of 30 s: had it waited, the deadline would end the request with
	// another answer. No case depends on how fast this machine is. The two
	// servers are two API processes on one database.
	const maxWait = 400 * time.Millisecond
	patient := apitest.New(t, apitest.Options{LedgerClock: clock, IDs: projectortest.IDs{}, ReadWait: time.Hour})
	waiting := apitest.New(t, apitest.Options{Pool: patient.Pool, ReadWait: maxWait})
	if _, err := projectortest.Session(ctx, patient.Commands, clock); err != nil {
		t.Fatal(err)
	}
	head := patient.Head()
	if head < 2 {
		t.Fatalf("head %d", head)
	}
	patient.AddClient(projectortest.Client, "sandbox")
	key, _ := patient.IssueKey(projectortest.Client, gateway.ScopeTransactionsRead, gateway.ScopeReportsRead, gateway.ScopeWalletRead)
	get := func(t *testing.T, path string, waits bool) (*httptest.ResponseRecorder, time.Duration) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		srv := patient
		if waits {
			srv = waiting
		}
		start := time.Now()
		rec := srv.With(t).Do(apitest.Request{Method: http.MethodGet, Path: path, Key: key, Context: ctx})
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
			rec, took := get(t, tc.path, tc.waits)
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
