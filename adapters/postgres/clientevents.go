package postgres

// A client's events are read on events_client_position_idx (migration
// 00008: split_part(stream_id, ':', 2), position): the stream id names the
// client, and the body's data.client_id must agree so that an event is only
// ever shown to the client it is about.
//
// The obvious form, WHERE split_part(...) = $1 AND body->'data'->>'client_id'
// = $1 ORDER BY position DESC LIMIT 1, leaves Postgres a choice it gets
// wrong whenever its estimate of the client's rows is low (a client that
// grew since the last ANALYZE, and the body test's default selectivity of
// 0.5 % makes every estimate low): a bitmap scan of every event of the
// client, then a sort for the one row wanted. BenchmarkClientHead measured
// it at 20.7 ms for a client of 5,000 events (linear in its events: seconds
// for a client of millions), on every read that reports X-Ledger-Position.
// The forms below compare the index's whole key as a row, ordered by the
// whole key, so the only plan that does not read everything on one side of
// the key is the ordered index scan: it stops at the first row (0.03 ms
// whatever the client's size). The client and body tests are applied to
// the rows the scan returns, outside the LIMIT, so the scan never walks
// into another client's rows looking for a match.

// ClientKey is the indexed expression naming an event's client.
const ClientKey = `split_part(stream_id, ':', 2)`

// ClientEventAtOrBefore is a query of cols (column names of events) for the
// client's last event at or below the position expression atMost, no row
// when it has none there. client is the parameter holding the client id
// ("$1"); atMost may be a parameter or a correlated column.
func ClientEventAtOrBefore(cols, client, atMost string) string {
	return `SELECT ` + cols + ` FROM (
  SELECT ` + cols + `, ` + ClientKey + ` AS client_key, body->'data'->>'client_id' AS body_client
    FROM events
   WHERE (` + ClientKey + `, position) <= (` + client + `::text, ` + atMost + `)
   ORDER BY ` + ClientKey + ` DESC, position DESC
   LIMIT 1) last_event
 WHERE client_key = ` + client + ` AND body_client = ` + client
}

// ClientEventsAfter is a query of cols for up to limit of the client's
// events after the position after, in position order. A row whose body
// names another client is left out of the page (the writer never makes
// one), so a page may be shorter than limit before the client's last event.
func ClientEventsAfter(cols, client, after, limit string) string {
	return `SELECT ` + cols + ` FROM (
  SELECT ` + cols + `, position AS page_position, ` + ClientKey + ` AS client_key,
         body->'data'->>'client_id' AS body_client
    FROM events
   WHERE (` + ClientKey + `, position) > (` + client + `::text, ` + after + `)
   ORDER BY ` + ClientKey + `, position
   LIMIT ` + limit + `) page
 WHERE client_key = ` + client + ` AND body_client = ` + client + `
 ORDER BY page_position`
}
