package statement

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// Reports is what a close reads: the read models' reports, waited for up
// to a ledger position (*projections.Queries).
type Reports interface {
	LedgerPosition(ctx context.Context, clientID string, minPosition int64) (int64, error)
	GGR(ctx context.Context, r projections.ReportQuery, minPosition int64) ([]projections.GGRRow, int64, error)
	Commission(ctx context.Context, r projections.ReportQuery, minPosition int64) ([]projections.CommissionRow, int64, error)
	GGRIn(ctx context.Context, r projections.ReportQuery, minPosition int64, to domain.Currency, fx projections.FXRates) (
		[]projections.GGRRow, []projections.ReportingGGR, []projections.GGRTotal, int64, error)
	CommissionIn(ctx context.Context, r projections.ReportQuery, minPosition int64, to domain.Currency, fx projections.FXRates) (
		[]projections.CommissionRow, []projections.ReportingCommission, int64, error)
}

// Store keeps statements (auditstore.Statements).
type Store interface {
	// Closed lists the client's statements at provider, oldest period
	// first.
	Closed(ctx context.Context, client, provider string) ([]Signed, error)
	// LastEventBefore is the client's last event before end as the
	// history read model has numbered it, with the chain's hash there;
	// 0 and nil when it has none.
	LastEventBefore(ctx context.Context, client string, end time.Time) (int64, []byte, error)
	// CheckpointCovering is the id of the client's first signed
	// checkpoint at or after position; ok is false when there is none.
	CheckpointCovering(ctx context.Context, client string, position int64) (id int64, ok bool, err error)
	// ClientLogAt is the client's verifiable log at position: how many
	// of its events are at or below it, and the root of their tree.
	ClientLogAt(ctx context.Context, client string, position int64) (size int64, root []byte, err error)
	// Insert stores s, refusing (ErrClosed, ErrOutOfOrder, ErrConcurrent)
	// a period already closed, one before the last closed period, or a
	// statement computed while another of the client and provider was
	// stored (known is how many Closed listed).
	Insert(ctx context.Context, s Signed, known int) error
}

// Signer opens the active checkpoint signing key (auditstore.Checkpoints).
type Signer interface {
	SigningKey(ctx context.Context) (keyID string, priv ed25519.PrivateKey, err error)
	// MakeCheckpoint signs the ledger's head now (the platform's and every
	// client's checkpoint).
	MakeCheckpoint(ctx context.Context) error
}

// Refusals of Close.
var (
	ErrNotEnded   = errors.New("the period has not ended yet (UTC)")
	ErrClosed     = errors.New("the period is already closed")
	ErrOutOfOrder = errors.New("a later period is already closed: periods close in order")
	ErrConcurrent = errors.New("another statement of this client and provider was closed meanwhile; close again")
	// ErrSigningKey: the signing key cannot be opened (sealed with another
	// master key than this server's PITBOSS_SECRET_KEY).
	ErrSigningKey = errors.New("the checkpoint signing key cannot be opened with this server's master key (PITBOSS_SECRET_KEY)")
)

// Closer closes periods into statements.
type Closer struct {
	Reports Reports
	Store   Store
	Signer  Signer
	// FX are the exchange rates of a statement in a reporting currency;
	// without them such a close is refused (projections.ErrNoRates).
	FX  projections.FXRates
	IDs interface{ NewID() string }
	Now func() time.Time
}

// Request is one period to close.
type Request struct {
	ClientID, Provider string
	Period             string // PeriodMonth or PeriodDay
	Start              string // 2026-10 or 2026-10-05
	// Reporting is the reporting currency (nil: none).
	Reporting *domain.Currency
	// Actor is who closed it (the admin token's fingerprint).
	Actor string
}

// Close computes and stores the statement of r's period: its figures as
// the read models hold them once they reflect every event the client has
// committed, the client's last event of the period, the checkpoint
// covering it (one is made when none covers it yet) and the client's
// verifiable log there, the late changes of earlier closed periods, signed
// with the active checkpoint key.
func (c *Closer) Close(ctx context.Context, r Request) (Signed, error) {
	from, last, err := ParsePeriod(r.Period, r.Start)
	if err != nil {
		return Signed{}, err
	}
	now := c.Now().UTC()
	end := last.AddDate(0, 0, 1)
	if end.After(now) {
		return Signed{}, fmt.Errorf("%w: it ends at %s", ErrNotEnded, end.Format(time.RFC3339))
	}
	prior, err := c.Store.Closed(ctx, r.ClientID, r.Provider)
	if err != nil {
		return Signed{}, err
	}
	for _, p := range prior {
		switch {
		case !p.From.After(last) && !from.After(p.To):
			return Signed{}, fmt.Errorf("%w (statement %s, %s to %s)", ErrClosed, p.ID, p.From.Format(time.DateOnly), p.To.Format(time.DateOnly))
		case p.From.After(last):
			return Signed{}, fmt.Errorf("%w (statement %s, %s to %s)", ErrOutOfOrder, p.ID, p.From.Format(time.DateOnly), p.To.Format(time.DateOnly))
		}
	}
	// Every event the client committed is in the reports read below.
	head, err := c.Reports.LedgerPosition(ctx, r.ClientID, 0)
	if err != nil {
		return Signed{}, fmt.Errorf("statement: the client's head: %w", err)
	}
	lines, err := c.lines(ctx, r.ClientID, r.Provider, from, last, head)
	if err != nil {
		return Signed{}, err
	}
	p := Payload{Format: Format, ID: c.IDs.NewID(), ClientID: r.ClientID, Provider: r.Provider, Period: r.Period,
		From: from.Format(time.DateOnly), To: last.Format(time.DateOnly), ClosedAt: now.Format(TimeLayout), ClosedBy: r.Actor,
		Lines: lines}
	pos, hash, err := c.Store.LastEventBefore(ctx, r.ClientID, end)
	if err != nil {
		return Signed{}, err
	}
	if pos > 0 {
		p.Position, p.ChainHash = pos, hex.EncodeToString(hash)
		if p.CheckpointID, err = c.checkpoint(ctx, r.ClientID, pos); err != nil {
			return Signed{}, err
		}
		size, root, err := c.Store.ClientLogAt(ctx, r.ClientID, pos)
		if err != nil {
			return Signed{}, fmt.Errorf("statement: the client's log at %d: %w", pos, err)
		}
		if size > 0 {
			p.LogSize, p.LogRoot = size, base64.StdEncoding.EncodeToString(root)
		}
	}
	priors := make([]Prior, 0, len(prior))
	for _, s := range prior {
		pp, err := Parse(s.Payload)
		if err != nil {
			return Signed{}, fmt.Errorf("statement %s: %w", s.ID, err)
		}
		nowLines, err := c.lines(ctx, r.ClientID, r.Provider, s.From, s.To, head)
		if err != nil {
			return Signed{}, err
		}
		priors = append(priors, Prior{Payload: pp, Now: nowLines})
	}
	if p.Late, err = LateChanges(priors); err != nil {
		return Signed{}, err
	}
	if p.Totals, err = Totals(p.Lines, p.Late); err != nil {
		return Signed{}, err
	}
	if r.Reporting != nil {
		if p.Reporting, err = c.reporting(ctx, r, from, last, head); err != nil {
			return Signed{}, err
		}
	}
	keyID, priv, err := c.Signer.SigningKey(ctx)
	if err != nil {
		return Signed{}, err
	}
	p.KeyID = keyID
	payload, sig, err := Sign(p, priv)
	if err != nil {
		return Signed{}, err
	}
	s := Signed{ID: p.ID, ClientID: r.ClientID, Provider: r.Provider, Period: r.Period, From: from, To: last, ClosedAt: now,
		KeyID: keyID, Payload: payload, Signature: sig, PublicKey: priv.Public().(ed25519.PublicKey)}
	if err := c.Store.Insert(ctx, s, len(prior)); err != nil {
		return Signed{}, err
	}
	return s, nil
}

// lines are provider's figures of the days from..last as the read models
// hold them once they reflect head.
func (c *Closer) lines(ctx context.Context, client, provider string, from, last time.Time, head int64) ([]Line, error) {
	q := projections.ReportQuery{ClientID: client, From: from, To: last, GroupBy: []projections.Dimension{projections.DimProvider}}
	ggr, _, err := c.Reports.GGR(ctx, q, head)
	if err != nil {
		return nil, fmt.Errorf("statement: GGR: %w", err)
	}
	com, _, err := c.Reports.Commission(ctx, q, head)
	if err != nil {
		return nil, fmt.Errorf("statement: commission: %w", err)
	}
	return Lines(provider, ggr, com), nil
}

// checkpoint is the client's checkpoint covering position, made now when
// none does yet (a period closed before the day's checkpoint ran).
func (c *Closer) checkpoint(ctx context.Context, client string, position int64) (int64, error) {
	id, ok, err := c.Store.CheckpointCovering(ctx, client, position)
	if err != nil || ok {
		return id, err
	}
	if err := c.Signer.MakeCheckpoint(ctx); err != nil {
		return 0, fmt.Errorf("statement: make a checkpoint: %w", err)
	}
	id, ok, err = c.Store.CheckpointCovering(ctx, client, position)
	if err == nil && !ok {
		err = fmt.Errorf("statement: no checkpoint covers position %d after making one", position)
	}
	return id, err
}

// reporting is the period's GGR and commission in r.Reporting.
func (c *Closer) reporting(ctx context.Context, r Request, from, last time.Time, head int64) (*Reporting, error) {
	to := *r.Reporting
	q := projections.ReportQuery{ClientID: r.ClientID, From: from, To: last, GroupBy: []projections.Dimension{projections.DimProvider}}
	_, _, totals, _, err := c.Reports.GGRIn(ctx, q, head, to, c.FX)
	if err != nil {
		return nil, fmt.Errorf("statement: GGR in %s: %w", to.Code(), err)
	}
	rows, conv, _, err := c.Reports.CommissionIn(ctx, q, head, to, c.FX)
	if err != nil {
		return nil, fmt.Errorf("statement: commission in %s: %w", to.Code(), err)
	}
	out := &Reporting{Currency: to.Code(), Complete: true}
	missing := map[string]bool{}
	var ggr, com int64
	for _, t := range totals {
		if t.Provider != r.Provider {
			continue
		}
		if !t.Reporting.Complete {
			out.Complete = false
			for _, m := range t.Reporting.Missing {
				for _, d := range m.Days {
					missing[d.Format(time.DateOnly)] = true
				}
			}
		}
		ggr += t.Reporting.GGR
	}
	for i, row := range rows {
		if row.Provider != r.Provider {
			continue
		}
		if !conv[i].Complete {
			out.Complete = false
			for _, d := range conv[i].MissingDays {
				missing[d.Format(time.DateOnly)] = true
			}
		}
		com += conv[i].Commission
	}
	if out.Complete {
		g, cm := domain.FormatMinor(ggr, to.Exponent()), domain.FormatMinor(com, to.Exponent())
		out.GGR, out.Commission = &g, &cm
		return out, nil
	}
	for d := range missing {
		out.MissingRateDays = append(out.MissingRateDays, d)
	}
	slices.Sort(out.MissingRateDays)
	return out, nil
}
