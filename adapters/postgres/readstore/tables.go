package readstore

import (
	"github.com/pitboss/pitboss/projections"
)

// tableRows yields the rows of one rebuilt table in key order.
type tableRows struct {
	n   int
	row func(i int) []any
	// appendRow, when set, appends row i in COPY's binary form, the same
	// bytes as row(i) would give (the shadow copy uses it).
	appendRow func(b []byte, i int) ([]byte, error)
}

// rmTable describes one read-model table for the shadow copy and the diff.
type rmTable struct {
	name string
	// schema, if set, is where the table is (a staging table); otherwise
	// the caller says.
	schema string
	// cols are the stored columns (generated ones left out), selects the
	// expressions the diff reads them with.
	cols, selects []string
	types         []colType
	key           int // the first key columns are the key
	// where, if set, leaves live rows out of the comparison: a batch that
	// only skipped or refused an event of a new stream leaves its
	// checkpoint at version 0, which is no state at all.
	where string
	order string // the ORDER BY matching the rebuilt order
	// client is the expression of a row's client; "" for a table of the
	// whole store (positions).
	client string
	rows   func(*rebuilt) tableRows
}

// clientTables hold rows of one client each; globalTables of the store.
var clientTables, globalTables = splitTables(rmTables)

func splitTables(all []rmTable) (perClient, global []rmTable) {
	for _, tb := range all {
		if tb.client != "" {
			perClient = append(perClient, tb)
		} else {
			global = append(global, tb)
		}
	}
	return perClient, global
}

var rmTables = []rmTable{
	{name: "transactions", client: "client_id", key: 1, order: "id",
		types: txRowTypes, cols: txRowColumns,
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.txs), row: func(i int) []any {
				return txRowArgs(rb.txs[i], storedStatus(rb.txs[i]))
			}, appendRow: func(b []byte, i int) ([]byte, error) {
				return appendTxRow(b, rb.txs[i], storedStatus(rb.txs[i]))
			}}
		}},
	{name: "tx_order", client: "client_id", key: 2, order: `client_id COLLATE "C", rn`, cols: []string{"client_id", "rn", "id"},
		types: []colType{colText, colInt8, colUUID},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.order), row: func(i int) []any {
				o := rb.order[i]
				return []any{o.client, o.rn, o.id}
			}}
		}},
	{name: "tx_counts", client: "client_id", key: 1, order: `client_id COLLATE "C"`, cols: []string{"client_id", "rows"},
		types: []colType{colText, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.counts), row: func(i int) []any { return []any{rb.counts[i].client, rb.counts[i].rn} }}
		}},
	{name: "tx_days", client: "client_id", key: 2, order: `client_id COLLATE "C", day`, cols: []string{"client_id", "day", "min_seq", "max_seq"},
		types: []colType{colText, colDate, colInt8, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.days), row: func(i int) []any {
				d := rb.days[i]
				return []any{d.client, d.day, d.min, d.max}
			}}
		}},
	{name: "tx_filter_counts", client: "client_id", key: 3, order: `client_id COLLATE "C", filter COLLATE "C", value COLLATE "C"`,
		cols: []string{"client_id", "filter", "value", "rows"}, types: []colType{colText, colText, colText, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.filterCounts), row: func(i int) []any {
				c := rb.filterCounts[i]
				return []any{c.key.ClientID, c.key.Filter, c.key.Value, c.rows}
			}}
		}},
	{name: "tx_filter_marks", client: "client_id", key: 4, order: `client_id COLLATE "C", filter COLLATE "C", value COLLATE "C", rn`,
		cols:  []string{"client_id", "filter", "value", "rn", "seq", "sub"},
		types: []colType{colText, colText, colText, colInt8, colInt8, colInt2},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.marks), row: func(i int) []any {
				k := rb.marks[i]
				return []any{k.key.ClientID, k.key.Filter, k.key.Value, k.mark.Rank, k.mark.Seq, k.mark.Sub}
			}}
		}},
	{name: "balances", client: "client_id", key: 1, order: `account_id COLLATE "C"`,
		cols:  []string{"account_id", "kind", "client_id", "player_id", "currency", "scale", "balance", "position"},
		types: []colType{colText, colText, colText, colText, colText, colInt2, colInt8, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.balances), row: func(i int) []any {
				b := rb.balances[i]
				return []any{string(b.Account), b.Kind, b.ClientID, nullText(b.PlayerID), b.Currency, b.Scale, b.Balance, b.Position}
			}}
		}},
	{name: "ggr_daily", client: "client_id", key: 5, order: `client_id COLLATE "C", day, provider COLLATE "C", game COLLATE "C", currency COLLATE "C"`,
		cols: []string{"client_id", "day", "provider", "game", "currency", "scale", "bets", "bet_refunds", "wins",
			"win_reversals", "promo_bets", "promo_bet_refunds", "promo_wins", "promo_win_reversals", "rounds",
			"jackpot_wins", "jackpot_win_reversals"},
		types: []colType{colText, colDate, colText, colText, colText, colInt2, colInt8, colInt8, colInt8, colInt8, colInt8,
			colInt8, colInt8, colInt8, colInt8, colInt8, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.ggr), row: func(i int) []any {
				g := rb.ggr[i]
				return []any{g.ClientID, g.Day, g.Provider, g.Game, g.Currency, g.Scale, g.Bets, g.BetRefunds, g.Wins,
					g.WinReversals, g.PromoBets, g.PromoBetRefunds, g.PromoWins, g.PromoWinReversals, g.Rounds,
					g.JackpotWins, g.JackpotWinReversals}
			}}
		}},
	{name: "ggr_players", client: "client_id", key: 6, order: `client_id COLLATE "C", day, provider COLLATE "C", game COLLATE "C", currency COLLATE "C", player_id COLLATE "C"`,
		cols:  []string{"client_id", "day", "provider", "game", "currency", "player_id"},
		types: []colType{colText, colDate, colText, colText, colText, colText},
		rows:  func(rb *rebuilt) tableRows { return memberRows(rb.players) }},
	{name: "ggr_player_months", client: "client_id", key: 4, order: `client_id COLLATE "C", month, currency COLLATE "C", player_id COLLATE "C"`,
		cols:  []string{"client_id", "month", "currency", "player_id", "days"},
		types: []colType{colText, colDate, colText, colText, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.months), row: func(i int) []any {
				r := rb.months[i]
				return []any{r.key.ClientID, r.key.Month, r.key.Currency, r.key.PlayerID, r.days}
			}}
		}},
	{name: "ggr_rounds", client: "client_id", key: 4, order: `client_id COLLATE "C", provider COLLATE "C", currency COLLATE "C", round_key COLLATE "C"`,
		cols:  []string{"client_id", "provider", "currency", "round_key", "day", "game"},
		types: []colType{colText, colText, colText, colText, colDate, colText},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.rounds), row: func(i int) []any {
				r := rb.rounds[i]
				return []any{r.key.ClientID, r.key.Provider, r.key.Currency, r.key.Round, r.start.Day, r.start.Game}
			}}
		}},
	{name: "checkpoints", client: "split_part(stream_id, ':', 2)", key: 2, order: `projection COLLATE "C", stream_id COLLATE "C"`, where: "version > 0",
		cols:  []string{"projection", "stream_id", "version", "position"},
		types: []colType{colText, colText, colInt8, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.checkpoints), row: func(i int) []any {
				c := rb.checkpoints[i]
				return []any{c.projection, c.stream, c.version, c.position}
			}}
		}},
	{name: "positions", key: 1, order: `projection COLLATE "C"`, cols: []string{"projection", "position"},
		types: []colType{colText, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.positions), row: func(i int) []any {
				return []any{rb.positions[i].projection, rb.positions[i].position}
			}}
		}},
}

func memberRows(ms []projections.GGRMember) tableRows {
	return tableRows{n: len(ms), row: func(i int) []any {
		m := ms[i]
		return []any{m.ClientID, m.Day, m.Provider, m.Game, m.Currency, m.Member}
	}}
}
