package projections

import (
	"slices"
	"strings"

	"github.com/pitboss/pitboss/domain"
)

// balances is the Balances projection: the balance of every client and
// player wallet, as the sum of the postings on it. A transfer, whose event
// lives on the player's stream, moves both the player's and the client's
// wallet. House and external accounts are not wallets and are left out.
type balances struct{}

func (balances) Name() Name { return Balances }

func (balances) Lookups(domain.Event) []GameTxKey { return nil }

func (balances) Apply(e domain.Event, _ Lookup) (Changes, error) {
	if _, ok := historyTypes[e.Type]; !ok && !promoTypes[e.Type] {
		return Changes{}, invalid(e, "unknown event type %q", e.Type)
	}
	cur, err := domain.ParseCurrency(e.Data.Currency)
	if err != nil {
		return Changes{}, invalid(e, "%v", err)
	}
	var out []Balance
	for _, p := range e.Data.Postings {
		kind := p.Account.Kind()
		if kind != domain.KindClientWallet && kind != domain.KindPlayerWallet {
			continue
		}
		if p.Account.CurrencyCode() != cur.Code() {
			return Changes{}, invalid(e, "posting on %s in an event of %s", p.Account, cur.Code())
		}
		m, err := domain.ParseMoney(p.Amount, cur)
		if err != nil {
			return Changes{}, invalid(e, "posting on %s: %v", p.Account, err)
		}
		id, err := domain.ParseAccountID(string(p.Account))
		if err != nil {
			return Changes{}, invalid(e, "malformed account id %q", p.Account)
		}
		b := Balance{Account: id, Kind: kind.String(), ClientID: id.Client(), PlayerID: id.Player(),
			Currency: cur.Code(), Scale: cur.Exponent(), Balance: m.Minor(), Position: e.Position}
		if i := slices.IndexFunc(out, func(x Balance) bool { return x.Account == b.Account }); i >= 0 {
			out[i].Balance += b.Balance
			continue
		}
		out = append(out, b)
	}
	// One order of row locks for every writer.
	slices.SortFunc(out, func(a, b Balance) int { return strings.Compare(string(a.Account), string(b.Account)) })
	return Changes{Balances: out}, nil
}
