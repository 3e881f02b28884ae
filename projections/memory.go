package projections

import (
	"cmp"
	"slices"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// StreamKey names one stream's checkpoint in one projection.
type StreamKey struct {
	Projection Name
	StreamID   string
}

// ClientDay is one client's UTC day.
type ClientDay struct {
	ClientID string
	Day      time.Time
}

// MarkEvery is how far apart the history's marks are: per client and
// filter value (a type, a player), the numbered history rows are counted in
// (seq, sub) order, and every MarkEvery-th gets a mark
// (readmodels.tx_filter_marks), so a page of one type or one player at any
// depth starts its walk at most this many rows before it.
const MarkEvery = 1024

// The filters with counts and marks.
const (
	FilterType   = "type"
	FilterPlayer = "player"
)

// FilterValue is one client's history rows of one type (Filter FilterType)
// or one player (FilterPlayer).
type FilterValue struct {
	ClientID, Filter, Value string
}

// Mark is the Rank-th numbered row of a FilterValue, counted from the
// oldest, and where it is in the history.
type Mark struct {
	Rank, Seq int64
	Sub       int
}

// SeqRange is the lowest and highest seq of a set of history rows.
type SeqRange struct{ Min, Max int64 }

// StreamCheckpoint is the last event of a stream a projection applied.
type StreamCheckpoint struct {
	Version  int64
	Position int64
}

// Memory holds every read model in memory and applies Changes to them with
// the same rules as the Postgres store: a rebuild runs the projections into
// a Memory and writes it out or compares it with the live tables. It is not
// safe for concurrent use.
type Memory struct {
	Balances map[domain.AccountID]*Balance
	GGR      map[GGRKey]*GGRDelta
	Players  map[GGRMember]struct{}
	// PlayerMonths holds each player's bet days per month (PlayerMonthOf),
	// set with Players.
	PlayerMonths map[PlayerMonth]int64
	// Rounds holds where each round with a bet starts; GGR[...].Rounds
	// counts them per group.
	Rounds      map[RoundKey]RoundStart
	Checkpoints map[StreamKey]StreamCheckpoint
	// Positions are the watermarks set by SetWatermark.
	Positions map[Name]int64
	// Order holds each client's numbered history rows: Order[c][rn-1] is
	// the id of row number rn.
	Order map[string][]string
	// Days holds, per client and UTC day of created_at, the lowest and
	// highest seq of the numbered rows.
	Days map[ClientDay]SeqRange
	// FilterCounts counts the numbered rows per client and type, and per
	// client and player; FilterMarks holds every MarkEvery-th of them, in
	// rank order.
	FilterCounts map[FilterValue]int64
	FilterMarks  map[FilterValue][]Mark

	// Earlier, when set, finds a bet or win the history holds outside this
	// Memory (a rebuild in slices keeps only the current slice's rows):
	// Lookup asks it for what the Memory does not hold.
	Earlier Lookup
	// LateMarks are the rollback marks of bets and wins this Memory does
	// not hold (rows of an earlier slice), for the caller to apply where
	// those rows are.
	LateMarks []RollbackMark

	// The history rows live in chunks that never move, so a rebuild of
	// millions of rows makes few, large allocations; the maps index them.
	chunks    [][]Transaction
	byID      map[string]*Transaction // game results (the rows that change)
	gameTx    map[GameTxKey]*Transaction
	sequenced int64
}

const memoryChunk = 4096

// NewMemory returns empty read models.
func NewMemory() *Memory { return NewMemorySized(0) }

// NewMemorySized returns empty read models with room for about events
// events, so a rebuild does not grow its maps step by step.
func NewMemorySized(events int) *Memory {
	return &Memory{
		Balances: map[domain.AccountID]*Balance{}, GGR: map[GGRKey]*GGRDelta{},
		Players: make(map[GGRMember]struct{}, events/4), PlayerMonths: map[PlayerMonth]int64{}, Rounds: make(map[RoundKey]RoundStart, events/4),
		Checkpoints: map[StreamKey]StreamCheckpoint{}, Positions: map[Name]int64{}, Order: map[string][]string{},
		Days: map[ClientDay]SeqRange{}, FilterCounts: map[FilterValue]int64{}, FilterMarks: map[FilterValue][]Mark{},
		byID:   make(map[string]*Transaction, events/3),
		gameTx: make(map[GameTxKey]*Transaction, events),
	}
}

// add stores a new history row and returns where it lives.
func (m *Memory) add(t Transaction) *Transaction {
	if n := len(m.chunks); n == 0 || len(m.chunks[n-1]) == memoryChunk {
		m.chunks = append(m.chunks, make([]Transaction, 0, memoryChunk))
	}
	c := &m.chunks[len(m.chunks)-1]
	*c = append(*c, t)
	return &(*c)[len(*c)-1]
}

// Transactions calls f with every history row, in no particular order.
func (m *Memory) Transactions(f func(*Transaction)) {
	for _, c := range m.chunks {
		for i := range c {
			f(&c[i])
		}
	}
}

// Len is the number of history rows.
func (m *Memory) Len() int {
	if len(m.chunks) == 0 {
		return 0
	}
	return (len(m.chunks)-1)*memoryChunk + len(m.chunks[len(m.chunks)-1])
}

// Row returns the history row with id.
func (m *Memory) Row(id string) (Transaction, bool) {
	if r, ok := m.byID[id]; ok {
		return *r, true
	}
	var (
		found Transaction
		ok    bool
	)
	m.Transactions(func(t *Transaction) {
		if t.ID == id {
			found, ok = *t, true
		}
	})
	return found, ok
}

// Apply runs e through p and applies the result, unless the checkpoint of
// e's stream says it was applied already (applied false, nil) or an
// earlier version is missing (*GapError). An *InvalidEventError leaves
// everything unchanged.
func (m *Memory) Apply(p Projection, e domain.Event) (applied bool, err error) {
	key := StreamKey{Projection: p.Name(), StreamID: string(e.StreamID)}
	ok, err := Checkpoint(p.Name(), e, m.Checkpoints[key].Version)
	if err != nil || !ok {
		return false, err
	}
	ch, err := p.Apply(e, m.Lookup)
	if err != nil {
		return false, err
	}
	m.ApplyChanges(ch)
	m.Checkpoints[key] = StreamCheckpoint{Version: e.Version, Position: e.Position}
	return true, nil
}

// Skip moves a stream's checkpoint to version without applying anything:
// what the projector does with an event it dead-letters.
func (m *Memory) Skip(p Name, stream string, version, position int64) {
	key := StreamKey{Projection: p, StreamID: stream}
	if cp := m.Checkpoints[key]; version > cp.Version {
		m.Checkpoints[key] = StreamCheckpoint{Version: version, Position: position}
	}
}

// Lookup finds a bet or win in the history.
func (m *Memory) Lookup(k GameTxKey) (GameTx, bool) {
	t, ok := m.gameTx[k]
	if !ok {
		if m.Earlier != nil {
			return m.Earlier(k)
		}
		return GameTx{}, false
	}
	return GameTx{Type: t.Type, Game: t.Game, Promo: t.Promo, Jackpot: t.Jackpot}, true
}

// ApplyChanges applies ch. The rules, which the Postgres store mirrors:
// new rows are added; a rolled-back mark sets the status and moves the
// row's position forward; a game result adds its amount and counters,
// closes once closed, keeps the highest position, and takes seq, time,
// game and player from the event with the lowest position; GGR amounts and
// balances add up (a balance keeps the highest position); players are
// added once, and their day to their month's bitmap; a round is counted in
// its RoundStart group, moving there when a bet starts it earlier.
func (m *Memory) ApplyChanges(ch Changes) {
	for _, t := range ch.Transactions {
		r := m.add(t)
		if r.Type == TypeBet || r.Type == TypeWin {
			m.gameTx[GameTxKey{ClientID: r.ClientID, Provider: r.Provider, ExternalTxID: r.ExternalTxID}] = r
		}
	}
	for _, mk := range ch.RolledBack {
		if r, ok := m.gameTx[mk.Key]; ok {
			r.Status = StatusRolledBack
			r.Position = max(r.Position, mk.Position)
		} else {
			m.LateMarks = append(m.LateMarks, mk)
		}
	}
	for _, d := range ch.GameResults {
		r, ok := m.byID[d.ID]
		if !ok {
			r = m.add(d)
			r.Status = GameResultStatus(r.OpenBets, r.RolledBets, r.Wins, r.Closed)
			m.byID[r.ID] = r
			continue
		}
		r.AddGameResult(d)
		r.Status = GameResultStatus(r.OpenBets, r.RolledBets, r.Wins, r.Closed)
	}
	for _, d := range ch.GGR {
		g, ok := m.GGR[d.GGRKey]
		if !ok {
			c := d
			m.GGR[d.GGRKey] = &c
			continue
		}
		g.Add(d)
	}
	for _, p := range ch.Players {
		m.Players[p] = struct{}{}
		k, day := PlayerMonthOf(p)
		m.PlayerMonths[k] |= day
	}
	for _, r := range ch.Rounds {
		k, start := KeyOfRound(r)
		prev, seen := m.Rounds[k]
		if seen && !start.Before(prev) {
			continue
		}
		if seen {
			if g := m.GGR[GGRKey{ClientID: k.ClientID, Day: prev.Day, Provider: k.Provider, Game: prev.Game,
				Currency: k.Currency}]; g != nil {
				g.Rounds--
			}
		}
		m.Rounds[k] = start
		// The bet's GGR delta (same group) was added above.
		if g := m.GGR[r.GGRKey]; g != nil {
			g.Rounds++
		}
	}
	for _, d := range ch.Balances {
		b, ok := m.Balances[d.Account]
		if !ok {
			c := d
			m.Balances[d.Account] = &c
			continue
		}
		b.Balance += d.Balance
		b.Position = max(b.Position, d.Position)
	}
}

// SetWatermark records that every event at or below position is applied to
// projection p. For History it also numbers the history rows up to it
// (Numbering): per client, in (seq, sub) order, after the rows numbered
// before.
func (m *Memory) SetWatermark(p Name, position int64) {
	m.Positions[p] = max(m.Positions[p], position)
	if p != History || position <= m.sequenced {
		return
	}
	var rows []*Transaction
	m.Transactions(func(t *Transaction) {
		if t.Seq > m.sequenced && t.Seq <= position {
			rows = append(rows, t)
		}
	})
	slices.SortFunc(rows, func(a, b *Transaction) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Sub, b.Sub))
	})
	num := Numbering{Days: m.Days, FilterCounts: m.FilterCounts, FilterMarks: m.FilterMarks}
	for _, t := range rows {
		m.Order[t.ClientID] = append(m.Order[t.ClientID], t.ID)
		num.Add(NumberedRow{ClientID: t.ClientID, Type: string(t.Type), PlayerID: t.PlayerID, Seq: t.Seq, Sub: t.Sub,
			CreatedAt: t.CreatedAt})
	}
	m.sequenced = position
}

// Numbering counts numbered history rows — given in (seq, sub) order,
// after the rows it counted before — per client and UTC day of created_at
// (the lowest and highest seq), per client and type and per client and
// player, marking every MarkEvery-th of each. A row's number is its
// client's count of rows so far, which the caller keeps (Memory.Order).
// Memory.SetWatermark numbers with it; a rebuild in slices numbers its
// whole history with it, a row at a time as PostgreSQL sorts them, and
// never holds the rows.
type Numbering struct {
	Days         map[ClientDay]SeqRange
	FilterCounts map[FilterValue]int64
	FilterMarks  map[FilterValue][]Mark
}

// NewNumbering returns an empty Numbering.
func NewNumbering() Numbering {
	return Numbering{Days: map[ClientDay]SeqRange{}, FilterCounts: map[FilterValue]int64{}, FilterMarks: map[FilterValue][]Mark{}}
}

// NumberedRow is what numbering reads of a history row.
type NumberedRow struct {
	ClientID, Type, PlayerID string // PlayerID "" when the row has none
	Seq                      int64
	Sub                      int
	CreatedAt                time.Time
}

// Add counts row t, the next in (seq, sub) order.
func (n Numbering) Add(t NumberedRow) {
	k := ClientDay{ClientID: t.ClientID, Day: dayOf(t.CreatedAt)}
	r, ok := n.Days[k]
	if !ok {
		r = SeqRange{Min: t.Seq, Max: t.Seq}
	}
	n.Days[k] = SeqRange{Min: min(r.Min, t.Seq), Max: max(r.Max, t.Seq)}
	n.count(FilterValue{ClientID: t.ClientID, Filter: FilterType, Value: t.Type}, t)
	if t.PlayerID != "" {
		n.count(FilterValue{ClientID: t.ClientID, Filter: FilterPlayer, Value: t.PlayerID}, t)
	}
}

// count adds row t to v's count, and marks it when its rank is a multiple
// of MarkEvery.
func (n Numbering) count(v FilterValue, t NumberedRow) {
	n.FilterCounts[v]++
	if c := n.FilterCounts[v]; c%MarkEvery == 0 {
		n.FilterMarks[v] = append(n.FilterMarks[v], Mark{Rank: c, Seq: t.Seq, Sub: t.Sub})
	}
}
