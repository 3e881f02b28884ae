package auditstore

import (
	"context"
	"encoding/hex"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/audit"
)

// Checks of VerifyCheckpoint beside the chain's.
const (
	CheckCheckpointPosition = "checkpoint_position"
	CheckCheckpointTotals   = "checkpoint_totals"
)

// VerifyCheckpoint recomputes, in one snapshot, what the checkpoint p
// states from the event rows: it walks the chain from position 1 to
// p.Position (every link and hash recomputed from the stored bodies, the
// bodies decoded, double entry), anchors p.ChainHash at p.Position, and
// re-adds the postings the checkpoint covers (every event's, or the
// client's own) to compare with p.Totals. For a client, its last event at
// or below p.Position must be at p.Position. The signature is the
// caller's to check (audit.VerifyCheckpointSignature).
func (a *Audit) VerifyCheckpoint(ctx context.Context, p audit.CheckpointPayload, batch int) ([]audit.CheckResult, error) {
	if batch <= 0 {
		batch = 2000
	}
	hash, err := hex.DecodeString(p.ChainHash)
	if err != nil {
		return nil, fmt.Errorf("checkpoint chain_hash: %w", err)
	}
	tx, err := a.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("begin snapshot: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // read only
	chain := audit.NewChain(audit.DefaultExamples, audit.Anchor{Position: p.Position, Hash: hash})
	tally := audit.NewCheckpointTally(p.ClientID)
	workers := max(1, min(runtime.GOMAXPROCS(0), 8))
	exs := make([]audit.Examined, batch)
	var after int64
	for {
		recs, err := readEvents(ctx, tx, after, p.Position, batch, make([]audit.Record, 0, batch))
		if err != nil {
			return nil, err
		}
		examineAll(recs, exs, workers)
		for i := range recs {
			chain.Add(recs[i], exs[i])
			tally.Add(recs[i])
		}
		if len(recs) < batch {
			break
		}
		after = recs[len(recs)-1].Position
	}
	checks, _ := chain.Results()

	pos := audit.CheckResult{Name: CheckCheckpointPosition, Rows: 1, OK: true}
	if last, _ := tally.Last(); last != p.Position {
		pos.OK, pos.Failures = false, 1
		what := "the platform's head"
		if p.ClientID != "" {
			what = "client " + p.ClientID + "'s last event"
		}
		pos.Examples = []audit.Finding{{Position: p.Position, Field: "position", Stored: fmt.Sprint(p.Position), Recomputed: fmt.Sprint(last),
			Message: fmt.Sprintf("the checkpoint puts %s at %d, the events at %d", what, p.Position, last)}}
	}
	checks = append(checks, pos)

	tot := audit.CheckResult{Name: CheckCheckpointTotals, OK: true}
	got := tally.Totals()
	tot.Rows = int64(len(got))
	if !slices.Equal(got, p.Totals) {
		tot.OK, tot.Failures = false, 1
		tot.Examples = []audit.Finding{{Position: p.Position, Field: "totals", Stored: totalsText(p.Totals), Recomputed: totalsText(got),
			Message: fmt.Sprintf("the checkpoint's totals %s ≠ the events' %s", totalsText(p.Totals), totalsText(got))}}
	}
	if probs := tally.Problems(); len(probs) > 0 {
		tot.OK = false
		tot.Failures += int64(len(probs))
		tot.Note = strings.Join(probs[:min(len(probs), audit.DefaultExamples)], "; ")
	}
	checks = append(checks, tot)
	return checks, nil
}

func totalsText(ts []audit.CurrencyTotal) string {
	if len(ts) == 0 {
		return "(none)"
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s %d postings sum %s debits %s", t.Currency, t.Postings, t.Sum, t.Debits)
	}
	return strings.Join(parts, ", ")
}
