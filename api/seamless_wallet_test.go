package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/operatorsim"
	"github.com/pitboss/pitboss/schemas"
	"github.com/pitboss/pitboss/wallet"
)

// seamless is a seamless client of a harness whose own wallet is an
// operator simulator on loopback, one of its players launched into a
// session of the harness's provider (on our own protocol).
type seamless struct {
	h       *slHarness
	sim     *operatorsim.Sim
	client  apitest.Client
	player  string
	token   string
	session string
	wallet  domain.AccountID
	// moves counts the movements sent to the operator (its POSTs).
	moves atomic.Int64
}

const seamlessAPIToken = "pam-api-token-for-the-seamless-tests-0123"

func newSeamless(t *testing.T, h *slHarness, balance string) *seamless {
	t.Helper()
	sim, err := operatorsim.New(operatorsim.Config{Protocol: operatorsim.ProtocolValkyriePAM, APIToken: seamlessAPIToken,
		StatePath: t.TempDir() + "/sim.json"})
	if err != nil {
		t.Fatal(err)
	}
	s := &seamless{h: h, sim: sim, player: apitest.UID("player")}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !strings.HasPrefix(r.URL.Path, "/_sim/") {
			s.moves.Add(1)
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.client = h.NewClient(gateway.ScopeLaunch, gateway.ScopeTransactionsRead)
	token, err := sim.AddPlayer(s.player, "EUR", balance)
	if err != nil {
		t.Fatal(err)
	}
	s.token = token
	if err := h.Operators.SetClientWallet(context.Background(), s.client.ID, gateway.ClientWallet{
		Mode: gateway.WalletModeSeamless, URL: srv.URL, Protocol: gateway.OperatorProtocolValkyriePAM,
		Credential: seamlessAPIToken}); err != nil {
		t.Fatal(err)
	}
	rec := h.Call(http.MethodPost, "/api/v1/game/launch", s.client.Key, map[string]string{"provider": h.provider,
		"game_id": h.game, "player_id": s.player, "currency": "EUR", "session_token": token})
	s.session = apitest.Data[apitest.Launch](t, rec).SessionID
	s.wallet = domain.PlayerWallet(s.client.ID, s.player, slEUR)
	return s
}

func (s *seamless) call(op string, fields map[string]any) *httptest.ResponseRecorder {
	body := map[string]any{"session_id": s.session}
	for k, v := range fields {
		body[k] = v
	}
	return s.h.WalletCall(s.h.provider, s.h.providerSecret, op, body)
}

// agree checks that the operator's balance, the ledger's mirror of it
// and want are one amount.
func (s *seamless) agree(t *testing.T, want string) {
	t.Helper()
	op, err := s.sim.Balance(s.player, "EUR")
	if err != nil {
		t.Fatal(err)
	}
	if op.String() != want {
		t.Fatalf("the operator's balance is %s, want %s", op, want)
	}
	if got := domain.FromMinor(s.h.Balance(s.wallet), slEUR).String(); got != want {
		t.Fatalf("the ledger's mirror is %s, want %s", got, want)
	}
}

type seamlessReconciliation struct {
	Checked     int `json:"checked"`
	Matched     int `json:"matched"`
	Differences []struct {
		TransactionID string `json:"transaction_id"`
		Problem       string `json:"problem"`
	} `json:"differences"`
}

// pamCancel cancels the debit id at the operator, as its back office
// would, through its own PAM API.
func (s *seamless) pamCancel(t *testing.T, id string) {
	t.Helper()
	body := `{"currency":"EUR","provider":"` + s.h.provider + `","transactionType":"CANCEL","cashAmount":0,` +
		`"bonusAmount":0,"promoAmount":0,"transactionDateTime":"2026-03-14T15:09:26Z","providerTransactionId":"` + id + `"}`
	req := httptest.NewRequest(http.MethodPost, "/players/"+s.player+"/transactions?provider="+s.h.provider, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+seamlessAPIToken)
	req.Header.Set("X-Player-Token", s.token)
	req.Header.Set("X-Correlation-ID", "back-office")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.sim.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"OK"`) {
		t.Fatalf("cancel at the operator: %d %s", rec.Code, rec.Body)
	}
}

type followUps struct {
	FollowUps []struct {
		Action  string `json:"action"`
		MoveID  string `json:"move_id"`
		State   string `json:"state"`
		Outcome string `json:"outcome"`
	} `json:"follow_ups"`
}

// bodiesMatchTheirSchemas validates every event of the player's stream,
// mirror legs and operator ids included, against its published schema.
func (s *seamless) bodiesMatchTheirSchemas(t *testing.T) {
	t.Helper()
	set, err := schemas.Compile()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.h.Pool.Query(context.Background(), `SELECT event_type, body::text FROM events WHERE stream_id = $1`,
		string(s.wallet))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var typ, body string
		if err := rows.Scan(&typ, &body); err != nil {
			t.Fatal(err)
		}
		if err := set.Validate(schemas.Event(typ), []byte(body)); err != nil {
			t.Fatalf("%s: %v\n%s", typ, err, body)
		}
		n++
	}
	if err := rows.Err(); err != nil || n == 0 {
		t.Fatalf("%d events (%v)", n, err)
	}
}

// TestSeamlessWallet: a seamless client's player plays on our protocol;
// every bet, win and rollback is decided by the client's own wallet (the
// operator simulator, valkyrie-pam) and recorded by the ledger, whose
// mirror of the player's wallet is the operator's balance after every
// call.
func TestSeamlessWallet(t *testing.T) {
	t.Parallel()
	h := newSLHarnessWith(t, func(o *apitest.Options) { o.AllowPrivateCallbacks, o.AdminToken = true, admToken })

	t.Run("bet, win, rollback and a retry, decided by the operator", func(t *testing.T) {
		s := newSeamless(t, h, "100.00")
		bet := map[string]any{"transaction_id": "bet-1", "round_id": "r1", "amount": "10.00"}
		first := wantOK(t, s.call("bet", bet), "90.00")
		s.agree(t, "90.00")
		if again := wantOK(t, s.call("bet", bet), "90.00"); !again.Replayed || again.TransactionID != first.TransactionID {
			t.Fatalf("retry %+v, want the original replayed", again)
		}
		s.agree(t, "90.00")
		wantOK(t, s.call("win", map[string]any{"transaction_id": "win-1", "round_id": "r1", "amount": "25.00",
			"reference_transaction_id": "bet-1"}), "115.00")
		s.agree(t, "115.00")
		wantOK(t, s.call("bet", map[string]any{"transaction_id": "bet-2", "round_id": "r2", "amount": "5.00"}), "110.00")
		wantOK(t, s.call("rollback", map[string]any{"transaction_id": "rb-2", "reference_transaction_id": "bet-2",
			"round_id": "r2"}), "115.00")
		s.agree(t, "115.00")
		bets := h.Events(s.wallet, domain.EventBetPlaced)
		if len(bets) != 2 || bets[0].Data.OperatorTxID == "" || bets[0].Data.BalanceAfter != "90.00" {
			t.Fatalf("bet events %+v: want the operator's id and balance", bets)
		}
		if n := len(s.sim.Transactions()); n != 4 {
			t.Fatalf("the operator booked %d movements, want 4 (two bets, a win, a cancel)", n)
		}
		s.bodiesMatchTheirSchemas(t)
	})
	t.Run("the operator's no is the protocol's refusal, and nothing is booked", func(t *testing.T) {
		s := newSeamless(t, h, "5.00")
		wantError(t, s.call("bet", map[string]any{"transaction_id": "big", "round_id": "r1", "amount": "10.00"}),
			http.StatusBadRequest, wire.CodeInsufficientFunds, false)
		if n := len(h.Events(s.wallet, domain.EventBetPlaced)); n != 0 {
			t.Fatalf("%d bets booked", n)
		}
		op, _ := s.sim.Balance(s.player, "EUR")
		if op.String() != "5.00" {
			t.Fatalf("the operator's balance is %s", op)
		}
	})
	t.Run("what the ledger refuses is never sent: a win in a rolled-back round, a rollback of a settled bet", func(t *testing.T) {
		s := newSeamless(t, h, "100.00")
		wantOK(t, s.call("bet", map[string]any{"transaction_id": "b1", "round_id": "r1", "amount": "10.00"}), "90.00")
		wantOK(t, s.call("rollback", map[string]any{"transaction_id": "rb1", "reference_transaction_id": "b1",
			"round_id": "r1"}), "100.00")
		wantOK(t, s.call("bet", map[string]any{"transaction_id": "b2", "round_id": "r2", "amount": "10.00"}), "90.00")
		wantOK(t, s.call("win", map[string]any{"transaction_id": "w2", "round_id": "r2", "amount": "5.00"}), "95.00")
		sent := s.moves.Load()
		wantError(t, s.call("win", map[string]any{"transaction_id": "w1", "round_id": "r1", "amount": "30.00"}),
			http.StatusConflict, wire.CodeBetRolledBack, false)
		wantError(t, s.call("rollback", map[string]any{"transaction_id": "rb2", "reference_transaction_id": "b2",
			"round_id": "r2"}), http.StatusConflict, wire.CodeBetSettled, false)
		if n := s.moves.Load(); n != sent {
			t.Fatalf("%d movements sent for calls the ledger refuses", n-sent)
		}
		s.agree(t, "95.00")
	})
	t.Run("a day's movements reconciled with the operator's lookup", func(t *testing.T) {
		s := newSeamless(t, h, "100.00")
		wantOK(t, s.call("bet", map[string]any{"transaction_id": "b1", "round_id": "r1", "amount": "10.00"}), "90.00")
		wantOK(t, s.call("win", map[string]any{"transaction_id": "w1", "round_id": "r1", "amount": "4.00",
			"reference_transaction_id": "b1"}), "94.00")
		wantOK(t, s.call("bet", map[string]any{"transaction_id": "b2", "round_id": "r2", "amount": "5.00"}), "89.00")
		wantOK(t, s.call("rollback", map[string]any{"transaction_id": "rb2", "reference_transaction_id": "b2",
			"round_id": "r2"}), "94.00")
		wantOK(t, s.call("bet", map[string]any{"transaction_id": "b3", "round_id": "r3", "amount": "2.00"}), "92.00")
		path := "/admin/v1/clients/" + s.client.ID + "/seamless/reconciliation?day=" + slTestNow.Format(time.DateOnly)
		rep := apitest.Data[seamlessReconciliation](t, h.Admin(http.MethodGet, path, nil))
		if rep.Checked != 5 || rep.Matched != 5 || len(rep.Differences) != 0 {
			t.Fatalf("reconciliation %+v, want 5 checked and matched", rep)
		}
		// The operator cancels b3 on its own: the ledger still holds it.
		s.pamCancel(t, "b3")
		rep = apitest.Data[seamlessReconciliation](t, h.Admin(http.MethodGet, path, nil))
		if rep.Checked != 5 || rep.Matched != 4 || len(rep.Differences) != 1 ||
			rep.Differences[0].TransactionID != "b3" || rep.Differences[0].Problem != wallet.ProblemCancelled {
			t.Fatalf("reconciliation %+v, want b3 named cancelled at the operator", rep)
		}
		apitest.WantError(t, h.Admin(http.MethodGet, "/admin/v1/clients/"+s.client.ID+"/seamless/reconciliation?day=March",
			nil), http.StatusBadRequest, wire.CodeInvalidRequest)
		ledger := h.NewClient(gateway.ScopeLaunch)
		apitest.WantError(t, h.Admin(http.MethodGet, "/admin/v1/clients/"+ledger.ID+"/seamless/reconciliation?day=2026-03-14",
			nil), http.StatusBadRequest, wire.CodeInvalidRequest)
	})
	t.Run("history, balances and GGR read a seamless client as any", func(t *testing.T) {
		s := newSeamless(t, h, "100.00")
		wantOK(t, s.call("bet", map[string]any{"transaction_id": "b1", "round_id": "r1", "amount": "10.00"}), "90.00")
		wantOK(t, s.call("win", map[string]any{"transaction_id": "w1", "round_id": "r1", "amount": "25.50",
			"reference_transaction_id": "b1"}), "115.50")
		key, _ := h.IssueKey(s.client.ID, gateway.ScopeTransactionsRead, gateway.ScopeWalletRead, gateway.ScopeReportsRead)
		h.Pump()
		type row struct {
			Type         string `json:"type"`
			ExternalTxID string `json:"external_id"`
		}
		seen := map[string]bool{}
		for _, r := range apitest.Data[[]row](t, h.Get("/api/v1/transactions?player_id="+s.player, key)) {
			seen[r.Type+" "+r.ExternalTxID] = true
		}
		if !seen["bet b1"] || !seen["win w1"] {
			t.Fatalf("history %v, want the bet b1 and the win w1", seen)
		}
		if rec := h.Get("/api/v1/wallet/balance?player_id="+s.player+"&currency=EUR", key); rec.Code != http.StatusOK ||
			!strings.Contains(rec.Body.String(), "115.5") {
			t.Fatalf("balance: %d %s", rec.Code, rec.Body)
		}
		if rec := h.Get("/api/v1/reports/ggr", key); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "-15.5") {
			t.Fatalf("GGR (10.00 staked, 25.50 won): %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("the player spent elsewhere: the mirror follows the operator", func(t *testing.T) {
		s := newSeamless(t, h, "100.00")
		wantOK(t, s.call("bet", map[string]any{"transaction_id": "b1", "round_id": "r1", "amount": "10.00"}), "90.00")
		if _, err := s.sim.AddPlayer(s.player, "EUR", "50.00"); err != nil { // a deposit at the operator
			t.Fatal(err)
		}
		wantOK(t, s.call("bet", map[string]any{"transaction_id": "b2", "round_id": "r2", "amount": "10.00"}), "130.00")
		s.agree(t, "130.00")
	})
	t.Run("an unknown debit is voided: cancelled at the operator, the bet refused from then on", func(t *testing.T) {
		s := newSeamless(t, h, "100.00")
		if err := s.sim.SetFaults(operatorsim.Faults{LostAnswer: operatorsim.Rule{Every: 1}, LostAnswerStatus: 502}); err != nil {
			t.Fatal(err)
		}
		bet := map[string]any{"transaction_id": "lost", "round_id": "r1", "amount": "10.00"}
		wantError(t, s.call("bet", bet), http.StatusInternalServerError, wire.CodeInternal, true)
		if err := s.sim.SetFaults(operatorsim.Faults{}); err != nil {
			t.Fatal(err)
		}
		if op, _ := s.sim.Balance(s.player, "EUR"); op.String() != "90.00" {
			t.Fatalf("the operator applied the lost debit: %s, want 90.00", op)
		}
		wantError(t, s.call("bet", bet), http.StatusConflict, wire.CodeRolledBackEarlier, false)
		if n := h.SettleFollowUps(); n != 0 {
			t.Fatalf("%d follow-ups settled before their grace", n)
		}
		pending := apitest.Data[followUps](t, h.Admin(http.MethodGet, "/admin/v1/seamless/follow-ups?client_id="+s.client.ID, nil))
		if len(pending.FollowUps) != 1 || pending.FollowUps[0].Action != "cancel" || pending.FollowUps[0].MoveID != "lost" ||
			pending.FollowUps[0].State != "pending" {
			t.Fatalf("pending follow-ups %+v", pending)
		}
		metrics := h.Get("/metrics", "").Body.String()
		if !strings.Contains(metrics, "pitboss_seamless_followups_pending ") {
			t.Fatalf("no follow-up backlog in /metrics")
		}
		h.Clock.Advance(wallet.FollowUpGrace + time.Second)
		if n := h.SettleFollowUps(); n < 1 {
			t.Fatal("the cancel was not settled")
		}
		all := apitest.Data[followUps](t, h.Admin(http.MethodGet, "/admin/v1/seamless/follow-ups?state=all&client_id="+s.client.ID, nil))
		if len(all.FollowUps) != 1 || all.FollowUps[0].State != "settled" || all.FollowUps[0].Outcome != wallet.OutcomeCancelled {
			t.Fatalf("settled follow-ups %+v", all)
		}
		if op, _ := s.sim.Balance(s.player, "EUR"); op.String() != "100.00" {
			t.Fatalf("the operator's balance is %s after the cancel, want 100.00", op)
		}
		if n := len(h.Events(s.wallet, domain.EventBetPlaced)); n != 0 {
			t.Fatalf("%d bets booked", n)
		}
		wantError(t, s.call("bet", bet), http.StatusConflict, wire.CodeRolledBackEarlier, false)
		// The provider's own rollback of the bet it was told failed is
		// accepted, and sends nothing.
		before := len(s.sim.Transactions())
		wantOK(t, s.call("rollback", map[string]any{"transaction_id": "rb-lost", "reference_transaction_id": "lost",
			"round_id": "r1"}), "100.00")
		if n := len(s.sim.Transactions()); n != before {
			t.Fatalf("the rollback sent %d movements", n-before)
		}
		s.agree(t, "100.00")
		s.bodiesMatchTheirSchemas(t)
	})
	t.Run("an unknown credit is re-sent under its id until acknowledged, then booked", func(t *testing.T) {
		s := newSeamless(t, h, "100.00")
		wantOK(t, s.call("bet", map[string]any{"transaction_id": "b1", "round_id": "r1", "amount": "10.00"}), "90.00")
		if err := s.sim.SetFaults(operatorsim.Faults{LostAnswer: operatorsim.Rule{Every: 1}, LostAnswerStatus: 502}); err != nil {
			t.Fatal(err)
		}
		win := map[string]any{"transaction_id": "w1", "round_id": "r1", "amount": "30.00", "reference_transaction_id": "b1"}
		wantError(t, s.call("win", win), http.StatusInternalServerError, wire.CodeInternal, true)
		if err := s.sim.SetFaults(operatorsim.Faults{}); err != nil {
			t.Fatal(err)
		}
		h.Clock.Advance(wallet.FollowUpGrace + time.Second)
		if n := h.SettleFollowUps(); n < 1 {
			t.Fatal("the re-send was not settled")
		}
		s.agree(t, "120.00")
		// The provider's retry is the booked win, replayed.
		if a := wantOK(t, s.call("win", win), "120.00"); !a.Replayed {
			t.Fatalf("retry %+v, want replayed", a)
		}
		if n := len(h.Events(s.wallet, domain.EventWinCredited)); n != 1 {
			t.Fatalf("%d wins booked, want 1", n)
		}
	})
}
