package projections

import (
	"crypto/sha1"
	"encoding/hex"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// history is the History projection: the transaction history, game results
// and the daily GGR.
//
// Rules (docs/read-models.md has the reasons):
//   - every event is one history row; its amount is the sum of the event's
//     postings on the event's own wallet, so a bet is negative, a win
//     positive, a transfer from the player negative, a balance sync the
//     difference it posted;
//   - a bet or win that is rolled back gets status rolled_back; the rollback
//     is a row of its own (positive for a refunded bet, negative for a
//     reversed win); a rollback that found nothing to undo is "discarded"
//     (the transaction it names was never booked);
//   - the ledger's close of a stale round is a round_close row of zero and
//     closes the round's game result;
//   - a round (client, provider, round id) has one game_result row whose
//     amount is the net of its bets, wins and rollbacks;
//   - GGR is booked on the UTC day of each event: bets and wins on theirs,
//     a refund or reversal on the rollback's day, against the game and promo
//     kind of the transaction it undoes; promo money is kept apart, and so
//     is a win's jackpot part (jackpot money), whatever kind the rest is.
type history struct{}

func (history) Name() Name { return History }

// historyGameTypes are the game events: a seamless client's carry a
// mirror leg (streamAmount).
var historyGameTypes = map[domain.EventType]bool{domain.EventBetPlaced: true, domain.EventWinCredited: true,
	domain.EventBetRolledBack: true, domain.EventWinReversed: true, domain.EventRollbackRecorded: true}

var historyTypes = map[domain.EventType]TxType{
	domain.EventBetPlaced:        TypeBet,
	domain.EventWinCredited:      TypeWin,
	domain.EventBetRolledBack:    TypeRollback,
	domain.EventWinReversed:      TypeRollback,
	domain.EventRollbackRecorded: TypeRollback,
	domain.EventDeposited:        TypeDeposit,
	domain.EventWithdrawn:        TypeWithdrawal,
	domain.EventTransferred:      TypeTransfer,
	domain.EventAdjusted:         TypeAdjustment,
	domain.EventBalanceSynced:    TypeBalanceSync,
	domain.EventGameLaunched:     TypeLaunch,
	domain.EventRoundClosed:      TypeRoundClose,
}

func (history) Lookups(e domain.Event) []GameTxKey {
	if e.Type == domain.EventBetRolledBack || e.Type == domain.EventWinReversed {
		return []GameTxKey{{ClientID: e.Data.ClientID, Provider: e.Data.Provider, ExternalTxID: e.Data.ReferenceTx}}
	}
	return nil
}

// promoTypes are the reward events: they move no money and have no
// history row (the campaign report reads the rewards, docs/promotions.md).
var promoTypes = map[domain.EventType]bool{
	domain.EventRewardGranted: true, domain.EventRewardCancelled: true, domain.EventRewardExpired: true,
}

func (h history) Apply(e domain.Event, find Lookup) (Changes, error) {
	if promoTypes[e.Type] {
		return Changes{}, nil
	}
	typ, ok := historyTypes[e.Type]
	if !ok {
		return Changes{}, invalid(e, "unknown event type %q", e.Type)
	}
	d := e.Data
	if err := domain.ValidateID("client_id", d.ClientID); err != nil {
		return Changes{}, invalid(e, "%v", err)
	}
	cur, err := domain.ParseCurrency(d.Currency)
	if err != nil {
		return Changes{}, invalid(e, "%v", err)
	}
	signed, err := streamAmount(e, cur)
	if err != nil {
		return Changes{}, err
	}
	row := Transaction{
		ID: e.ID, ClientID: d.ClientID, Type: typ, Amount: signed, Currency: cur.Code(), Scale: cur.Exponent(),
		Status: StatusSettled, CreatedAt: eventTime(e), Provider: d.Provider, Game: d.GameID, PlayerID: d.PlayerID,
		RoundID: d.RoundID, ExternalTxID: d.ExternalTxID, ReferenceTx: d.ReferenceTx, Seq: e.Position,
		Position: e.Position, Promo: d.Promo, CampaignID: d.CampaignID, RewardID: d.RewardID,
	}
	if d.Jackpot != "" {
		if e.Type != domain.EventWinCredited {
			return Changes{}, invalid(e, "jackpot on a %s", e.Type)
		}
		j, err := domain.ParseMoney(d.Jackpot, cur)
		if err != nil || j.IsNegative() || j.Minor() > signed {
			return Changes{}, invalid(e, "jackpot %q is not within the win %d", d.Jackpot, signed)
		}
		row.Jackpot = j.Minor()
	}
	if d.BalanceAfter != "" {
		b, err := domain.ParseMoney(d.BalanceAfter, cur)
		if err != nil {
			return Changes{}, invalid(e, "balance_after: %v", err)
		}
		row.BalanceAfter, row.HasBalanceAfter = b.Minor(), true
	}
	if e.Type == domain.EventRollbackRecorded {
		row.Status = StatusDiscarded
	}
	ch := Changes{Transactions: []Transaction{row}}
	if e.Type == domain.EventRoundClosed {
		if d.Provider == "" || d.RoundID == "" {
			return Changes{}, invalid(e, "%s without a provider or round", e.Type)
		}
		ch.GameResults = []Transaction{{
			ID: GameResultID(d.ClientID, d.Provider, d.RoundID), ClientID: d.ClientID, Type: TypeGameResult,
			Currency: cur.Code(), Scale: cur.Exponent(), Status: StatusPending, CreatedAt: row.CreatedAt,
			Provider: d.Provider, PlayerID: d.PlayerID, RoundID: d.RoundID, Seq: e.Position, Sub: 1,
			Position: e.Position, Closed: true,
		}}
		return ch, nil
	}

	game := d.Provider != ""
	switch e.Type {
	case domain.EventBetPlaced, domain.EventWinCredited, domain.EventBetRolledBack, domain.EventWinReversed:
		if !game {
			return Changes{}, invalid(e, "%s without a provider", e.Type)
		}
	default:
		return ch, nil
	}
	key := GGRKey{ClientID: d.ClientID, Day: dayOf(e.OccurredAt), Provider: d.Provider, Game: d.GameID, Currency: cur.Code()}
	delta := GGRDelta{Scale: cur.Exponent()}
	result := Transaction{
		ID: GameResultID(d.ClientID, d.Provider, d.RoundID), ClientID: d.ClientID, Type: TypeGameResult,
		Amount: signed, Currency: cur.Code(), Scale: cur.Exponent(), Status: StatusPending, CreatedAt: row.CreatedAt,
		Provider: d.Provider, Game: d.GameID, PlayerID: d.PlayerID, RoundID: d.RoundID, Seq: e.Position, Sub: 1,
		Position: e.Position, Closed: d.RoundClosed,
	}
	switch e.Type {
	case domain.EventBetPlaced:
		if d.Promo {
			delta.PromoBets = -signed
		} else {
			delta.Bets = -signed
		}
		round := d.RoundID
		if round == "" {
			round = "tx:" + d.ExternalTxID // a bet without a round is a round of its own
		}
		ch.Players = []GGRMember{{GGRKey: key, Member: d.PlayerID}}
		ch.Rounds = []GGRMember{{GGRKey: key, Member: round}}
		result.OpenBets = 1
	case domain.EventWinCredited:
		delta.JackpotWins = row.Jackpot
		if d.Promo {
			delta.PromoWins = signed - row.Jackpot
		} else {
			delta.Wins = signed - row.Jackpot
		}
		result.Wins = 1
	case domain.EventBetRolledBack, domain.EventWinReversed:
		ref := GameTxKey{ClientID: d.ClientID, Provider: d.Provider, ExternalTxID: d.ReferenceTx}
		orig, ok := find(ref)
		want := TypeBet
		if e.Type == domain.EventWinReversed {
			want = TypeWin
		}
		if !ok || orig.Type != want {
			return Changes{}, invalid(e, "%s of %s %s, which the history does not hold", e.Type, want, d.ReferenceTx)
		}
		key.Game, result.Game, ch.Transactions[0].Promo = orig.Game, orig.Game, orig.Promo
		ch.RolledBack = []RollbackMark{{Key: ref, Position: e.Position}}
		if want == TypeWin {
			// A reversal takes the whole win back: its jackpot part
			// leaves the jackpot column, the rest the win's own.
			if orig.Jackpot < 0 || orig.Jackpot > -signed {
				return Changes{}, invalid(e, "reversal of %d with a jackpot part of %d", -signed, orig.Jackpot)
			}
			ch.Transactions[0].Jackpot = orig.Jackpot
			delta.JackpotWinReversals = orig.Jackpot
		}
		switch {
		case want == TypeBet && orig.Promo:
			delta.PromoBetRefunds = signed
		case want == TypeBet:
			delta.BetRefunds = signed
		case orig.Promo:
			delta.PromoWinReversals = -signed - orig.Jackpot
		default:
			delta.WinReversals = -signed - orig.Jackpot
		}
		if want == TypeBet {
			result.OpenBets, result.RolledBets = -1, 1
		} else {
			result.Wins = -1
		}
	}
	delta.GGRKey = key
	ch.GGR = []GGRDelta{delta}
	if d.RoundID != "" {
		ch.GameResults = []Transaction{result}
	}
	return ch, nil
}

// streamAmount is the sum of e's postings on its own stream's account: the
// signed amount from that wallet's point of view. A seamless client's game
// event leads with a mirror leg between the client's external account and
// the wallet (domain.Reported), which takes the wallet to the operator's
// balance and is no game money: its external posting, the negation of its
// posting on the wallet, is added back, so the amount is the game's alone.
// A ledger client's game event has no external posting.
func streamAmount(e domain.Event, cur domain.Currency) (int64, error) {
	game := historyGameTypes[e.Type]
	var sum int64
	for _, p := range e.Data.Postings {
		m, err := domain.ParseMoney(p.Amount, cur)
		if err != nil {
			return 0, invalid(e, "posting on %s: %v", p.Account, err)
		}
		if p.Account.CurrencyCode() != cur.Code() {
			return 0, invalid(e, "posting on %s in an event of %s", p.Account, cur.Code())
		}
		if p.Account == e.StreamID || (game && p.Account.Kind() == domain.KindExternal) {
			s := sum + m.Minor()
			if (m.Minor() > 0 && s < sum) || (m.Minor() < 0 && s > sum) {
				return 0, invalid(e, "amount overflows")
			}
			sum = s
		}
	}
	return sum, nil
}

// eventTime is the event's time as Postgres keeps it (microseconds, UTC), so
// a rebuilt row equals the stored one.
func eventTime(e domain.Event) time.Time { return e.OccurredAt.UTC().Truncate(time.Microsecond) }

func dayOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// GameResultID is the id of a round's game_result row: a name-based UUID
// (SHA-1, version 5 layout) of client, provider and round, stable across
// rebuilds.
func GameResultID(client, provider, round string) string {
	const prefix = "pitboss.game_result\x00"
	var in [128]byte // on the stack for every id of up to 128 bytes' input
	b := append(append(append(append(append(append(in[:0], prefix...), client...), 0), provider...), 0), round...)
	h := sha1.Sum(b)
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], h[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], h[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], h[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], h[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], h[10:16])
	return string(out[:])
}
