// Package numbering holds the set-based numbering of a rebuilt history
// (pitboss replay and verify, docs/read-models.md "Replay", step 4): the
// statements that fill a schema's tx_order, tx_counts, tx_days,
// tx_filter_counts and tx_filter_marks from its transactions.
package numbering

import (
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/projections"
)

// SQL numbers schema's history rows with seq at or below $1 (the history
// watermark), set-based, into its empty numbering tables: the rule of
// projections.Memory.SetWatermark from an empty numbering (and of the
// projector's sequence statements from position 0), so per client in
// (seq, sub) order — a unique order within a client: seq is an event's
// position, and a game result takes the lowest position of its round's
// events, which no other round shares — counted per client and type and
// per client and player, every projections.MarkEvery-th marked. Each
// statement is independent of the others. The partitions are sorted by
// bytes (COLLATE "C"): they are the same partitions, and a sort of every
// history row by the database's collation took about twice as long.
func SQL(schema string) []string {
	t := func(name string) string { return pgx.Identifier{schema, name}.Sanitize() }
	numbered := `FROM ` + t("transactions") + ` WHERE seq <= $1`
	return []string{
		`INSERT INTO ` + t("tx_order") + ` (client_id, rn, id)
			SELECT client_id, row_number() OVER (PARTITION BY client_id COLLATE "C" ORDER BY seq, sub), id ` + numbered,
		`INSERT INTO ` + t("tx_counts") + ` (client_id, rows)
			SELECT client_id, count(*) ` + numbered + ` GROUP BY client_id`,
		`INSERT INTO ` + t("tx_days") + ` (client_id, day, min_seq, max_seq)
			SELECT client_id, (created_at AT TIME ZONE 'UTC')::date, min(seq), max(seq) ` + numbered + ` GROUP BY 1, 2`,
		`INSERT INTO ` + t("tx_filter_counts") + ` (client_id, filter, value, rows)
			SELECT client_id, '` + projections.FilterType + `', type, count(*) ` + numbered + ` GROUP BY client_id, type
			UNION ALL
			SELECT client_id, '` + projections.FilterPlayer + `', player_id, count(*) ` + numbered + `
			  AND player_id IS NOT NULL GROUP BY client_id, player_id`,
		`INSERT INTO ` + t("tx_filter_marks") + ` (client_id, filter, value, rn, seq, sub)
			SELECT client_id, filter, value, rn, seq, sub FROM (
				SELECT client_id, '` + projections.FilterType + `' AS filter, type AS value, seq, sub,
				       row_number() OVER (PARTITION BY client_id COLLATE "C", type COLLATE "C" ORDER BY seq, sub) AS rn ` + numbered + `
				UNION ALL
				SELECT client_id, '` + projections.FilterPlayer + `', player_id, seq, sub,
				       row_number() OVER (PARTITION BY client_id COLLATE "C", player_id COLLATE "C" ORDER BY seq, sub) ` + numbered + `
				  AND player_id IS NOT NULL) ranked
			WHERE rn % ` + strconv.Itoa(projections.MarkEvery) + ` = 0`,
	}
}
