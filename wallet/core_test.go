package wallet_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// catalog is a Catalog over a map of games; the game "down" fails as a
// store would.
type catalog struct {
	providers map[string]gateway.Provider
	games     map[string]gateway.Game
}

func (c catalog) Provider(_ context.Context, id string) (gateway.Provider, error) {
	if id == "down" {
		return gateway.Provider{}, errors.New("database down")
	}
	p, ok := c.providers[id]
	if !ok {
		return gateway.Provider{}, domain.ErrNotFound
	}
	return p, nil
}

func (c catalog) Game(_ context.Context, id string) (gateway.Game, error) {
	if id == "down" {
		return gateway.Game{}, errors.New("database down")
	}
	g, ok := c.games[id]
	if !ok {
		return gateway.Game{}, domain.ErrNotFound
	}
	return g, nil
}

func (c catalog) ProviderGame(_ context.Context, provider, code string) (gateway.Game, error) {
	var found []gateway.Game
	for _, g := range c.games {
		if g.ProviderID == provider && g.Code == code {
			found = append(found, g)
		}
	}
	switch len(found) {
	case 0:
		return gateway.Game{}, domain.ErrNotFound
	case 1:
		return found[0], nil
	}
	return gateway.Game{}, gateway.ErrAmbiguousGameCode
}

// sessions is a Sessions over a map; newer names the superseded sessions.
type sessions struct {
	byID  map[string]gateway.GameSession
	newer map[string]bool
}

func (s sessions) CreateSession(context.Context, gateway.GameSession) error { return nil }

func (s sessions) Session(_ context.Context, id string) (gateway.GameSession, error) {
	g, ok := s.byID[id]
	if !ok {
		return gateway.GameSession{}, domain.ErrNotFound
	}
	return g, nil
}

func (s sessions) Superseded(_ context.Context, g gateway.GameSession) (bool, error) {
	return s.newer[g.ID], nil
}

// newCore is the core over a catalog of three providers (acme on caleta,
// off disabled, rival on ours) and their games, and one session of acme's.
func newCore() *wallet.Core {
	cat := catalog{
		providers: map[string]gateway.Provider{
			"acme":  {ID: "acme", Enabled: true, WalletProtocol: gateway.WalletProtocolCaleta},
			"off":   {ID: "off", Enabled: false, WalletProtocol: gateway.WalletProtocolCaleta},
			"rival": {ID: "rival", Enabled: true},
		},
		games: map[string]gateway.Game{
			"slot":  {ID: "slot", ProviderID: "acme", Code: "acme_slot_96"},
			"table": {ID: "table", ProviderID: "acme", Code: "acme_table_7"},
			"twin1": {ID: "twin1", ProviderID: "acme", Code: "twin"},
			"twin2": {ID: "twin2", ProviderID: "acme", Code: "twin"},
			"other": {ID: "other", ProviderID: "rival", Code: "rival_slot"},
		},
	}
	ss := sessions{byID: map[string]gateway.GameSession{
		"s1": {ID: "s1", ClientID: "c", PlayerID: "p", ProviderID: "acme", GameID: "slot", Currency: "EUR"},
	}}
	return wallet.New(wallet.Deps{Catalog: cat, Sessions: ss, Ledger: &commands.Handler{}, Balances: noBalances{}})
}

type noBalances struct{}

func (noBalances) Account(context.Context, domain.AccountID) (domain.AccountState, error) {
	return domain.AccountState{}, nil
}

func TestCaller(t *testing.T) {
	core := newCore()
	tests := []struct {
		name, id, protocol string
		want               wallet.Verdict
		known              bool
	}{
		{"the provider on its protocol", "acme", gateway.WalletProtocolCaleta, wallet.Accepted, true},
		{"any protocol asked", "rival", "", wallet.Accepted, true},
		{"on another protocol", "rival", gateway.WalletProtocolCaleta, wallet.Unauthenticated, true},
		{"disabled", "off", gateway.WalletProtocolCaleta, wallet.Unauthenticated, true},
		{"unknown", "ghost", gateway.WalletProtocolCaleta, wallet.Unauthenticated, true},
		{"none named", "", gateway.WalletProtocolCaleta, wallet.Unauthenticated, true},
		{"a store failure is a fault", "down", gateway.WalletProtocolCaleta, wallet.Fault, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := core.Caller(context.Background(), tt.id, tt.protocol)
			if v, known := wallet.VerdictOf(err); v != tt.want || known != tt.known {
				t.Fatalf("Caller(%q, %q): %v (%s, known %v), want %s", tt.id, tt.protocol, err, v, known, tt.want)
			}
		})
	}
}

func TestSession(t *testing.T) {
	core := newCore()
	acme, rival := gateway.Provider{ID: "acme"}, gateway.Provider{ID: "rival"}
	tests := []struct {
		name          string
		prov          gateway.Provider
		token, player string
		want          wallet.Verdict
	}{
		{"the session", acme, "s1", "", wallet.Accepted},
		{"its player named", acme, "s1", "p", wallet.Accepted},
		{"another player named", acme, "s1", "q", wallet.WrongPlayer},
		{"another provider's session", rival, "s1", "", wallet.UnknownSession},
		{"no such session", acme, "s2", "", wallet.UnknownSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := core.Session(context.Background(), tt.prov, tt.token, tt.player)
			if v, _ := wallet.VerdictOf(err); v != tt.want {
				t.Fatalf("Session: %v (%s), want %s", err, v, tt.want)
			}
			if (tt.want == wallet.Accepted || tt.want == wallet.WrongPlayer) && (s.ID != "s1" || s.Cur.Code() != "EUR") {
				t.Fatalf("session %+v, want s1 in EUR (a wrong player still tells the session)", s)
			}
		})
	}
	s, _ := core.Session(context.Background(), acme, "s1", "")
	if v, _ := wallet.VerdictOf(s.SameCurrency("USD")); v != wallet.WrongCurrency {
		t.Fatalf("USD in an EUR session: %s", v)
	}
	if err := s.SameCurrency("EUR"); err != nil {
		t.Fatal(err)
	}
}

// TestGame: the game a call is booked under — the session's own, or any
// game of the session's provider by our id or by its provider code.
func TestGame(t *testing.T) {
	core := newCore()
	sess := wallet.Session{GameSession: gateway.GameSession{ID: "s1", ProviderID: "acme", GameID: "slot"}}
	tests := []struct {
		name, code, want string
		verdict          wallet.Verdict
	}{
		{"no code: the session's game", "", "slot", wallet.Accepted},
		{"the session's game by our id", "slot", "slot", wallet.Accepted},
		{"the session's game by its provider code", "acme_slot_96", "slot", wallet.Accepted},
		{"another game of the provider by our id", "table", "table", wallet.Accepted},
		{"another game of the provider by its provider code", "acme_table_7", "table", wallet.Accepted},
		{"a code two games of the provider share", "twin", "", wallet.InvalidGame},
		{"a game of another provider by our id", "other", "", wallet.InvalidGame},
		{"a game of another provider by its code", "rival_slot", "", wallet.InvalidGame},
		{"a game the catalog lacks", "ghost", "", wallet.InvalidGame},
		{"a store failure is a fault", "down", "", wallet.Fault},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := core.Game(context.Background(), sess, tt.code)
			if v, _ := wallet.VerdictOf(err); got != tt.want || v != tt.verdict {
				t.Fatalf("Game(%q) = %q, %v (%s); want %q, %s", tt.code, got, err, v, tt.want, tt.verdict)
			}
		})
	}
}

// TestVerdictOf: every rule of money's error has its verdict, wrapped or
// not; anything else is a fault, and unknown.
func TestVerdictOf(t *testing.T) {
	tests := []struct {
		err   error
		want  wallet.Verdict
		known bool
	}{
		{nil, wallet.Accepted, true},
		{wallet.Refuse(wallet.InvalidGame, "x"), wallet.InvalidGame, true},
		{fmt.Errorf("bet: %w", domain.ErrInsufficientFunds), wallet.InsufficientFunds, true},
		{fmt.Errorf("bet: %w", commands.ErrSessionExpired), wallet.SessionExpired, true},
		{&domain.IdempotencyConflictError{Key: "k", Field: "amount"}, wallet.Duplicate, true},
		{fmt.Errorf("x: %w", domain.ErrDuplicateTransaction), wallet.Duplicate, true},
		{fmt.Errorf("x: %w", domain.ErrTransactionUnknown), wallet.UnknownTransaction, true},
		{fmt.Errorf("x: %w", domain.ErrPlayerMismatch), wallet.ForeignTransaction, true},
		{fmt.Errorf("x: %w", domain.ErrBetRolledBack), wallet.RolledBack, true},
		{fmt.Errorf("x: %w", domain.ErrRolledBackEarlier), wallet.RolledBackEarlier, true},
		{fmt.Errorf("x: %w", domain.ErrAlreadyRolledBack), wallet.AlreadyRolledBack, true},
		{fmt.Errorf("x: %w", domain.ErrBetSettled), wallet.Settled, true},
		{fmt.Errorf("x: %w", domain.ErrNotRollbackable), wallet.NotRollbackable, true},
		{fmt.Errorf("x: %w", domain.ErrCurrencyMismatch), wallet.WrongCurrency, true},
		{fmt.Errorf("x: %w", domain.ErrTooPrecise), wallet.InvalidAmount, true},
		{&gateway.FieldError{Field: "f", Message: "m"}, wallet.InvalidRequest, true},
		{errors.New("connection refused"), wallet.Fault, false},
	}
	for _, tt := range tests {
		if v, known := wallet.VerdictOf(tt.err); v != tt.want || known != tt.known {
			t.Errorf("VerdictOf(%v) = %s (known %v), want %s (known %v)", tt.err, v, known, tt.want, tt.known)
		}
	}
	for _, v := range wallet.Verdicts() {
		if v.String() == "verdict(?)" {
			t.Errorf("verdict %d has no name", int(v))
		}
	}
}
