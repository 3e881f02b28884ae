package readstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/pitboss/pitboss/adapters/postgres/readstore/bincopy"
	"github.com/pitboss/pitboss/adapters/postgres/readstore/rowdigest"
	"github.com/pitboss/pitboss/projections"
)

// numberShadow fills the shadow schema's numbering tables (tx_order,
// tx_counts, tx_days, tx_filter_counts, tx_filter_marks) from its history
// rows with seq at or below position (the history watermark): the rule of
// projections.Memory.SetWatermark from an empty numbering, so per client in
// (seq, sub) order — a unique order: seq is an event's position, and a
// game result takes the lowest position of its round's events, which no
// other round shares.
//
// One pass: PostgreSQL sorts the rows by (seq, sub), two integers, and
// streams them; each is numbered as it arrives (projections.Numbering) and
// its tx_order row goes straight back by binary COPY on a second
// connection. Only what is per client, day, type and player (counts,
// ranges, every MarkEvery-th mark) stays in memory, as the rebuild keeps
// per wallet anyway; those tables are written at the end. It replaced five
// set-based statements that sorted every history row four times by text
// partitions (client, type, player), half the finish of a rebuild
// (docs/benchmarks.md, "The numbering in one pass").
func (m *ReadModels) numberShadow(ctx context.Context, position int64) error {
	n, err := m.streamOrder(ctx, position)
	if err != nil {
		return err
	}
	// Its two connections are back in the pool: copyTables takes its own.
	rb := &rebuilt{}
	rb.setNumbering(n.counts(), n.num)
	return m.copyTables(ctx, m.shadow, rb, []rmTable{tableNamed("tx_counts"), tableNamed("tx_days"),
		tableNamed("tx_filter_counts"), tableNamed("tx_filter_marks")})
}

// streamOrder numbers the shadow history up to position as PostgreSQL
// streams it in (seq, sub) order, copying tx_order as it goes.
func (m *ReadModels) streamOrder(ctx context.Context, position int64) (*streamNumbering, error) {
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '256MB'`); err != nil {
		return nil, fmt.Errorf("number the shadow history: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT client_id, type, player_id, seq, sub, id, created_at FROM `+
		pgx.Identifier{m.shadow, "transactions"}.Sanitize()+` WHERE seq <= $1 ORDER BY seq, sub`, position)
	if err != nil {
		return nil, fmt.Errorf("read the shadow history: %w", err)
	}
	defer rows.Close()
	n := newStreamNumbering()
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	src := bincopy.NewStream(func(b []byte) ([]byte, bool, error) {
		if !rows.Next() {
			return b, false, rows.Err()
		}
		return n.add(b, rows.RawValues())
	})
	if _, err := conn.Conn().PgConn().CopyFrom(ctx, src, `COPY `+pgx.Identifier{m.shadow, "tx_order"}.Sanitize()+
		` (client_id, rn, id) FROM STDIN WITH (FORMAT binary)`); err != nil {
		return nil, fmt.Errorf("number the shadow history: %w", err)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the shadow history: %w", err)
	}
	return n, nil
}

// pgEpoch is the zero of PostgreSQL's binary timestamps.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// streamNumbering numbers history rows as numberShadow streams them.
type streamNumbering struct {
	num     projections.Numbering
	clients map[string]*int64 // rows numbered per client
	strs    map[string]string // each client, type and player once
	scratch [8]byte
}

func newStreamNumbering() *streamNumbering {
	return &streamNumbering{num: projections.NewNumbering(), clients: map[string]*int64{}, strs: map[string]string{}}
}

// intern is b as a string, allocated once per distinct value.
func (n *streamNumbering) intern(b []byte) string {
	if s, ok := n.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	n.strs[s] = s
	return s
}

// add numbers the row raw (client_id, type, player_id, seq, sub, id,
// created_at in PostgreSQL's binary form) and appends its tx_order row
// (client_id, rn, id) to b.
func (n *streamNumbering) add(b []byte, raw [][]byte) ([]byte, bool, error) {
	if len(raw) != 7 || raw[0] == nil || raw[1] == nil || len(raw[3]) != 8 || len(raw[4]) != 2 || len(raw[5]) != 16 || len(raw[6]) != 8 {
		return b, false, fmt.Errorf("a history row not in the expected binary form")
	}
	client := n.intern(raw[0])
	rows, ok := n.clients[client]
	if !ok {
		rows = new(int64)
		n.clients[client] = rows
	}
	*rows++
	row := projections.NumberedRow{ClientID: client, Type: n.intern(raw[1]),
		Seq: int64(binary.BigEndian.Uint64(raw[3])), Sub: int(int16(binary.BigEndian.Uint16(raw[4]))),
		CreatedAt: pgEpoch.Add(time.Duration(int64(binary.BigEndian.Uint64(raw[6]))) * time.Microsecond)}
	if raw[2] != nil {
		row.PlayerID = n.intern(raw[2])
	}
	n.num.Add(row)
	b = bincopy.AppendFieldCount(b, 3)
	b = bincopy.AppendField(b, raw[0])
	b = bincopy.AppendField(b, binary.BigEndian.AppendUint64(n.scratch[:0], uint64(*rows)))
	b = bincopy.AppendField(b, raw[5])
	return b, true, nil
}

// counts is the rows numbered per client.
func (n *streamNumbering) counts() map[string]int64 {
	c := make(map[string]int64, len(n.clients))
	for k, v := range n.clients {
		c[k] = *v
	}
	return c
}

// diffShadowTable compares a table of the shadow schema, read in key order
// on a connection of its own, with the live table in the snapshot tx.
func (m *ReadModels) diffShadowTable(ctx context.Context, tx pgx.Tx, tb rmTable, examples int) (TableDiff, error) {
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return TableDiff{}, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT `+selectList(tb)+` FROM `+pgx.Identifier{m.shadow, tb.name}.Sanitize()+` ORDER BY `+tb.order)
	if err != nil {
		return TableDiff{}, fmt.Errorf("read rebuilt %s: %w", tb.name, err)
	}
	defer rows.Close()
	return m.diffTable(ctx, tx, tb, queryRows{rows: rows}, examples, "")
}

// diffByDigest compares a shadow table with the live one by digest
// (rowdigest) before reading any row: equal digests end the comparison;
// an empty live table makes every rebuilt row missing, and only the first
// examples are read. ok is false when the rows must be read and merged
// (diffShadowTable).
func (m *ReadModels) diffByDigest(ctx context.Context, tx pgx.Tx, tb rmTable, salt string, examples int) (d TableDiff, ok bool, err error) {
	exprs, shadow := selectList(tb), pgx.Identifier{m.shadow, tb.name}.Sanitize()
	var live, rebuilt rowdigest.Digest
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		live, err = rowdigest.Of(gctx, tx, exprs, m.t(tb.name), tb.where, salt)
		return err
	})
	g.Go(func() (err error) { rebuilt, err = rowdigest.Of(gctx, m.pool, exprs, shadow, "", salt); return err })
	if err := g.Wait(); err != nil {
		return d, false, fmt.Errorf("compare %s: %w", tb.name, err)
	}
	d = TableDiff{Table: tb.name, Live: live.Rows, Rebuilt: rebuilt.Rows}
	switch {
	case live == rebuilt:
		d.ByDigest = true
		return d, true, nil
	case live.Rows > 0:
		return TableDiff{}, false, nil
	}
	d.Missing = rebuilt.Rows
	rows, err := m.pool.Query(ctx, `SELECT `+exprs+` FROM `+shadow+` ORDER BY `+tb.order+` LIMIT `+strconv.Itoa(examples))
	if err != nil {
		return d, false, fmt.Errorf("read rebuilt %s: %w", tb.name, err)
	}
	src := queryRows{rows: rows}
	defer rows.Close()
	for {
		row, more, err := src.next()
		if err != nil {
			return d, false, fmt.Errorf("read rebuilt %s: %w", tb.name, err)
		}
		if !more {
			return d, true, nil
		}
		d.Examples = append(d.Examples, fmt.Sprintf("%s %s: missing from the live table", tb.name, keyText(tb, row)))
	}
}
