package providersim

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/pitboss/pitboss/domain"
)

// Load makes single wallet calls of one protocol for a load generator
// (pitboss-bench's BENCH_PROTOCOL): the same requests the simulator sends,
// the same authentication, but no run, no expected balance and no
// deviation report — only the protocol's status of each answer, so the
// benchmark can tell a booked call from a refusal in any protocol.
type Load struct {
	cfg Config
	d   dialect
}

// NewLoad is a Load for cfg.Protocol. Of cfg, only Protocol, BaseURL,
// Provider and the credentials (Secret, PrivateKey) are used.
func NewLoad(cfg Config) (*Load, error) {
	d, err := newDialect(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.BaseURL == "" || cfg.Provider == "" {
		return nil, fmt.Errorf("%w: a base URL and a provider are required", ErrConfig)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Load{cfg: cfg, d: d}, nil
}

// LoadSession is the game session a call is made in.
type LoadSession struct {
	ID, Player, Game string
	Currency         domain.Currency
}

// LoadOp is a money call.
type LoadOp int

// The calls a load generator makes: a round's bet, then its win or its
// rollback.
const (
	LoadBet LoadOp = iota
	LoadWin
	LoadRollback
)

// LoadTx is a money call's content: its id, the bet a win or rollback
// names, the round, the amount in minor units of the session's currency,
// and whether the call closes the round.
type LoadTx struct {
	ID, Ref, Round string
	Amount         int64
	Closed         bool
}

// LoadResult is one call's answer: the HTTP status, the protocol's status
// (RS_OK, OK, ok, an error code), whether that status means booked (or
// replayed), and the answer's own id of the booked call where the
// protocol has one (pitboss's transaction_id, Red Tiger's result.id: our
// ledger event's id).
type LoadResult struct {
	HTTPStatus int
	Status     string
	OK         bool
	ID         string
	Replayed   bool
}

// Call sends one call with hc and reads its answer's status. err is a
// transport error; a refusal is a result whose OK is false.
func (l *Load) Call(ctx context.Context, hc *http.Client, s LoadSession, op LoadOp, t LoadTx) (LoadResult, error) {
	k := map[LoadOp]kind{LoadBet: callBet, LoadWin: callWin, LoadRollback: callRollback}[op]
	r := &run{cfg: l.cfg, http: hc, out: io.Discard, d: l.d, nonce: t.ID, report: &Report{},
		sess: session{ID: s.ID, Player: s.Player, Game: s.Game, Currency: s.Currency}}
	req := l.d.build(r, k, tx{ID: t.ID, Ref: t.Ref, Round: t.Round, Amount: t.Amount, Closed: t.Closed})
	hr, err := r.newRequest(ctx, req)
	if err != nil {
		return LoadResult{}, err
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return LoadResult{}, withoutURL(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return LoadResult{HTTPStatus: resp.StatusCode}, fmt.Errorf("read the answer: %w", err)
	}
	a := l.d.read(&checker{r: r, call: k.String()}, req, reply{code: resp.StatusCode, body: b})
	res := LoadResult{HTTPStatus: resp.StatusCode, Status: a.Status, OK: a.Status == l.d.status(accepted), ID: a.ID}
	if a.Replayed != nil {
		res.Replayed = *a.Replayed
	}
	return res, nil
}
