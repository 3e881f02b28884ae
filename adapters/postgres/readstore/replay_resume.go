package readstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/adapters/postgres/readstore/replaypass"
)

// ResumeReport tells whether a resumable rebuild resumed an interrupted one.
type ResumeReport struct {
	// From is the last pass (slice) of the interrupted rebuild, 0 when the
	// rebuild started afresh; the rebuild went on with pass From+1 of
	// Passes, after Position.
	From, Passes int
	Position     int64
	// Reason says why an interrupted rebuild that was found was not
	// resumed (--restart, other arguments, ...).
	Reason string
}

// startSliced readies the shadow and staging schemas of a rebuild in
// slices: empty ones, or with Resumable those of an interrupted rebuild
// with the same arguments, rewound to its last recorded pass, whose
// carried state and counts s then starts from.
func (m *ReadModels) startSliced(ctx context.Context, opts ReplayOptions, s *slicer) error {
	rep := s.rep
	rep.Resume.Passes = s.progress.passes
	if !opts.Resumable || !opts.Full {
		return m.createSliced(ctx, nil, "")
	}
	rec := replaypass.New(m.pool, m.staging, pgx.Identifier{m.shadow, "transactions"}.Sanitize())
	fingerprint := fmt.Sprintf("full slice=%d %s", s.size, opts.Fingerprint)
	st, err := rec.Load(ctx, fingerprint)
	if err != nil {
		return err
	}
	state, err := m.shadowState(ctx, m.pool)
	if err != nil {
		return err
	}
	switch {
	case !st.Found:
	case opts.Restart:
		rep.Resume.Reason = "--restart"
	case st.Reason != "":
		rep.Resume.Reason = st.Reason
	case state != "":
		rep.Resume.Reason = "its shadow schema is marked " + state
	default:
		return m.resumeSliced(ctx, rec, st.Last, s)
	}
	s.rec, s.track = rec, replaypass.NewTracker(0)
	return m.createSliced(ctx, rec, fingerprint)
}

// createSliced creates empty shadow and staging schemas, and the record of
// a resumable rebuild in the staging schema.
func (m *ReadModels) createSliced(ctx context.Context, rec *replaypass.Log, fingerprint string) error {
	if err := m.createShadow(ctx); err != nil {
		return err
	}
	if err := m.createStaging(ctx); err != nil {
		return err
	}
	if rec != nil {
		return rec.Create(ctx, fingerprint)
	}
	return nil
}

// resumeSliced rewinds the schemas to pass last (dropping the rows of a
// pass being written when the rebuild stopped: every table a pass appends
// to has a position, or is one the finish reads as a set, where a row
// twice counts once) and restores the state s carries after it.
func (m *ReadModels) resumeSliced(ctx context.Context, rec *replaypass.Log, last replaypass.Pass, s *slicer) error {
	tables := []string{pgx.Identifier{m.shadow, "transactions"}.Sanitize()}
	for _, t := range []string{"results", "marks", "gametx"} {
		tables = append(tables, pgx.Identifier{m.staging, t}.Sanitize())
	}
	if err := rec.Rewind(ctx, last, tables); err != nil {
		return err
	}
	s.rec, s.track = rec, replaypass.NewTracker(last.Position)
	if err := rec.Carried(ctx, last.N, func(c replaypass.Carry) error { return s.track.Restore(s.mem, c) }); err != nil {
		return err
	}
	s.slices, s.last, s.history = last.N, last.Position, last.History
	s.rep.Events, s.rep.Skipped, s.rep.Head = last.Events, last.Skipped, last.Position
	s.rep.Resume.From, s.rep.Resume.Position = last.N, last.Position
	s.progress.pass = last.N + 1
	return nil
}

// record records a written slice, in a resumable rebuild.
func (s *slicer) record(ctx context.Context, pass replaypass.Pass, carry []replaypass.Carry) error {
	if s.afterWrite != nil {
		if err := s.afterWrite(pass.N); err != nil {
			return err
		}
	}
	if s.rec == nil {
		return nil
	}
	return s.rec.Record(ctx, pass, carry)
}
