package domain_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/domain"
)

func TestAccountIDs(t *testing.T) {
	tests := []struct {
		name        string
		id          domain.AccountID
		want        string
		kind        domain.AccountKind
		kindName    string
		mayGoBelow0 bool
		currency    string
	}{
		{name: "client wallet", id: domain.ClientWallet("acme", eur), want: "client:acme:EUR",
			kind: domain.KindClientWallet, kindName: "client", currency: "EUR"},
		{name: "player wallet", id: domain.PlayerWallet("acme", "p-17", btc), want: "player:acme:p-17:BTC",
			kind: domain.KindPlayerWallet, kindName: "player", currency: "BTC"},
		{name: "house", id: domain.HouseAccount("acme", "pragmatic", jpy), want: "house:acme:pragmatic:JPY",
			kind: domain.KindHouse, kindName: "house", mayGoBelow0: true, currency: "JPY"},
		{name: "external", id: domain.ExternalAccount("acme", usd), want: "external:acme:USD",
			kind: domain.KindExternal, kindName: "external", mayGoBelow0: true, currency: "USD"},
		{name: "crypto code of four letters", id: domain.PlayerWallet("acme", "p", domain.MustCurrency("USDT")),
			want: "player:acme:p:USDT", kind: domain.KindPlayerWallet, kindName: "player", currency: "USDT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.id) != tt.want {
				t.Errorf("id = %q, want %q", tt.id, tt.want)
			}
			if tt.id.Kind() != tt.kind || tt.id.Kind().String() != tt.kindName {
				t.Errorf("kind = %v, want %v", tt.id.Kind(), tt.kind)
			}
			if tt.id.Kind().MayGoNegative() != tt.mayGoBelow0 {
				t.Errorf("MayGoNegative = %v, want %v", tt.id.Kind().MayGoNegative(), tt.mayGoBelow0)
			}
			if tt.id.CurrencyCode() != tt.currency {
				t.Errorf("currency = %q, want %q", tt.id.CurrencyCode(), tt.currency)
			}
		})
	}
}

func TestAccountIDsAreDistinctPerOwnerAndCurrency(t *testing.T) {
	ids := []domain.AccountID{
		domain.PlayerWallet("acme", "p-1", eur), domain.PlayerWallet("acme", "p-1", usd),
		domain.PlayerWallet("acme", "p-2", eur), domain.PlayerWallet("beta", "p-1", eur),
		domain.ClientWallet("acme", eur), domain.ClientWallet("acme", usd), domain.ClientWallet("beta", eur),
		domain.HouseAccount("acme", "p-1", eur), domain.ExternalAccount("acme", eur),
	}
	seen := map[domain.AccountID]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("%s names two accounts", id)
		}
		seen[id] = true
	}
}

func TestParseAccountID(t *testing.T) {
	tests := []struct {
		name                           string
		s                              string
		kind                           domain.AccountKind
		client, player, provider, code string
		wantErr                        bool
	}{
		{name: "client wallet", s: "client:acme:EUR", kind: domain.KindClientWallet, client: "acme", code: "EUR"},
		{name: "player wallet", s: "player:acme:p-17:BTC", kind: domain.KindPlayerWallet, client: "acme",
			player: "p-17", code: "BTC"},
		{name: "house", s: "house:acme:pragmatic:JPY", kind: domain.KindHouse, client: "acme",
			provider: "pragmatic", code: "JPY"},
		{name: "external", s: "external:acme:USD", kind: domain.KindExternal, client: "acme", code: "USD"},
		{name: "ids with every allowed character", s: "player:a.b_c-d@e:P.1_x-y@z:USDT",
			kind: domain.KindPlayerWallet, client: "a.b_c-d@e", player: "P.1_x-y@z", code: "USDT"},
		{name: "a currency that is not configured still parses", s: "client:acme:ZZZ",
			kind: domain.KindClientWallet, client: "acme", code: "ZZZ"},
		{name: "empty", s: "", wantErr: true},
		{name: "kind only", s: "player", wantErr: true},
		{name: "unknown kind", s: "bank:acme:EUR", wantErr: true},
		{name: "kind in upper case", s: "CLIENT:acme:EUR", wantErr: true},
		{name: "player wallet without its player", s: "player:acme:EUR", wantErr: true},
		{name: "house without its provider", s: "house:acme:EUR", wantErr: true},
		{name: "client wallet with a player", s: "client:acme:p1:EUR", wantErr: true},
		{name: "external with a provider", s: "external:acme:prov:EUR", wantErr: true},
		{name: "player wallet with one part too many", s: "player:acme:p1:x:EUR", wantErr: true},
		{name: "empty client", s: "client::EUR", wantErr: true},
		{name: "empty player", s: "player:acme::EUR", wantErr: true},
		{name: "empty provider", s: "house:acme::EUR", wantErr: true},
		{name: "empty currency", s: "client:acme:", wantErr: true},
		{name: "currency in lower case", s: "client:acme:eur", wantErr: true},
		{name: "currency code too long", s: "client:acme:EURUSDT", wantErr: true},
		{name: "client with a space", s: "client:ac me:EUR", wantErr: true},
		{name: "player with a pipe", s: "player:acme:p|1:EUR", wantErr: true},
		{name: "client longer than an id may be", s: "client:" + strings.Repeat("c", domain.MaxIDLength+1) + ":EUR",
			wantErr: true},
		{name: "trailing colon", s: "client:acme:EUR:", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := domain.ParseAccountID(tt.s)
			if tt.wantErr {
				if !errors.Is(err, domain.ErrInvalidArgument) {
					t.Fatalf("ParseAccountID(%q) = %q, %v; want ErrInvalidArgument", tt.s, id, err)
				}
				if id != "" {
					t.Errorf("ParseAccountID(%q) returned %q with its error", tt.s, id)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAccountID(%q): %v", tt.s, err)
			}
			if string(id) != tt.s {
				t.Errorf("id %q, want %q", id, tt.s)
			}
			got := []string{id.Kind().String(), id.Client(), id.Player(), id.Provider(), id.CurrencyCode()}
			want := []string{tt.kind.String(), tt.client, tt.player, tt.provider, tt.code}
			if !slices.Equal(got, want) {
				t.Errorf("kind, client, player, provider, currency = %q, want %q", got, want)
			}
		})
	}
}

// The constructors and the parser agree: every id a constructor makes from
// valid parts parses back into those parts.
func TestParseAccountIDReadsWhatTheConstructorsMake(t *testing.T) {
	for _, id := range []domain.AccountID{
		domain.ClientWallet("acme", eur), domain.PlayerWallet("acme", "p-1", btc),
		domain.HouseAccount("acme", "prov", jpy), domain.ExternalAccount("acme", usd),
	} {
		got, err := domain.ParseAccountID(string(id))
		if err != nil || got != id {
			t.Errorf("ParseAccountID(%q) = %q, %v", id, got, err)
		}
	}
}

func TestValidateID(t *testing.T) {
	tests := []struct {
		name string
		v    string
		ok   bool
	}{
		{name: "one character", v: "a", ok: true},
		{name: "all allowed punctuation", v: "a.b_c-d@e", ok: true},
		{name: "digits and upper case", v: "TX-2025-0001", ok: true},
		{name: "uuid", v: "0b6f3a1e-5c1d-4f5e-9a2b-3c4d5e6f7a8b", ok: true},
		{name: "128 characters", v: strings.Repeat("x", domain.MaxIDLength), ok: true},
		{name: "129 characters", v: strings.Repeat("x", domain.MaxIDLength+1)},
		{name: "empty", v: ""},
		{name: "colon would break account ids", v: "acme:evil"},
		{name: "pipe would break record keys", v: "a|b"},
		{name: "space", v: "a b"},
		{name: "tab", v: "a\tb"},
		{name: "newline", v: "a\nb"},
		{name: "NUL", v: "a\x00"},
		{name: "DEL", v: "a\x7f"},
		{name: "C1 control", v: "a\u0085"},
		{name: "non-ASCII letter", v: "café"},
		{name: "64 two-byte letters", v: strings.Repeat("é", 64)},
		{name: "slash", v: "a/b"},
		{name: "invalid UTF-8", v: "a\xff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := domain.ValidateID("player_id", tt.v)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidateID(%q) = %v, want ok", tt.v, err)
				}
				return
			}
			if !errors.Is(err, domain.ErrInvalidArgument) {
				t.Fatalf("ValidateID(%q) = %v, want ErrInvalidArgument", tt.v, err)
			}
			if !strings.Contains(err.Error(), "player_id") {
				t.Errorf("error %q does not name the field", err)
			}
		})
	}
}
