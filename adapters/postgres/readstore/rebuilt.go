package readstore

import (
	"cmp"
	"encoding/binary"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/projections"
)

// rebuilt holds a Memory's rows sorted the way the diff reads the live
// tables.
type rebuilt struct {
	txs          []*projections.Transaction
	order        []orderRow
	counts       []orderRow // rn is the count
	days         []dayRow
	filterCounts []filterCountRow
	marks        []markRow
	balances     []*projections.Balance
	ggr          []*projections.GGRDelta
	players      []projections.GGRMember
	months       []monthRow
	rounds       []roundRow
	checkpoints  []checkpointRow
	positions    []checkpointRow
	// A slice's game-result parts, bets and wins, and rollback marks of
	// rows of earlier slices (replay_sliced.go).
	results, gameTxs []*projections.Transaction
	lateMarks        []projections.RollbackMark
}

type orderRow struct {
	client string
	rn     int64
	id     string
}

type dayRow struct {
	client   string
	day      time.Time
	min, max int64
}

type filterCountRow struct {
	key  projections.FilterValue
	rows int64
}

type markRow struct {
	key  projections.FilterValue
	mark projections.Mark
}

type monthRow struct {
	key  projections.PlayerMonth
	days int64
}

type roundRow struct {
	key   projections.RoundKey
	start projections.RoundStart
}

type checkpointRow struct {
	projection, stream string
	version, position  int64
}

func newRebuilt(m *projections.Memory) *rebuilt {
	rb := &rebuilt{}
	rb.txs = make([]*projections.Transaction, 0, m.Len())
	m.Transactions(func(t *projections.Transaction) { rb.txs = append(rb.txs, t) })
	// The history (most of the rows) is sorted beside the other tables.
	sorted := make(chan struct{})
	go func() {
		defer close(sorted)
		sortByID(rb.txs)
	}()
	defer func() { <-sorted }()
	// Each client's rows are numbered in order already: taking the clients
	// in order needs no sort of the rows.
	clients := slices.Sorted(maps.Keys(m.Order))
	n := 0
	for _, c := range clients {
		n += len(m.Order[c])
	}
	rb.order = make([]orderRow, 0, n)
	counts := make(map[string]int64, len(clients))
	for _, c := range clients {
		ids := m.Order[c]
		for i, id := range ids {
			rb.order = append(rb.order, orderRow{client: c, rn: int64(i + 1), id: id})
		}
		counts[c] = int64(len(ids))
	}
	rb.setNumbering(counts, projections.Numbering{Days: m.Days, FilterCounts: m.FilterCounts, FilterMarks: m.FilterMarks})
	for _, b := range m.Balances {
		rb.balances = append(rb.balances, b)
	}
	slices.SortFunc(rb.balances, func(a, b *projections.Balance) int { return strings.Compare(string(a.Account), string(b.Account)) })
	for _, g := range m.GGR {
		rb.ggr = append(rb.ggr, g)
	}
	slices.SortFunc(rb.ggr, func(a, b *projections.GGRDelta) int { return cmpGGRKey(a.GGRKey, b.GGRKey) })
	for p := range m.Players {
		rb.players = append(rb.players, p)
	}
	for k, d := range m.PlayerMonths {
		rb.months = append(rb.months, monthRow{key: k, days: d})
	}
	slices.SortFunc(rb.months, func(a, b monthRow) int {
		return cmp.Or(strings.Compare(a.key.ClientID, b.key.ClientID), a.key.Month.Compare(b.key.Month),
			strings.Compare(a.key.Currency, b.key.Currency), strings.Compare(a.key.PlayerID, b.key.PlayerID))
	})
	for k, s := range m.Rounds {
		rb.rounds = append(rb.rounds, roundRow{key: k, start: s})
	}
	byMember := func(a, b projections.GGRMember) int {
		return cmp.Or(cmpGGRKey(a.GGRKey, b.GGRKey), strings.Compare(a.Member, b.Member))
	}
	slices.SortFunc(rb.players, byMember)
	slices.SortFunc(rb.rounds, func(a, b roundRow) int {
		return cmp.Or(strings.Compare(a.key.ClientID, b.key.ClientID), strings.Compare(a.key.Provider, b.key.Provider),
			strings.Compare(a.key.Currency, b.key.Currency), strings.Compare(a.key.Round, b.key.Round))
	})
	for k, c := range m.Checkpoints {
		rb.checkpoints = append(rb.checkpoints, checkpointRow{projection: string(k.Projection), stream: k.StreamID,
			version: c.Version, position: c.Position})
	}
	byCheckpoint := func(a, b checkpointRow) int {
		return cmp.Or(strings.Compare(a.projection, b.projection), strings.Compare(a.stream, b.stream))
	}
	slices.SortFunc(rb.checkpoints, byCheckpoint)
	return rb
}

// setNumbering sets the numbering's rows but tx_order's, in key order:
// counts holds each client's numbered rows.
func (rb *rebuilt) setNumbering(counts map[string]int64, num projections.Numbering) {
	for _, c := range slices.Sorted(maps.Keys(counts)) {
		rb.counts = append(rb.counts, orderRow{client: c, rn: counts[c]})
	}
	for k, n := range num.FilterCounts {
		rb.filterCounts = append(rb.filterCounts, filterCountRow{key: k, rows: n})
	}
	slices.SortFunc(rb.filterCounts, func(a, b filterCountRow) int {
		return cmp.Or(strings.Compare(a.key.ClientID, b.key.ClientID), strings.Compare(a.key.Filter, b.key.Filter),
			strings.Compare(a.key.Value, b.key.Value))
	})
	for _, c := range rb.filterCounts {
		for _, mk := range num.FilterMarks[c.key] { // in rank order
			rb.marks = append(rb.marks, markRow{key: c.key, mark: mk})
		}
	}
	for k, r := range num.Days {
		rb.days = append(rb.days, dayRow{client: k.ClientID, day: k.Day, min: r.Min, max: r.Max})
	}
	slices.SortFunc(rb.days, func(a, b dayRow) int { return cmp.Or(strings.Compare(a.client, b.client), a.day.Compare(b.day)) })
}

// sortByID sorts history rows by id the way Postgres orders uuids: by
// their bytes (for the canonical lower-case text, also the strings'
// order). It compares parsed 16-byte keys kept beside the pointers rather
// than the id strings two pointers away: sorting 15 million rows by their
// strings was about a tenth of a 10-million-event replay's CPU. An id that
// is not a uuid falls back to sorting by the strings.
func sortByID(txs []*projections.Transaction) {
	type keyed struct {
		hi, lo uint64
		t      *projections.Transaction
	}
	keys := make([]keyed, len(txs))
	for i, t := range txs {
		b, ok := postgres.ParseUUID(t.ID)
		if !ok {
			slices.SortFunc(txs, func(a, b *projections.Transaction) int { return strings.Compare(a.ID, b.ID) })
			return
		}
		keys[i] = keyed{hi: binary.BigEndian.Uint64(b[:8]), lo: binary.BigEndian.Uint64(b[8:]), t: t}
	}
	slices.SortFunc(keys, func(a, b keyed) int { return cmp.Or(cmp.Compare(a.hi, b.hi), cmp.Compare(a.lo, b.lo)) })
	for i := range keys {
		txs[i] = keys[i].t
	}
}

func cmpGGRKey(a, b projections.GGRKey) int {
	return cmp.Or(strings.Compare(a.ClientID, b.ClientID), a.Day.Compare(b.Day), strings.Compare(a.Provider, b.Provider),
		strings.Compare(a.Game, b.Game), strings.Compare(a.Currency, b.Currency))
}
