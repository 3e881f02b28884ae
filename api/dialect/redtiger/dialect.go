package redtiger

import (
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

// The request and answer shapes of the Red Tiger wallet (its RGI calls as
// the open-source Valkyrie aggregator's adapter documents them), and its
// amounts: decimal text ("10.00") or JSON numbers, read exactly in the
// session currency's decimals.

// base is what every call carries. token is our game session id; userId,
// casino, currency and ip are the player's as Red Tiger knows them.
type base struct {
	Token    string `json:"token"`
	UserID   string `json:"userId"`
	Casino   string `json:"casino"`
	Currency string `json:"currency"`
	IP       string `json:"ip"`
}

// authCall is /auth's body.
type authCall struct {
	base
	Channel   string `json:"channel"`
	Affiliate string `json:"affiliate"`
	Extras    string `json:"extras"`
}

// game names the game a call is played in: key is the provider's code of
// the game (games.provider_game_code) or our game id.
type game struct {
	Type    string `json:"type"`
	Key     string `json:"key"`
	Version string `json:"version"`
}

// round ties a stake and its payout; ends closes the round.
type round struct {
	ID     string `json:"id"`
	Starts bool   `json:"starts"`
	Ends   bool   `json:"ends"`
}

// promo names the promotion (free rounds, a prize drop, a tournament) a
// call belongs to. Accepted as information: the ledger books the money.
type promo struct {
	Type         string `json:"type"`
	InstanceCode string `json:"instanceCode"`
	CampaignCode string `json:"campaignCode"`
	InstanceID   int64  `json:"instanceId"`
	CampaignID   int64  `json:"campaignId"`
}

// stakeDetails splits a stake: game is what goes to the game, jackpot the
// contribution to a jackpot pool.
type stakeDetails struct {
	Game    domain.AmountText `json:"game"`
	Jackpot domain.AmountText `json:"jackpot"`
}

// stakeTx is the transaction of a stake, a promo buy-in and a refund: id
// is Red Tiger's id of the stake (a refund names the stake it refunds),
// stake the player's money, stakePromo the promotion's.
type stakeTx struct {
	ID         string            `json:"id"`
	Stake      domain.AmountText `json:"stake"`
	StakePromo domain.AmountText `json:"stakePromo"`
	Details    stakeDetails      `json:"details"`
}

// stakeCall is /stake's, /promo/buyin's, /refund's and /promo/refund's
// body.
type stakeCall struct {
	base
	Transaction stakeTx `json:"transaction"`
	Game        game    `json:"game"`
	Round       round   `json:"round"`
	Promo       promo   `json:"promo"`
}

// payoutDetails splits a payout: game is what the game paid, jackpot what
// a jackpot paid.
type payoutDetails struct {
	Game    domain.AmountText `json:"game"`
	Jackpot domain.AmountText `json:"jackpot"`
}

// sources says where a payout came from: each jackpot pot's share, the
// lines and the features.
type sources struct {
	Jackpot  map[string]domain.AmountText `json:"jackpot"`
	Lines    domain.AmountText            `json:"lines"`
	Features domain.AmountText            `json:"features"`
}

// payoutTx is the transaction of a payout and a promo settlement: id is
// Red Tiger's id of the payout, payout the money paid to the player,
// payoutPromo the promotion's.
type payoutTx struct {
	ID          string            `json:"id"`
	Payout      domain.AmountText `json:"payout"`
	PayoutPromo domain.AmountText `json:"payoutPromo"`
	Details     payoutDetails     `json:"details"`
	Sources     sources           `json:"sources"`
}

// jackpot describes the jackpot of the game a payout is in.
type jackpot struct {
	Group        string   `json:"group"`
	Contribution string   `json:"contribution"`
	Pots         []string `json:"pots"`
}

// payoutCall is /payout's and /promo/settle's body. retry is set on Red
// Tiger's retries (idempotency makes it irrelevant).
type payoutCall struct {
	base
	Transaction payoutTx `json:"transaction"`
	Game        game     `json:"game"`
	Jackpot     jackpot  `json:"jackpot"`
	Round       round    `json:"round"`
	Promo       promo    `json:"promo"`
	Retry       bool     `json:"retry"`
}

// balance is a player's money in an answer: cash is the wallet; we keep no
// bonus money, so bonus is always zero in the currency's decimals.
type balance struct {
	Cash  string `json:"cash"`
	Bonus string `json:"bonus"`
}

// authResult is /auth's result. We know no player country or language,
// so they are left out.
type authResult struct {
	Token    string  `json:"token"`
	Currency string  `json:"currency"`
	UserID   string  `json:"userId"`
	Casino   string  `json:"casino"`
	Balance  balance `json:"balance"`
}

// stakeResult is /stake's and /promo/buyin's result: id is our id of the
// booked call, stake what was taken.
type stakeResult struct {
	Token    string  `json:"token"`
	Currency string  `json:"currency"`
	ID       string  `json:"id"`
	Stake    balance `json:"stake"`
	Balance  balance `json:"balance"`
}

// payoutResult is /payout's and /promo/settle's result.
type payoutResult struct {
	Token    string  `json:"token"`
	Currency string  `json:"currency"`
	ID       string  `json:"id"`
	Payout   balance `json:"payout"`
	Balance  balance `json:"balance"`
}

// refundResult is /refund's and /promo/refund's result: stake is what was
// given back (zero for a refund that arrived before its stake).
type refundResult struct {
	Token string  `json:"token"`
	ID    string  `json:"id"`
	Stake balance `json:"stake"`
}

// success is the envelope of every accepted call.
type success struct {
	Success bool `json:"success"`
	Result  any  `json:"result"`
}

// refundSuccess is a refund's envelope: its balance and currency sit
// beside the result, not in it.
type refundSuccess struct {
	Success  bool         `json:"success"`
	Result   refundResult `json:"result"`
	Balance  balance      `json:"balance"`
	Currency string       `json:"currency"`
}

// failure is the envelope of every refused call.
type failure struct {
	Success bool         `json:"success"`
	Error   failureError `json:"error"`
}

// failureError is the protocol's error; request_id (the answer's
// X-Request-Id) is ours, added so a refusal can be found in our logs.
type failureError struct {
	Message   string `json:"message"`
	Code      int    `json:"code"`
	RequestID string `json:"request_id"`
}

// amount reads text as money in cur: empty is zero; a negative amount, a
// digit beyond the currency's decimals, anything but a plain decimal is
// refused CodeInvalidInput (never rounded).
func amount(field string, text domain.AmountText, cur domain.Currency) (domain.Money, error) {
	if text == "" {
		return domain.Zero(cur), nil
	}
	m, err := domain.ParseMoney(string(text), cur)
	if err != nil {
		return domain.Money{}, &wallet.Refusal{Verdict: wallet.InvalidAmount, Reason: field + ": " + err.Error(), Err: err}
	}
	if m.IsNegative() {
		return domain.Money{}, wallet.Refuse(wallet.InvalidAmount, field+" is negative")
	}
	return m, nil
}

// cash is m as an answer's balance.
func cash(m domain.Money) balance {
	return balance{Cash: m.String(), Bonus: domain.Zero(m.Currency()).String()}
}
