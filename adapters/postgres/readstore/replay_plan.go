package readstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// replayPass is the clients rebuilt together, and their events.
type replayPass struct {
	clients []string
	events  int64
}

// replayPasses packs clients into passes of at most budget events, first
// fit in decreasing size (a client over the budget alone); passes are in
// the order of their largest client, clients within a pass in byte order.
func replayPasses(clients []eventClient, budget int64) []replayPass {
	bySize := slices.Clone(clients)
	slices.SortStableFunc(bySize, func(a, b eventClient) int { return cmp.Compare(b.events, a.events) })
	var passes []replayPass
	for _, c := range bySize {
		i := slices.IndexFunc(passes, func(p replayPass) bool { return p.events+c.events <= budget })
		if i < 0 {
			passes = append(passes, replayPass{})
			i = len(passes) - 1
		}
		passes[i].clients = append(passes[i].clients, c.client)
		passes[i].events += c.events
	}
	for _, p := range passes {
		slices.Sort(p.clients)
	}
	return passes
}

// eventClient is one client of the event store and how many events name it.
type eventClient struct {
	client string
	events int64
}

// eventClients lists the clients the store's streams name, in byte order,
// with the number of events, the total and the head position.
func eventClients(ctx context.Context, tx pgx.Tx) ([]eventClient, int64, int64, error) {
	rows, _ := tx.Query(ctx, `SELECT split_part(stream_id, ':', 2) AS client, count(*), max(position)
		FROM events GROUP BY 1 ORDER BY split_part(stream_id, ':', 2) COLLATE "C"`)
	var (
		out         []eventClient
		total, head int64
	)
	var (
		c     eventClient
		maxID int64
	)
	_, err := pgx.ForEachRow(rows, []any{&c.client, &c.events, &maxID}, func() error {
		out = append(out, c)
		total += c.events
		head = max(head, maxID)
		return nil
	})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("count events per client: %w", err)
	}
	return out, total, head, nil
}
