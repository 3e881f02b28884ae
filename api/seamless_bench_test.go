package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/lookupcache"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/adapters/system"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// BenchmarkSpinLedger and BenchmarkSpinSeamless are a spin — a bet, then
// a win on it — in our protocol, in one process as BenchmarkProviderBet
// is (the real Echo server, lookup cache and group-commit ledger on
// Postgres, no network), for a ledger client and for a seamless client
// whose wallet answers at once in process (benchOperator: no HTTP, no
// latency). The difference is the seamless path's own work in Pitboss:
// the checks read before the operator is asked, the movement built and
// its answer booked with the mirror leg; the HTTP call to a real
// operator's wallet is not in it (make bench's seamless step measures
// that). cpu-µs/call is the process's CPU per wallet call:
//
//	go test -run '^$' -bench 'Spin(Ledger|Seamless)' -benchtime 5000x ./api/
func BenchmarkSpinLedger(b *testing.B) { benchSpins(b, false) }

// BenchmarkSpinSeamless: see BenchmarkSpinLedger.
func BenchmarkSpinSeamless(b *testing.B) { benchSpins(b, true) }

func benchSpins(b *testing.B, seamless bool) {
	const provider, secret = "bench-prov", "bench-provider-secret"
	handler, sessions := benchSpinWallet(b, seamless, gateway.Provider{ID: provider, Name: "Bench", Secret: secret, Enabled: true})
	prefix := benchPrefix()
	send := func(op, body string) error {
		raw := []byte(body)
		path := "/provider/v1/wallet/" + op
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Provider-Id", provider)
		req.Header.Set("X-Signature", apitest.SignV2(secret, time.Now().Unix(), http.MethodPost, path, raw))
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return fmt.Errorf("%s: status %d: %s", op, rec.Code, rec.Body)
		}
		return nil
	}
	var seq atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := seq.Add(1) - 1
			s := sessions[n%int64(len(sessions))]
			round, bet := fmt.Sprintf("r-%s-%d", prefix, n), fmt.Sprintf("b-%s-%d", prefix, n)
			err := send("bet", fmt.Sprintf(`{"session_id":%q,"transaction_id":%q,"round_id":%q,"amount":"1.00"}`, s, bet, round))
			if err == nil {
				err = send("win", fmt.Sprintf(`{"session_id":%q,"transaction_id":"w-%s-%d","round_id":%q,`+
					`"reference_transaction_id":%q,"amount":"0.50","round_closed":true}`, s, prefix, n, round, bet))
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(2*b.N), "cpu-µs/call")
	b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "calls/s")
}

// benchSpinWallet is benchWallet with the client seamless when seamless
// is set: its wallet a benchOperator, the follow-up queue on the database.
func benchSpinWallet(b *testing.B, seamless bool, prov gateway.Provider) (http.Handler, []string) {
	b.Helper()
	pool, _ := pgtest.NewDatabase(b)
	logger := slog.New(slog.DiscardHandler)
	ledger, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{}, logger)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ledger.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			b.Errorf("ledger: %v", err)
		}
	})
	box, err := secretbox.New([]byte(strings.Repeat("k", secretbox.KeySize)))
	if err != nil {
		b.Fatal(err)
	}
	gw := gatewaystore.NewGateway(pool).WithSecretBox(box)
	lookups, err := lookupcache.NewWithConfig(gw, lookupcache.Config{})
	if err != nil {
		b.Fatal(err)
	}
	const client, game = "bench-client", "bench-slot"
	h := commands.NewHandler(ledger, system.Clock{}, system.IDs{})
	deps := api.Deps{Commands: h, Balances: eventstore.NewAccounts(pool), TxRecords: eventstore.NewAccounts(pool),
		Wallets: gw, Keys: gw, Catalog: lookups, Sessions: lookups, Clock: system.Clock{}, IDs: system.IDs{}, Logger: logger}
	if seamless {
		deps.Operators = benchOperators{client: &benchOperator{balances: map[string]domain.Money{}}}
		deps.FollowUps = gatewaystore.NewFollowUps(pool)
	}
	srv := api.NewServer(api.Config{DefaultEnvironment: "sandbox"}, deps)
	if err := gw.UpsertProvider(ctx, prov); err != nil {
		b.Fatal(err)
	}
	if err := gw.UpsertGame(ctx, gateway.Game{ID: game, ProviderID: prov.ID, Name: "Bench slot", Category: "slots", Enabled: true}); err != nil {
		b.Fatal(err)
	}
	if _, err := gw.CreateClient(ctx, client, "Bench operator", "sandbox"); err != nil {
		b.Fatal(err)
	}
	eur := domain.MustCurrency("EUR")
	sessions := make([]string, 256)
	for i := range sessions {
		player := "player-" + strconv.Itoa(i)
		if !seamless {
			if _, err := h.Deposit(ctx, domain.ClientTx{Client: client, Player: player, ExternalTxID: "dep-" + player,
				Currency: eur}, domain.FromMinor(1_000_000_00, eur)); err != nil {
				b.Fatal(err)
			}
		}
		sessions[i] = "sess-" + strconv.Itoa(i)
		if err := gw.CreateSession(ctx, gateway.GameSession{ID: sessions[i], ClientID: client, PlayerID: player,
			ProviderID: prov.ID, GameID: game, Currency: "EUR", LaunchTxID: "launch-" + player, OperatorToken: "tok-" + player,
			ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			b.Fatal(err)
		}
	}
	return srv.Handler(), sessions
}

// benchOperators is every client's wallet the one given (the benchmark
// has one client).
type benchOperators struct{ client wallet.OperatorWallet }

func (o benchOperators) Operator(context.Context, string) (wallet.OperatorWallet, error) {
	return o.client, nil
}

// benchOperator is a seamless client's wallet in process that says yes at
// once: each player starts with 1,000,000.00 and its balance follows the
// movements, as a real wallet's would (so no mirror leg after the first).
type benchOperator struct {
	mu       sync.Mutex
	balances map[string]domain.Money
}

func (o *benchOperator) Session(context.Context, wallet.OperatorPlayer) (wallet.OperatorSession, error) {
	return wallet.OperatorSession{}, wallet.ErrNoSessionCall
}

func (o *benchOperator) Balance(_ context.Context, p wallet.OperatorPlayer) (domain.Money, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.balanceLocked(p), nil
}

func (o *benchOperator) balanceLocked(p wallet.OperatorPlayer) domain.Money {
	m, ok := o.balances[p.Player]
	if !ok {
		m = domain.FromMinor(1_000_000_00, p.Currency)
	}
	return m
}

func (o *benchOperator) Move(_ context.Context, m wallet.OperatorMove) (wallet.OperatorAnswer, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	bal := o.balanceLocked(m.OperatorPlayer)
	var err error
	if m.Kind == wallet.Debit {
		bal, err = bal.Sub(m.Amount)
	} else {
		bal, err = bal.Add(m.Amount)
	}
	if err != nil {
		return wallet.OperatorAnswer{}, err
	}
	o.balances[m.Player] = bal
	return wallet.OperatorAnswer{TxID: "op-" + m.ID, Balance: bal}, nil
}

func (o *benchOperator) Lookup(context.Context, wallet.OperatorMove) (wallet.OperatorAnswer, bool, error) {
	return wallet.OperatorAnswer{}, false, wallet.ErrNoLookup
}
