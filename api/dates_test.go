package api_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// TestDatesOutsideTheStoresRange: a time or day the database cannot hold
// (PostgreSQL has no year 0, and a time in year 1 with a positive offset
// is in year 0 in UTC) is a 400 naming the parameter, never a 500 from the
// query; the first and last days that can be held still answer 200.
func TestDatesOutsideTheStoresRange(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	c := h.NewClient(gateway.ScopeTransactionsRead, gateway.ScopeReportsRead, gateway.ScopeWalletRead)
	q := url.QueryEscape
	tests := []struct {
		name, path, field string
	}{
		{"transactions from year 0", "/api/v1/transactions?from=" + q("0000-01-01T00:00:00Z"), "from"},
		{"transactions to year 0", "/api/v1/transactions?to=" + q("0000-06-01T00:00:00Z"), "to"},
		{"transactions from year 1 east of UTC", "/api/v1/transactions?from=" + q("0001-01-01T00:00:00+01:00"), "from"},
		{"GGR from year 0", "/api/v1/reports/ggr?from=0000-12-30&to=0001-01-05", "from"},
		{"commission to year 0", "/api/v1/reports/commission?from=0000-01-01&to=0000-01-02", "to"},
		{"console day in year 0", "/api/v1/console/overview?day=0000-03-01", "day"},
		{"usage from year 0", "/api/v1/usage?from=0000-12-31&to=0001-01-02", "from"},
		{"usage to year 10000 west of UTC", "/api/v1/usage?from=9999-12-31&to=" + q("9999-12-31T23:30:00-01:00"), "to"},
		{"usage to year 0 east of UTC", "/api/v1/usage?from=" + q("0001-01-01T00:00:00+01:00") + "&to=0001-01-02", "from"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := apitest.WantError(t, h.With(t).Get(tc.path, c.Key), http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] != tc.field {
				t.Errorf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	for _, path := range []string{
		"/api/v1/transactions?from=" + q("0001-01-01T00:00:00Z") + "&to=" + q("9999-12-31T23:59:59Z"),
		"/api/v1/reports/ggr?from=0001-01-01&to=0001-01-31",
		"/api/v1/reports/ggr?from=9999-12-01&to=9999-12-31",
		"/api/v1/console/overview?day=0001-01-01",
		"/api/v1/usage?from=0001-01-01&to=0001-01-02",
	} {
		if rec := h.Get(path, c.Key); rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	}
}
