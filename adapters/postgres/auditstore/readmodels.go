package auditstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/audit"
)

// checkReadModels rebuilds the read models from the events and compares
// them with the live tables (readstore's Compare, as of the live
// checkpoints, so the projectors' lag is not a difference): Verify's
// read-model check.
func checkReadModels(ctx context.Context, pool *pgxpool.Pool, examples int, progress func(audit.Progress)) (audit.CheckResult, error) {
	res := audit.CheckResult{Name: audit.CheckReadModels}
	rep, err := readstore.NewReadModels(pool).Compare(ctx, readstore.ReplayOptions{Examples: examples,
		Progress: func(p readstore.ReplayProgress) {
			progress(audit.Progress{Phase: "read_models", Done: p.Events, Total: p.Total, Elapsed: p.Elapsed})
		}})
	if err != nil {
		return res, fmt.Errorf("compare read models: %w", err)
	}
	for _, t := range rep.Tables {
		res.Rows += max(t.Live, t.Rebuilt)
		for _, ex := range t.Examples {
			if len(res.Examples) < examples {
				res.Examples = append(res.Examples, audit.Finding{Key: t.Table, Message: ex})
			}
		}
	}
	res.Failures = rep.Differences()
	res.OK = res.Failures == 0
	res.Note = fmt.Sprintf("rebuilt from %d events as of the live checkpoints", rep.Events)
	return res, nil
}
