package auditstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/audit"
)

// verifyLockClass is the advisory lock class of the verification's
// scratch schemas ("vrfy").
const verifyLockClass = 0x76726679

// checkReadModels rebuilds the read models from the events and compares
// them with the live tables (readstore's Compare, as of the live
// checkpoints, so the projectors' lag is not a difference): Verify's
// read-model check. The rebuild is the replay's, in bounded memory
// (position slices written to scratch schemas of its own, finished and
// compared in PostgreSQL; docs/read-models.md), so a verification's memory
// does not grow with the ledger; the scratch schemas are dropped after.
// One verification runs at a time (a session advisory lock).
func checkReadModels(ctx context.Context, pool *pgxpool.Pool, examples int, progress func(audit.Progress)) (audit.CheckResult, error) {
	res := audit.CheckResult{Name: audit.CheckReadModels}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return res, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext('verify'))`, verifyLockClass); err != nil {
		return res, fmt.Errorf("lock the verification's scratch schemas: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, hashtext('verify'))`, verifyLockClass)
	}()
	rm := readstore.NewReadModels(pool).WithScratch(readstore.VerifyShadowSchema, readstore.VerifyStagingSchema)
	defer func() { _ = rm.DropScratch(context.WithoutCancel(ctx)) }()
	rep, err := rm.Compare(ctx, readstore.ReplayOptions{Examples: examples, Shadow: true,
		Progress: func(p readstore.ReplayProgress) {
			progress(audit.Progress{Phase: "read_models", Done: p.Events, Total: p.Total, Elapsed: p.Elapsed,
				Pass: p.Pass, Passes: p.Passes})
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
