package domain_test

import (
	"errors"
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
