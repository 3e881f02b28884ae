package readstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/readstore/bincopy"
	"github.com/pitboss/pitboss/projections"
)

// The numbering of a rebuilt history in one pass (pitboss replay and
// verify, docs/read-models.md "Replay", step 4): per client in (seq,
// sub) order — a unique order: seq is an event's position, and a game
// result takes the lowest position of its round's events, which no other
// round shares — by the rule of projections.Memory.SetWatermark from an
// empty numbering (projections.Numbering).
//
// PostgreSQL sorts the rows by (seq, sub), two integers, and streams them;
// each is numbered as it arrives, and its tx_order row goes straight back
// by binary COPY on a second connection. Only what is per client, day,
// type and player (counts, day ranges, every MarkEvery-th mark) stays in
// memory — it grows with the wallets, as the rebuild's balances do, not
// with the events — for the caller to write. It replaced five set-based
// statements that sorted every history row four times by text partitions
// (client, type, player): half the finish of a rebuild (docs/benchmarks.md,
// "Read side, replay and verify").

// historyNumbering is what orderHistory counted besides tx_order: the rows
// numbered per client (tx_counts), and per day, type and player.
type historyNumbering struct {
	counts    map[string]int64
	numbering projections.Numbering
}

// orderHistory numbers schema's history (its transactions) up to position
// as PostgreSQL streams it in (seq, sub) order, and copies schema's
// tx_order as it goes. It holds two connections of pool until it returns.
func orderHistory(ctx context.Context, pool *pgxpool.Pool, schema string, position int64) (historyNumbering, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return historyNumbering{}, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '256MB'`); err != nil {
		return historyNumbering{}, fmt.Errorf("number the shadow history: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT client_id, type, player_id, seq, sub, id, created_at FROM `+
		pgx.Identifier{schema, "transactions"}.Sanitize()+` WHERE seq <= $1 ORDER BY seq, sub`, position)
	if err != nil {
		return historyNumbering{}, fmt.Errorf("read the shadow history: %w", err)
	}
	defer rows.Close()
	n := newStreamNumbering()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return historyNumbering{}, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	src := bincopy.NewStream(func(b []byte) ([]byte, bool, error) {
		if !rows.Next() {
			return b, false, rows.Err()
		}
		return n.add(b, rows.RawValues())
	})
	if _, err := conn.Conn().PgConn().CopyFrom(ctx, src, `COPY `+pgx.Identifier{schema, "tx_order"}.Sanitize()+
		` (client_id, rn, id) FROM STDIN WITH (FORMAT binary)`); err != nil {
		return historyNumbering{}, fmt.Errorf("number the shadow history: %w", err)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return historyNumbering{}, fmt.Errorf("read the shadow history: %w", err)
	}
	return historyNumbering{counts: n.clients, numbering: n.num}, nil
}

// streamNumbering numbers history rows as orderHistory streams them.
type streamNumbering struct {
	num     projections.Numbering
	clients map[string]int64  // rows numbered per client
	strs    map[string]string // each client, type and player once
	scratch [8]byte
}

func newStreamNumbering() *streamNumbering {
	return &streamNumbering{num: projections.NewNumbering(), clients: map[string]int64{}, strs: map[string]string{}}
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
	n.clients[client]++
	rn := n.clients[client]
	row := projections.NumberedRow{ClientID: client, Type: n.intern(raw[1]),
		Seq: int64(binary.BigEndian.Uint64(raw[3])), Sub: int(int16(binary.BigEndian.Uint16(raw[4]))),
		CreatedAt: bincopy.Epoch.Add(time.Duration(int64(binary.BigEndian.Uint64(raw[6]))) * time.Microsecond)}
	if raw[2] != nil {
		row.PlayerID = n.intern(raw[2])
	}
	n.num.Add(row)
	b = bincopy.AppendFieldCount(b, 3)
	b = bincopy.AppendField(b, raw[0])
	b = bincopy.AppendField(b, binary.BigEndian.AppendUint64(n.scratch[:0], uint64(rn)))
	b = bincopy.AppendField(b, raw[5])
	return b, true, nil
}
