package api_test

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// roundsWallet is a session of a fresh player of a fresh client whose key
// also reads reports.
type roundsWallet struct {
	slWallet
	client apitest.Client
	player string
}

func newRoundsWallet(t *testing.T, h *slHarness, balance string) roundsWallet {
	t.Helper()
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch, gateway.ScopeReportsRead}, gateway.LaunchSettings{})
	user := apitest.UID("player")
	a := h.mustLaunch(c, user, balance, nil)
	return roundsWallet{slWallet: slWallet{h: h, session: a.SessionID, wallet: domain.PlayerWallet(c.ID, user, slEUR)},
		client: c, player: user}
}

// getRounds fetches provider's round export of day, signed by the v2
// scheme with secret at the server clock's time.
func getRounds(h *slHarness, provider, secret, day string) *httptest.ResponseRecorder {
	path := "/provider/v1/reports/rounds/" + day
	return h.Do(apitest.Request{Method: http.MethodGet, Path: path, Header: map[string]string{"X-Provider-Id": provider,
		"X-Signature": apitest.SignV2(secret, h.Clock.Now().Unix(), http.MethodGet, path, nil)}})
}

// roundLines parses an export: its lines as column → value maps, keyed
// by client and round.
func roundLines(t *testing.T, rec *httptest.ResponseRecorder) map[string]map[string]string {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	recs, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(recs[0], ","), "day,client_id,round_id,player_id,game_id,currency,bets,wins,free_bets,rollbacks,"+
		"bet_amount,bet_refunds,win_amount,win_reversals,ggr,promo_bet_amount,promo_bet_refunds,promo_win_amount,"+
		"promo_win_reversals,promo_ggr,jackpot_win_amount,jackpot_win_reversals,jackpot_ggr,status,first_at,last_at"; got != want {
		t.Fatalf("header\n%s\nwant\n%s", got, want)
	}
	out := map[string]map[string]string{}
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, col := range recs[0] {
			m[col] = r[i]
		}
		out[m["client_id"]+"/"+m["round_id"]] = m
	}
	return out
}

// TestProviderRoundExport: a provider's daily round export (issue 18 item
// 5(a)) — one line per round of the day across clients, with the day's
// bets, wins, free bets and rollbacks booked as the GGR report books them,
// so the lines add up to each client's GGR of the day; a round spanning
// midnight is on both days with each day's part.
func TestProviderRoundExport(t *testing.T) {
	h := newSLHarness(t)
	w := newRoundsWallet(t, h, "100")
	other := newRoundsWallet(t, h, "50")
	day1 := h.Clock.Now().UTC().Format(time.DateOnly)
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "b1", "round_id": "r1", "amount": "2.50"}), "97.50")
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "b2", "round_id": "r1", "amount": "1"}), "96.50")
	wantOK(t, w.call("rollback", map[string]any{"transaction_id": "rb1", "reference_transaction_id": "b2", "round_id": "r1"}), "97.50")
	wantOK(t, w.call("win", map[string]any{"transaction_id": "w1", "round_id": "r1", "amount": "4"}), "101.50")
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "fs1", "round_id": "r2", "amount": "0", "promo": true}), "101.50")
	wantOK(t, w.call("win", map[string]any{"transaction_id": "fw1", "round_id": "r2", "amount": "1.20", "promo": true,
		"round_closed": true}), "102.70")
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "solo", "amount": "0.40"}), "102.30")
	wantOK(t, other.call("bet", map[string]any{"transaction_id": "b1", "round_id": "r1", "amount": "3"}), "47.00")
	// A jackpot win: 45.00 of its 50.00 is jackpot money (reversed the next day).
	jp := newRoundsWallet(t, h, "10")
	wantOK(t, jp.call("bet", map[string]any{"transaction_id": "jb", "round_id": "r3", "amount": "1"}), "9.00")
	wantError(t, jp.call("bet", map[string]any{"transaction_id": "jb2", "round_id": "r3", "amount": "1", "jackpot": "1"}),
		http.StatusBadRequest, wire.CodeInvalidRequest, false)
	wantError(t, jp.call("win", map[string]any{"transaction_id": "jw0", "round_id": "r3", "amount": "1", "jackpot": "2"}),
		http.StatusBadRequest, wire.CodeInvalidAmount, false)
	wantOK(t, jp.call("win", map[string]any{"transaction_id": "jw", "round_id": "r3", "amount": "50", "jackpot": "45",
		"round_closed": true}), "59.00")
	// The next day: a late win of r1 and the reversal of w1.
	h.Clock.Advance(24 * time.Hour)
	day2 := h.Clock.Now().UTC().Format(time.DateOnly)
	wantOK(t, w.call("win", map[string]any{"transaction_id": "w2", "round_id": "r1", "amount": "0.50", "round_closed": true}), "102.80")
	wantOK(t, w.call("rollback", map[string]any{"transaction_id": "rb2", "reference_transaction_id": "w1", "round_id": "r1"}), "98.80")
	wantOK(t, jp.call("rollback", map[string]any{"transaction_id": "jrb", "reference_transaction_id": "jw", "round_id": "r3"}), "9.00")
	h.Pump()

	t.Run("the first day", func(t *testing.T) {
		lines := roundLines(t, getRounds(h, h.provider, h.providerSecret, day1))
		if len(lines) != 5 {
			t.Fatalf("%d lines: %v", len(lines), lines)
		}
		r1 := lines[w.client.ID+"/r1"]
		for col, want := range map[string]string{"day": day1, "player_id": w.player, "game_id": h.game, "currency": "EUR",
			"bets": "2", "wins": "1", "free_bets": "0", "rollbacks": "1", "bet_amount": "3.50", "bet_refunds": "1.00",
			"win_amount": "4.00", "win_reversals": "0.00", "ggr": "-1.50", "promo_ggr": "0.00",
			"status": "settled", "first_at": "2026-03-14T15:09:26.000Z"} {
			if r1[col] != want {
				t.Errorf("r1 %s = %q, want %q (%v)", col, r1[col], want, r1)
			}
		}
		r2 := lines[w.client.ID+"/r2"]
		for col, want := range map[string]string{"bets": "1", "free_bets": "1", "wins": "1", "bet_amount": "0.00",
			"promo_bet_amount": "0.00", "promo_win_amount": "1.20", "promo_ggr": "-1.20", "ggr": "0.00", "status": "settled"} {
			if r2[col] != want {
				t.Errorf("r2 %s = %q, want %q (%v)", col, r2[col], want, r2)
			}
		}
		r3 := lines[jp.client.ID+"/r3"]
		for col, want := range map[string]string{"win_amount": "5.00", "jackpot_win_amount": "45.00", "jackpot_win_reversals": "0.00",
			"jackpot_ggr": "-45.00", "ggr": "-4.00", "promo_ggr": "0.00"} {
			if r3[col] != want {
				t.Errorf("r3 %s = %q, want %q (%v)", col, r3[col], want, r3)
			}
		}
		solo := lines[w.client.ID+"/tx:solo"]
		if solo["bet_amount"] != "0.40" || solo["ggr"] != "0.40" || solo["status"] != "settled" {
			t.Errorf("the bet without a round: %v", solo)
		}
		if o := lines[other.client.ID+"/r1"]; o["bet_amount"] != "3.00" || o["ggr"] != "3.00" || o["status"] != "pending" {
			t.Errorf("the other client's r1: %v", o)
		}
	})
	t.Run("the second day has the round's late part", func(t *testing.T) {
		lines := roundLines(t, getRounds(h, h.provider, h.providerSecret, day2))
		r1 := lines[w.client.ID+"/r1"]
		r3 := lines[jp.client.ID+"/r3"]
		if r3["win_reversals"] != "5.00" || r3["jackpot_win_reversals"] != "45.00" || r3["jackpot_ggr"] != "45.00" || r3["ggr"] != "5.00" {
			t.Errorf("r3 reversed: %v", r3)
		}
		if len(lines) != 2 || r1["bets"] != "0" || r1["wins"] != "1" || r1["rollbacks"] != "1" || r1["win_amount"] != "0.50" ||
			r1["win_reversals"] != "4.00" || r1["ggr"] != "3.50" || r1["status"] != "settled" {
			t.Fatalf("lines %v", lines)
		}
	})
	t.Run("a day's lines add up to each client's GGR of the day", func(t *testing.T) {
		for _, day := range []string{day1, day2} {
			sum := map[string]int64{}
			for _, l := range roundLines(t, getRounds(h, h.provider, h.providerSecret, day)) {
				m, err := domain.ParseMoney(l["ggr"], domain.MustCurrency("EUR"))
				if err != nil {
					t.Fatal(err)
				}
				sum[l["client_id"]] += m.Minor()
			}
			for _, c := range []apitest.Client{w.client, other.client, jp.client} {
				rec := h.Get("/api/v1/reports/ggr?from="+day+"&to="+day+"&group_by=provider", c.Key)
				rows := apitest.Data[[]map[string]any](t, rec)
				var want int64
				for _, r := range rows {
					if r["provider"] == h.provider {
						m, err := domain.ParseMoney(string(r["ggr"].(json.Number)), domain.MustCurrency("EUR"))
						if err != nil {
							t.Fatal(err)
						}
						want += m.Minor()
					}
				}
				if sum[c.ID] != want {
					t.Errorf("%s on %s: rounds add up to %d, the GGR report says %d", c.ID, day, sum[c.ID], want)
				}
			}
		}
	})
	t.Run("a day without play is the header alone", func(t *testing.T) {
		if lines := roundLines(t, getRounds(h, h.provider, h.providerSecret, "2026-01-01")); len(lines) != 0 {
			t.Fatalf("lines %v", lines)
		}
	})
	t.Run("400 for a day that is not one", func(t *testing.T) {
		for _, d := range []string{"2026-13-01", "yesterday", "0000-01-01"} {
			e := wantError(t, getRounds(h, h.provider, h.providerSecret, d), http.StatusBadRequest, wire.CodeInvalidRequest, false)
			if e.Error.Details["field"] != "day" {
				t.Fatalf("%s: details %v", d, e.Error.Details)
			}
		}
	})
	t.Run("401", func(t *testing.T) {
		wantError(t, getRounds(h, h.provider, "not-the-secret", day1), http.StatusUnauthorized, wire.CodeInvalidSignature, false)
		wantError(t, getRounds(h, "no-such-provider", h.providerSecret, day1), http.StatusUnauthorized, wire.CodeUnauthorized, false)
		path := "/provider/v1/reports/rounds/" + day1
		wantError(t, h.Do(apitest.Request{Method: http.MethodGet, Path: path, Header: map[string]string{"X-Provider-Id": h.provider}}),
			http.StatusUnauthorized, wire.CodeInvalidSignature, false)
		// Signed for another day's path: the day is in what is signed.
		wantError(t, h.Do(apitest.Request{Method: http.MethodGet, Path: path, Header: map[string]string{"X-Provider-Id": h.provider,
			"X-Signature": apitest.SignV2(h.providerSecret, h.Clock.Now().Unix(), http.MethodGet, "/provider/v1/reports/rounds/"+day2, nil)}}),
			http.StatusUnauthorized, wire.CodeInvalidSignature, false)
	})
	t.Run("401 for a provider on scheme v1", func(t *testing.T) {
		v1 := apitest.UID("prov")
		if err := h.Gateway.UpsertProvider(t.Context(), gateway.Provider{ID: v1, Name: "Legacy", Secret: "legacy-secret",
			Enabled: true, SignatureScheme: gateway.SignatureV1}); err != nil {
			t.Fatal(err)
		}
		path := "/provider/v1/reports/rounds/" + day1
		e := wantError(t, h.Do(apitest.Request{Method: http.MethodGet, Path: path, Header: map[string]string{"X-Provider-Id": v1,
			"X-Signature": apitest.Sign("legacy-secret", nil)}}), http.StatusUnauthorized, wire.CodeInvalidSignature, false)
		if !strings.Contains(e.Error.Message, "v2") {
			t.Fatalf("message %q", e.Error.Message)
		}
	})
}
