package promo_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/promo"
)

// The service's order of work, with the ledger in memory
// (commands.MemoryLedger) and the store, catalog and provider faked: what
// is asked of the provider, when, and what the ledger books.

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

type clock struct{}

func (clock) Now() time.Time { return now }

type ids struct {
	mu sync.Mutex
	n  int
}

func (i *ids) NewID() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.n++
	return fmt.Sprintf("00000000-0000-7000-8000-%012d", i.n)
}

// store keeps campaigns and grants in maps and reads rewards from the
// memory ledger's records.
type store struct {
	mu        sync.Mutex
	campaigns map[string]promo.Campaign
	grants    map[string]promo.Grant
	ledger    *commands.MemoryLedger
}

func (s *store) CreateCampaign(_ context.Context, c promo.Campaign) (promo.Campaign, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.campaigns[c.ClientID+"/"+c.ID]; ok {
		return old, false, nil
	}
	c.CreatedAt = now
	s.campaigns[c.ClientID+"/"+c.ID] = c
	return c, true, nil
}

func (s *store) Campaign(_ context.Context, client, id string) (promo.Campaign, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.campaigns[client+"/"+id]
	if !ok {
		return c, domain.ErrNotFound
	}
	return c, nil
}

func (s *store) Campaigns(context.Context, string) ([]promo.Campaign, error) { return nil, nil }

func (s *store) SaveGrant(_ context.Context, g promo.Grant) (promo.Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.grants[g.ClientID+"/"+g.RewardID]; ok {
		return old, nil
	}
	s.grants[g.ClientID+"/"+g.RewardID] = g
	return g, nil
}

func (s *store) Grant(_ context.Context, client, reward string) (promo.Grant, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.grants[client+"/"+reward]
	return g, ok, nil
}

func (s *store) Rewards(context.Context, string, string) ([]promo.Reward, error) { return nil, nil }

func (s *store) Reward(_ context.Context, client, reward string) (promo.Reward, error) {
	rec, ok, _ := s.ledger.TxRecord(context.Background(), domain.RewardKey(client, reward))
	if !ok {
		return promo.Reward{}, domain.ErrNotFound
	}
	return promo.Reward{ClientID: client, ID: reward, CampaignID: rec.Campaign, PlayerID: rec.PlayerID,
		ProviderID: rec.Request["provider"], GameID: rec.Request["game_id"],
		BetValue: domain.FromMinor(rec.Amount, domain.MustCurrency(rec.Currency)), FreeBets: rec.FreeBets,
		Used: rec.Used, State: rec.State}, nil
}

func (s *store) RewardCounts(context.Context, string, []string) (map[string]promo.RewardCounts, error) {
	return map[string]promo.RewardCounts{}, nil
}

func (s *store) CampaignMoney(context.Context, string, []string, time.Time, time.Time) ([]promo.DayMoney, error) {
	return nil, nil
}

func (s *store) DueRewards(context.Context, time.Time, int) ([]promo.Reward, error) { return nil, nil }

func (s *store) ActiveReward(context.Context, string, string, string, string, string, time.Time) (string, bool, error) {
	return "", false, nil
}

// catalog is one provider, "prov", with one game, "slot".
type catalog struct{ protocol string }

func (c catalog) Provider(_ context.Context, id string) (gateway.Provider, error) {
	if id != "prov" {
		return gateway.Provider{}, domain.ErrNotFound
	}
	return gateway.Provider{ID: id, WalletProtocol: c.protocol, Enabled: true}, nil
}

func (catalog) ProviderRoute(_ context.Context, id string) (gateway.ProviderRoute, error) {
	return gateway.ProviderRoute{ProviderID: id}, nil
}

func (catalog) Game(_ context.Context, id string) (gateway.Game, error) {
	if id != "slot" {
		return gateway.Game{}, domain.ErrNotFound
	}
	return gateway.Game{ID: id, ProviderID: "prov", Code: "slot-code"}, nil
}

// provider records the calls and refuses what it is told to.
type provider struct {
	mu      sync.Mutex
	calls   []string
	refuse  bool
	unknown bool
}

func (p *provider) Supports(protocol string) bool { return protocol == "caleta" }

func (p *provider) note(call string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, call)
	switch {
	case p.refuse:
		return &gateway.ProviderRejectedError{Provider: "prov", Status: 409, Message: "no"}
	case p.unknown:
		return &gateway.ProviderUnavailableError{Provider: "prov", RetryAfter: time.Second}
	}
	return nil
}

func (p *provider) CreateCampaign(_ context.Context, _ promo.Target, c promo.ProviderCampaign) (string, error) {
	return "camp-uuid-" + c.GameCode, p.note("campaign " + c.CampaignID)
}

func (p *provider) GrantReward(_ context.Context, _ promo.Target, g promo.ProviderGrant) (string, error) {
	return "ref-" + g.RewardID, p.note("grant " + g.RewardID + " in " + g.CampaignRef)
}

func (p *provider) CancelReward(_ context.Context, _ promo.Target, c promo.ProviderCancel) error {
	return p.note("cancel " + c.RewardID)
}

func (p *provider) took() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

type fixture struct {
	svc    *promo.Service
	store  *store
	prov   *provider
	ledger *commands.MemoryLedger
}

func newFixture(t *testing.T, protocol string) fixture {
	t.Helper()
	l := commands.NewMemoryLedger()
	st := &store{campaigns: map[string]promo.Campaign{}, grants: map[string]promo.Grant{}, ledger: l}
	p := &provider{}
	svc := promo.NewService(st, commands.NewHandler(l, clock{}, &ids{}), catalog{protocol: protocol}, p, clock{})
	return fixture{svc: svc, store: st, prov: p, ledger: l}
}

var eur50, _ = domain.ParseMoney("0.50", domain.MustCurrency("EUR"))

var spring = promo.CampaignInput{ID: "spring", ProviderID: "prov", Games: []string{"slot"}, Currency: "EUR",
	BetValue: "0.50", FreeBets: 3, ValidUntil: now.Add(72 * time.Hour)}

func TestServiceGrantOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// before runs before the grant under test.
		before    func(t *testing.T, f fixture)
		protocol  string
		refuse    bool
		unknown   bool
		wantErr   error
		wantCalls []string
		booked    bool
		created   bool
	}{
		{name: "at the provider, then booked", protocol: "caleta",
			wantCalls: []string{"campaign spring", "grant rw-1 in camp-uuid-slot-code"}, booked: true, created: true},
		{name: "recorded only: no call", protocol: "pitboss", wantCalls: nil, booked: true, created: true},
		{name: "refused at the provider: nothing booked", protocol: "caleta", refuse: true,
			wantErr: &gateway.ProviderRejectedError{}, wantCalls: []string{"campaign spring", "grant rw-1 in camp-uuid-slot-code"}},
		{name: "provider unreachable: nothing booked", protocol: "caleta", unknown: true,
			wantErr: &gateway.ProviderUnavailableError{}, wantCalls: []string{"campaign spring", "grant rw-1 in camp-uuid-slot-code"}},
		{name: "granted at the provider before a crash: booked without asking again", protocol: "caleta",
			before: func(t *testing.T, f fixture) {
				g := domain.RewardGrant{Client: "acme", Player: "p-1", Campaign: "spring", Reward: "rw-1", Provider: "prov",
					Game: "slot", BetValue: eur50, FreeBets: 3,
					ValidFrom: now, ValidUntil: now.Add(72 * time.Hour)}
				if _, err := f.store.SaveGrant(context.Background(), promo.Grant{ClientID: "acme", RewardID: "rw-1",
					CampaignID: "spring", Request: g.Request(), ProviderRef: "ref-rw-1"}); err != nil {
					t.Fatal(err)
				}
			},
			wantCalls: []string{"campaign spring"}, booked: true, created: true},
		{name: "a retry after the booking: the original, no call", protocol: "caleta",
			before: func(t *testing.T, f fixture) {
				res, err := f.svc.Grant(context.Background(), "acme", "spring", []promo.GrantInput{{RewardID: "rw-1", PlayerID: "p-1"}})
				if err != nil || res[0].Err != nil {
					t.Fatal(err, res)
				}
			},
			wantCalls: []string{"campaign spring", "grant rw-1 in camp-uuid-slot-code"}, booked: true, created: false},
		{name: "the same id for another player", protocol: "caleta",
			before: func(t *testing.T, f fixture) {
				if _, err := f.svc.Grant(context.Background(), "acme", "spring", []promo.GrantInput{{RewardID: "rw-1", PlayerID: "p-9"}}); err != nil {
					t.Fatal(err)
				}
			},
			wantErr:   &domain.IdempotencyConflictError{},
			wantCalls: []string{"campaign spring", "grant rw-1 in camp-uuid-slot-code"}, booked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.protocol)
			ctx := context.Background()
			if _, created, err := f.svc.CreateCampaign(ctx, "acme", spring); err != nil || !created {
				t.Fatalf("campaign: %v %v", created, err)
			}
			if tt.before != nil {
				tt.before(t, f)
			}
			f.prov.refuse, f.prov.unknown = tt.refuse, tt.unknown
			res, err := f.svc.Grant(ctx, "acme", "spring", []promo.GrantInput{{RewardID: "rw-1", PlayerID: "p-1"}})
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			switch want := tt.wantErr.(type) {
			case nil:
				if r.Err != nil {
					t.Fatalf("grant: %v", r.Err)
				}
				if r.Created != tt.created {
					t.Errorf("created %v, want %v", r.Created, tt.created)
				}
			case *gateway.ProviderRejectedError:
				if !errors.As(r.Err, &want) {
					t.Fatalf("grant: %v, want a refusal", r.Err)
				}
			case *gateway.ProviderUnavailableError:
				if !errors.As(r.Err, &want) {
					t.Fatalf("grant: %v, want unavailable", r.Err)
				}
			case *domain.IdempotencyConflictError:
				if !errors.As(r.Err, &want) {
					t.Fatalf("grant: %v, want a conflict", r.Err)
				}
			}
			if got := f.prov.took(); !slices.Equal(got, tt.wantCalls) {
				t.Errorf("provider calls %q, want %q", got, tt.wantCalls)
			}
			_, booked, _ := f.ledger.TxRecord(context.Background(), domain.RewardKey("acme", "rw-1"))
			if booked != tt.booked {
				t.Errorf("booked %v, want %v", booked, tt.booked)
			}
		})
	}
}

func TestServiceCampaignRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(*promo.CampaignInput)
		field string
		err   error
	}{
		{"no id", func(c *promo.CampaignInput) { c.ID = "" }, "campaign_id", nil},
		{"an id with a space", func(c *promo.CampaignInput) { c.ID = "a b" }, "campaign_id", nil},
		{"no games", func(c *promo.CampaignInput) { c.Games = nil }, "games", nil},
		{"a game twice", func(c *promo.CampaignInput) { c.Games = []string{"slot", "slot"} }, "games", nil},
		{"an unknown currency", func(c *promo.CampaignInput) { c.Currency = "XXZ" }, "currency", nil},
		{"too precise", func(c *promo.CampaignInput) { c.BetValue = "0.505" }, "bet_value", nil},
		{"nothing", func(c *promo.CampaignInput) { c.BetValue = "0" }, "bet_value", nil},
		{"negative", func(c *promo.CampaignInput) { c.BetValue = "-1" }, "bet_value", nil},
		{"no free bets", func(c *promo.CampaignInput) { c.FreeBets = 0 }, "free_bets", nil},
		{"too many free bets", func(c *promo.CampaignInput) { c.FreeBets = promo.MaxFreeBets + 1 }, "free_bets", nil},
		{"no end", func(c *promo.CampaignInput) { c.ValidUntil = time.Time{} }, "valid_until", nil},
		{"ended", func(c *promo.CampaignInput) { c.ValidUntil = now.Add(-time.Hour) }, "valid_until", nil},
		{"ends before it starts", func(c *promo.CampaignInput) {
			c.ValidFrom, c.ValidUntil = now.Add(48*time.Hour), now.Add(24*time.Hour)
		}, "valid_until", nil},
		{"an unknown provider", func(c *promo.CampaignInput) { c.ProviderID = "nobody" }, "", domain.ErrNotFound},
		{"an unknown game", func(c *promo.CampaignInput) { c.Games = []string{"nothing"} }, "", domain.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "caleta")
			in := spring
			tt.edit(&in)
			_, _, err := f.svc.CreateCampaign(context.Background(), "acme", in)
			var fe *gateway.FieldError
			switch {
			case tt.err != nil:
				if !errors.Is(err, tt.err) {
					t.Fatalf("err %v, want %v", err, tt.err)
				}
			case !errors.As(err, &fe) || fe.Field != tt.field:
				t.Fatalf("err %v, want a field error on %s", err, tt.field)
			}
			if calls := f.prov.took(); len(calls) != 0 {
				t.Fatalf("the provider was asked %q", calls)
			}
		})
	}
}

func TestServiceCancel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "caleta")
	ctx := context.Background()
	if _, _, err := f.svc.CreateCampaign(ctx, "acme", spring); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Grant(ctx, "acme", "spring", []promo.GrantInput{{RewardID: "rw-1", PlayerID: "p-1"},
		{RewardID: "rw-2", PlayerID: "p-2"}}); err != nil {
		t.Fatal(err)
	}
	// A refusal at the provider leaves the reward active.
	f.prov.refuse = true
	if _, err := f.svc.Cancel(ctx, "acme", "spring", "rw-1", ""); err == nil {
		t.Fatal("cancelled although the provider refused")
	}
	if r, _ := f.store.Reward(ctx, "acme", "rw-1"); r.State != domain.RewardActive {
		t.Fatalf("state %s after a refused cancel", r.State)
	}
	f.prov.refuse = false
	r, err := f.svc.Cancel(ctx, "acme", "spring", "rw-1", "asked")
	if err != nil || r.State != domain.RewardCancelled {
		t.Fatalf("cancel: %+v %v", r, err)
	}
	// Again: answered, not sent again.
	before := len(f.prov.took())
	if r, err := f.svc.Cancel(ctx, "acme", "spring", "rw-1", ""); err != nil || r.State != domain.RewardCancelled {
		t.Fatalf("cancel again: %+v %v", r, err)
	}
	if len(f.prov.took()) != before {
		t.Fatal("a second cancel asked the provider again")
	}
	for _, tc := range []struct{ campaign, reward string }{{"spring", "rw-9"}, {"autumn", "rw-2"}, {"spring", "a\x00b"}} {
		if _, err := f.svc.Cancel(ctx, "acme", tc.campaign, tc.reward, ""); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("cancel %s/%q: %v, want not found", tc.campaign, tc.reward, err)
		}
	}
}
