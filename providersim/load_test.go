package providersim_test

import (
	"context"
	"crypto/rsa"
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/providersim"
)

// TestLoadCalls: the load generator's single calls, in every protocol,
// against the real server: a bet and its win are booked, a retry of the
// bet is accepted again (a replay), a win on a bet never made (where the
// protocol's win names a bet) and a bet beyond the balance are refused — so a benchmark counts refusals as
// errors in any protocol, never as throughput.
func TestLoadCalls(t *testing.T) {
	for _, protocol := range providersim.Protocols {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			h := apitest.New(t, apitest.Options{})
			provider, game, player := apitest.UID("prov"), apitest.UID("game"), apitest.UID("player")
			p := gateway.Provider{ID: provider, Name: "Load " + protocol, Secret: "secret-" + apitest.UID("s"), Enabled: true,
				WalletProtocol: protocol}
			var key *rsa.PrivateKey
			if protocol == gateway.WalletProtocolCaleta {
				key, p.WalletPublicKey = rsaKey(t)
			}
			if err := h.Gateway.UpsertProvider(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			h.AddGame(game, provider, "Load slot", "slots", true)
			c := h.NewClient(gateway.ScopeLaunch, gateway.ScopeTransactionsWrite)
			h.Deposit(c, player, "100.00", "EUR")
			rec := h.Call(http.MethodPost, "/api/v1/game/launch", c.Key, apitest.LaunchBody(provider, game, player, "EUR"))
			if rec.Code != http.StatusOK {
				t.Fatalf("launch: %d %s", rec.Code, rec.Body)
			}
			sess := apitest.Data[apitest.Launch](t, rec).SessionID

			l, err := providersim.NewLoad(providersim.Config{Protocol: protocol, BaseURL: h.URL, Provider: provider,
				Secret: p.Secret, PrivateKey: key})
			if err != nil {
				t.Fatal(err)
			}
			eur, _ := domain.ParseCurrency("EUR")
			s := providersim.LoadSession{ID: sess, Player: player, Game: game, Currency: eur}
			hc := &http.Client{}
			call := func(op providersim.LoadOp, tx providersim.LoadTx, wantOK bool) providersim.LoadResult {
				t.Helper()
				r, err := l.Call(context.Background(), hc, s, op, tx)
				if err != nil {
					t.Fatal(err)
				}
				if r.OK != wantOK {
					t.Fatalf("call %d %+v: %+v, want OK %v", op, tx, r, wantOK)
				}
				return r
			}
			bet := providersim.LoadTx{ID: apitest.UID("bet"), Round: apitest.UID("round"), Amount: 100}
			first := call(providersim.LoadBet, bet, true)
			again := call(providersim.LoadBet, bet, true)
			if first.ID != again.ID {
				t.Errorf("a retried bet answered id %q, the first %q", again.ID, first.ID)
			}
			call(providersim.LoadWin, providersim.LoadTx{ID: apitest.UID("win"), Ref: bet.ID, Round: bet.Round, Amount: 250, Closed: true}, true)
			// A Red Tiger payout and a TBB win name their round, not a bet.
			if protocol != gateway.WalletProtocolRedTiger && protocol != gateway.WalletProtocolTBB {
				call(providersim.LoadWin, providersim.LoadTx{ID: apitest.UID("win"), Ref: apitest.UID("nobet"), Round: apitest.UID("r"), Amount: 1}, false)
			}
			call(providersim.LoadBet, providersim.LoadTx{ID: apitest.UID("bet"), Round: apitest.UID("r"), Amount: 1_000_000_00}, false)
		})
	}
}
