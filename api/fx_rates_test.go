package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
)

type fxPut struct {
	Received int64 `json:"received"`
	Written  int64 `json:"written"`
}

func putRates(t *testing.T, h *rqHarness, rates ...map[string]any) fxPut {
	t.Helper()
	return apitest.Data[fxPut](t, h.Admin(http.MethodPut, "/admin/v1/fx-rates", map[string]any{"rates": rates}))
}

func fxRate(base, quote, day, rate string) map[string]any {
	return map[string]any{"base": base, "quote": quote, "day": day, "rate": rate}
}

// TestFXRatesAdmin: exchange rates as data through the admin API, as JSON
// and as CSV; all or nothing; a rate given again replaces it; listing with
// filters.
func TestFXRatesAdmin(t *testing.T) {
	t.Parallel()
	h := newRQHarness(t)
	if got := putRates(t, h, fxRate("EUR", "USD", "2025-03-01", "1.1000"), fxRate("BTC", "EUR", "2025-03-01", "84000.5")); got != (fxPut{2, 2}) {
		t.Fatalf("first put %+v", got)
	}
	if got := putRates(t, h, fxRate("EUR", "USD", "2025-03-01", "1.1")); got != (fxPut{1, 0}) {
		t.Fatalf("the same rate again: %+v, want nothing written", got)
	}
	csv := "day,base,quote,rate\n2025-03-01,EUR,USD,1.12\n2025-03-02,EUR,USD,1.2\n"
	rec := h.Do(apitest.Request{Method: http.MethodPut, Path: "/admin/v1/fx-rates", Key: admToken, Body: csv,
		Header: map[string]string{"Content-Type": "text/csv"}})
	if got := apitest.Data[fxPut](t, rec); got != (fxPut{2, 2}) {
		t.Fatalf("CSV: %+v, want a correction and a new day", got)
	}
	type listed struct {
		Base, Quote, Day, Rate string
	}
	list := apitest.Data[[]listed](t, h.Admin(http.MethodGet, "/admin/v1/fx-rates?base=EUR&from=2025-03-01&to=2025-03-02", nil))
	if got := fmt.Sprint(list); got != "[{EUR USD 2025-03-01 1.12} {EUR USD 2025-03-02 1.2}]" {
		t.Fatalf("list %s", got)
	}

	refused := []struct {
		name        string
		body        any
		contentType string
		field       string
	}{
		{"a negative rate", map[string]any{"rates": []any{fxRate("EUR", "USD", "2025-03-03", "-1")}}, "", "rates[0].rate"},
		{"a rate as a JSON number", map[string]any{"rates": []any{map[string]any{"base": "EUR", "quote": "USD", "day": "2025-03-03", "rate": 1.1}}}, "", "rates.rate"},
		{"an unknown currency second", map[string]any{"rates": []any{fxRate("EUR", "USD", "2025-03-03", "1"), fxRate("EUR", "XXX", "2025-03-03", "1")}}, "", "rates[1].quote"},
		{"no rates", map[string]any{"rates": []any{}}, "", "rates"},
		{"a pair and day twice", map[string]any{"rates": []any{fxRate("EUR", "USD", "2025-03-03", "1"), fxRate("EUR", "USD", "2025-03-03", "2")}}, "", "rates"},
		{"a bad CSV line", "day,base,quote,rate\n2025-03-03,EUR,USD,1\n2025-03-04,EUR,USD,x\n", "text/csv", "csv"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			r := apitest.Request{Method: http.MethodPut, Path: "/admin/v1/fx-rates", Key: admToken, Body: tc.body}
			if tc.contentType != "" {
				r.Header = map[string]string{"Content-Type": tc.contentType}
			}
			rec := h.Do(r)
			e := apitest.WantError(t, rec, http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	t.Run("nothing of a refused call is stored", func(t *testing.T) {
		list := apitest.Data[[]listed](t, h.Admin(http.MethodGet, "/admin/v1/fx-rates?from=2025-03-03", nil))
		if len(list) != 0 {
			t.Fatalf("stored %v", list)
		}
	})
	t.Run("401 without the admin token", func(t *testing.T) {
		apitest.WantError(t, h.Call(http.MethodGet, "/admin/v1/fx-rates", "", nil), http.StatusUnauthorized, wire.CodeUnauthorized)
	})
	t.Run("400 on a bad day filter", func(t *testing.T) {
		e := apitest.WantError(t, h.Admin(http.MethodGet, "/admin/v1/fx-rates?from=yesterday", nil), http.StatusBadRequest, wire.CodeInvalidRequest)
		if e.Error.Details["field"] != "from" {
			t.Fatalf("details %v", e.Error.Details)
		}
	})
	// A currency filter that is no configured currency (schemathesis sent a
	// NUL byte, which PostgreSQL's text refuses: it was a 500).
	for _, tc := range []struct{ query, field string }{
		{"base=%00", "base"}, {"quote=EUR%00", "quote"}, {"base=XXQ", "base"}, {"quote=eur", "quote"},
	} {
		t.Run("400 on "+tc.query, func(t *testing.T) {
			e := apitest.WantError(t, h.Admin(http.MethodGet, "/admin/v1/fx-rates?"+tc.query, nil), http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v", e.Error.Details)
			}
		})
	}
}

// TestGGRInAReportingCurrencyOverHTTP: ?reporting_currency= converts each
// day at its rate, beside the row's own amounts; a day without a rate is a
// gap (null amounts, the day named), in JSON and CSV; totals add the
// currencies of a group.
func TestGGRInAReportingCurrencyOverHTTP(t *testing.T) {
	t.Parallel()
	h := newRQHarness(t)
	const days = "from=2025-03-01&to=2025-03-02"
	type page struct {
		Data []struct {
			Currency  string          `json:"currency"`
			GGR       json.Number     `json:"ggr"`
			Reporting json.RawMessage `json:"reporting"`
		} `json:"data"`
		Totals []struct {
			Provider   string          `json:"provider"`
			Currencies []string        `json:"currencies"`
			Reporting  json.RawMessage `json:"reporting"`
		} `json:"totals"`
	}
	get := func(t *testing.T, query string) page {
		t.Helper()
		rec := h.get("/api/v1/reports/ggr?"+query, h.full, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		return apitest.Decode[page](t, rec)
	}
	putRates(t, h, fxRate("EUR", "USD", "2025-03-01", "1.10"))

	t.Run("a day without a rate is a gap, never a zero", func(t *testing.T) {
		p := get(t, days+"&group_by=provider&reporting_currency=USD")
		if len(p.Data) != 1 || p.Data[0].GGR != "27.00" {
			t.Fatalf("rows %+v", p.Data)
		}
		want := `{"currency":"USD","complete":false,"net_bets":null,"net_wins":null,"ggr":null,"promo_ggr":null,"jackpot_ggr":null,"missing_rate_days":["2025-03-02"]}`
		if got := string(p.Data[0].Reporting); got != want {
			t.Errorf("reporting\n got %s\nwant %s", got, want)
		}
		wantTotal := `{"currency":"USD","complete":false,"net_bets":null,"net_wins":null,"ggr":null,"promo_ggr":null,"jackpot_ggr":null,"missing_rates":[{"currency":"EUR","days":["2025-03-02"]}]}`
		if len(p.Totals) != 1 || string(p.Totals[0].Reporting) != wantTotal || p.Totals[0].Provider != "prov-a" {
			t.Errorf("totals %+v\nwant %s", p.Totals, wantTotal)
		}
	})
	t.Run("each day at its rate", func(t *testing.T) {
		putRates(t, h, fxRate("USD", "EUR", "2025-03-02", "0.8")) // the inverse: 1 EUR = 1.25 USD
		p := get(t, days+"&group_by=provider&reporting_currency=USD")
		// day 1: net bets 20.00, net wins 25.00 at 1.10; day 2: 7.00, -25.00, promo -4.00 at 1.25.
		want := `{"currency":"USD","complete":true,"net_bets":30.75,"net_wins":-3.75,"ggr":34.50,"promo_ggr":-5.00,"jackpot_ggr":0.00}`
		if len(p.Data) != 1 || string(p.Data[0].Reporting) != want {
			t.Errorf("reporting %+v\nwant %s", p.Data, want)
		}
		if len(p.Totals) != 1 || string(p.Totals[0].Reporting) != want || fmt.Sprint(p.Totals[0].Currencies) != "[EUR]" {
			t.Errorf("totals %+v", p.Totals)
		}
	})
	t.Run("in the row's own currency, the amounts themselves", func(t *testing.T) {
		p := get(t, days+"&reporting_currency=EUR")
		want := `{"currency":"EUR","complete":true,"net_bets":27.00,"net_wins":0.00,"ggr":27.00,"promo_ggr":-4.00,"jackpot_ggr":0.00}`
		if len(p.Data) != 1 || string(p.Data[0].Reporting) != want {
			t.Errorf("reporting %s, want %s", p.Data[0].Reporting, want)
		}
	})
	t.Run("CSV: the reporting columns beside the row's own", func(t *testing.T) {
		rec := h.get("/api/v1/reports/ggr?from=2025-03-01&to=2025-03-03&group_by=day&reporting_currency=JPY", h.full, "text/csv")
		lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
		if rec.Code != http.StatusOK || len(lines) != 3 ||
			!strings.HasSuffix(lines[0], ",rounds,players,reporting_currency,reporting_net_bets,reporting_net_wins,reporting_ggr,reporting_promo_ggr,reporting_jackpot_ggr,missing_rate_days") ||
			!strings.HasSuffix(lines[1], ",JPY,,,,,,2025-03-01") {
			t.Errorf("status %d\n%s", rec.Code, rec.Body)
		}
	})
	t.Run("no reporting currency, no totals", func(t *testing.T) {
		rec := h.get("/api/v1/reports/ggr?"+days, h.full, "")
		if strings.Contains(rec.Body.String(), "totals") || strings.Contains(rec.Body.String(), "reporting") {
			t.Errorf("body %s", rec.Body)
		}
	})
	t.Run("400 on an unknown reporting currency", func(t *testing.T) {
		e := apitest.WantError(t, h.get("/api/v1/reports/ggr?reporting_currency=XXX", h.full, ""), http.StatusBadRequest, wire.CodeInvalidRequest)
		if e.Error.Details["field"] != "reporting_currency" {
			t.Fatalf("details %v", e.Error.Details)
		}
	})
}

// TestCommissionInAReportingCurrency: a commission row in the reporting
// currency owes max(0, the sum over its days of deal rate × GGR × that
// day's exchange rate), beside the row's own; a day without a rate is a gap.
func TestCommissionInAReportingCurrency(t *testing.T) {
	t.Parallel()
	h := newRQHarness(t)
	const days = "from=2025-03-01&to=2025-03-02"
	get := func(t *testing.T, query string) []json.RawMessage {
		t.Helper()
		rec := h.get("/api/v1/reports/commission?"+query, h.full, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		rows := apitest.Data[[]struct {
			Reporting json.RawMessage `json:"reporting"`
		}](t, rec)
		out := make([]json.RawMessage, len(rows))
		for i, r := range rows {
			out[i] = r.Reporting
		}
		return out
	}
	putRates(t, h, fxRate("EUR", "USD", "2025-03-01", "1.10"))
	t.Run("a month with a day without a rate", func(t *testing.T) {
		got := get(t, days+"&reporting_currency=USD")
		want := `{"currency":"USD","complete":false,"ggr":null,"commission":null,"missing_rate_days":["2025-03-02"]}`
		if len(got) != 1 || string(got[0]) != want {
			t.Fatalf("reporting %s, want %s", got, want)
		}
	})
	putRates(t, h, fxRate("EUR", "USD", "2025-03-02", "1.25"))
	t.Run("a month at each day's rate", func(t *testing.T) {
		// GGR -5.00 at 1.10 and 32.00 at 1.25; owed 0.10 × -5.00 × 1.10 + 0.20 × 32.00 × 1.25 = -0.55 + 8.00.
		got := get(t, days+"&reporting_currency=USD")
		want := `{"currency":"USD","complete":true,"ggr":34.50,"commission":7.45}`
		if len(got) != 1 || string(got[0]) != want {
			t.Fatalf("reporting %s, want %s", got, want)
		}
	})
	t.Run("by day: a negative day owes nothing", func(t *testing.T) {
		got := get(t, days+"&group_by=day,provider&reporting_currency=USD")
		if len(got) != 2 || string(got[0]) != `{"currency":"USD","complete":true,"ggr":-5.50,"commission":0.00}` ||
			string(got[1]) != `{"currency":"USD","complete":true,"ggr":40.00,"commission":8.00}` {
			t.Fatalf("reporting %s", got)
		}
	})
	t.Run("CSV", func(t *testing.T) {
		rec := h.get("/api/v1/reports/commission?"+days+"&reporting_currency=USD", h.full, "text/csv")
		want := "month,provider,currency,ggr,rate,rate_changed,commission,reporting_currency,reporting_ggr,reporting_commission,missing_rate_days\n" +
			"2025-03,prov-a,EUR,27.00,0.2,true,5.90,USD,34.50,7.45,\n"
		if rec.Code != http.StatusOK || rec.Body.String() != want {
			t.Fatalf("status %d\n%s\nwant\n%s", rec.Code, rec.Body, want)
		}
	})
}
