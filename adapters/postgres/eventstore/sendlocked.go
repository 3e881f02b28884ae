package eventstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// sendLocked sends a fast write as one pipeline, as SendBatch would, with
// one difference: a Flush request after the lock statement makes the
// server answer the lock the moment it is granted instead of with the
// rest at the commit. locked is called then — or when the write ends,
// whichever is first — so the batch after this one is sent only once this
// one holds the lock: had both waited for it at once, the server could
// grant it to the later one first, whose head check would then fail.
//
// The statements are prepared on conn once (pgx keeps them by name); the
// conn's BatchTracer, if any, sees the pipeline as it would a batch.
func (w pendingWrite) sendLocked(ctx context.Context, conn *pgx.Conn, locked func()) (err error) {
	defer locked()
	const lockAt = 1 // BEGIN, then the lock
	queued := w.q.QueuedQueries
	tracer, _ := conn.Config().Tracer.(pgx.BatchTracer)
	if tracer != nil {
		ctx = tracer.TraceBatchStart(ctx, conn, pgx.TraceBatchStartData{Batch: w.q})
		defer func() { tracer.TraceBatchEnd(ctx, conn, pgx.TraceBatchEndData{Err: err}) }()
	}
	// Everything that can fail before the pipeline starts does: a
	// pipeline closed with requests unsent closes the connection.
	sds := make([]*pgconn.StatementDescription, len(queued))
	params := make([]pgx.ExtendedQueryBuilder, len(queued))
	for i, qq := range queued {
		if sds[i], err = conn.Prepare(ctx, statementName(qq.SQL), qq.SQL); err != nil {
			return fmt.Errorf("prepare %q: %w", qq.SQL, err)
		}
		if err = params[i].Build(conn.TypeMap(), sds[i], qq.Arguments); err != nil {
			return fmt.Errorf("encode the arguments of %q: %w", qq.SQL, err)
		}
	}
	p := conn.PgConn().StartPipeline(ctx)
	for i := range queued {
		p.SendQueryStatement(sds[i], params[i].ParamValues, params[i].ParamFormats, params[i].ResultFormats)
		if i == lockAt {
			p.SendFlushRequest()
		}
	}
	if err := p.Sync(); err != nil {
		_ = p.Close()
		return fmt.Errorf("send: %w", err)
	}
	r := &pipelineResults{p: p, queued: queued, tracer: tracer, ctx: ctx, conn: conn}
	r.after = func(i int) {
		if i == lockAt {
			locked()
		}
	}
	err = readWrite(r, true, w.events, w.accounts, w.newRecs, w.changedRecs)
	if cerr := p.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("commit: %w", cerr)
	}
	return err
}

// statementName is the name a write statement is prepared under.
func statementName(sql string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(sql))
	return "pitboss_w_" + strconv.FormatUint(h.Sum64(), 36)
}

// pipelineResults reads a pipeline's answers one statement at a time, as
// pgx.BatchResults.Exec does.
type pipelineResults struct {
	p      *pgconn.Pipeline
	queued []*pgx.QueuedQuery
	i      int
	after  func(i int) // told when statement i succeeded
	err    error
	tracer pgx.BatchTracer
	ctx    context.Context
	conn   *pgx.Conn
}

func (r *pipelineResults) Exec() (tag pgconn.CommandTag, err error) {
	if r.err != nil {
		return tag, r.err
	}
	if r.i >= len(r.queued) {
		return tag, errors.New("no statement left to read")
	}
	i := r.i
	r.i++
	defer func() {
		if r.tracer != nil {
			r.tracer.TraceBatchQuery(r.ctx, r.conn, pgx.TraceBatchQueryData{SQL: r.queued[i].SQL,
				Args: r.queued[i].Arguments, CommandTag: tag, Err: err})
		}
	}()
	res, err := r.p.GetResults()
	if err != nil {
		r.err = err
		return tag, err
	}
	rr, ok := res.(*pgconn.ResultReader)
	if !ok {
		r.err = fmt.Errorf("unexpected pipeline result %T", res)
		return tag, r.err
	}
	if tag, err = rr.Close(); err != nil {
		r.err = err
		return tag, err
	}
	r.after(i)
	return tag, nil
}
