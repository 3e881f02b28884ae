package pgtest

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// StatementCounter is a pgx tracer that counts a connection's round trips
// (a query, or a pipelined batch) and statements. Set it as
// ConnConfig.Tracer; benchmarks report the counts, which do not depend on
// the machine.
type StatementCounter struct{ RoundTrips, Statements atomic.Int64 }

// Reset sets both counts to zero.
func (c *StatementCounter) Reset() { c.Take() }

// Take returns the counts since the last Take or Reset and sets them to
// zero.
func (c *StatementCounter) Take() (roundTrips, statements int64) {
	return c.RoundTrips.Swap(0), c.Statements.Swap(0)
}

func (c *StatementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.RoundTrips.Add(1)
	c.Statements.Add(1)
	return ctx
}

func (c *StatementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *StatementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.RoundTrips.Add(1)
	return ctx
}

func (c *StatementCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.Statements.Add(1)
}

func (c *StatementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
