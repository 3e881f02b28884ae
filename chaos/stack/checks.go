package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
)

// Event is one row of the event store, as the checks need it.
type Event struct {
	Position      int64
	ID            string
	StreamID      string
	StreamVersion int64
	Type          string
	ExternalTxID  string
}

// Events reads the whole event store.
func Events(ctx context.Context, db *pgxpool.Pool) ([]Event, error) {
	rows, err := db.Query(ctx, `SELECT position, event_id::text, stream_id, stream_version, event_type,
	       coalesce(body->'data'->>'external_tx_id', '') FROM events ORDER BY position`)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.Position, &e.ID, &e.StreamID, &e.StreamVersion, &e.Type, &e.ExternalTxID); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// EffectReport is what the acknowledged calls did to the event store.
type EffectReport struct {
	// Lost: answered 200, but the ledger holds no event for the call, or
	// not the one the answer named.
	Lost []string
	// Duplicated: a provider transaction id with more than one event.
	Duplicated []string
	// Phantom: a call answered with a definitive refusal that has an
	// event all the same.
	Phantom []string
}

// OK is true when nothing was lost, duplicated or applied behind a refusal.
func (r EffectReport) OK() bool { return len(r.Lost)+len(r.Duplicated)+len(r.Phantom) == 0 }

// Effects checks that every call answered 200 has exactly one event, the
// one its answer named, and a refused call none.
func Effects(events []Event, calls []*Call) EffectReport {
	byTx := map[string][]Event{}
	for _, e := range events {
		if e.ExternalTxID != "" && strings.HasPrefix(e.Type, "wallet.") {
			byTx[e.ExternalTxID] = append(byTx[e.ExternalTxID], e)
		}
	}
	var r EffectReport
	for _, c := range calls {
		evs := byTx[c.TxID]
		if len(evs) > 1 {
			r.Duplicated = append(r.Duplicated, fmt.Sprintf("%s: %d events", c.TxID, len(evs)))
		}
		switch {
		case c.Acked() && (len(evs) == 0 || evs[0].ID != c.EventID):
			r.Lost = append(r.Lost, fmt.Sprintf("%s %s answered %s, events %v", c.Op, c.TxID, c.EventID, evs))
		case !c.Acked() && c.Outcome.Err == nil && len(evs) > 0:
			r.Phantom = append(r.Phantom, fmt.Sprintf("%s %s refused %d %s but has %d events", c.Op, c.TxID,
				c.Outcome.Status, c.Outcome.Code(), len(evs)))
		}
	}
	return r
}

// KafkaReport is what the topic holds compared with the event store.
type KafkaReport struct {
	Records, Distinct, Duplicates int
	Missing                       []string // event ids not on the topic
	// Gaps: a stream's version arrived before an earlier one (a consumer
	// would have seen a hole).
	Gaps []string
	// Misplaced: a record whose key is not its stream id.
	Misplaced []string
}

// OK is true when every event is on the topic, in stream order.
func (r KafkaReport) OK() bool { return len(r.Missing)+len(r.Gaps)+len(r.Misplaced) == 0 }

// KafkaCoverage reads the topic from the start until it holds every event
// of events (or within passes), and checks per-stream order.
func KafkaCoverage(ctx context.Context, brokers []string, topic string, events []Event, within time.Duration) (KafkaReport, error) {
	want := make(map[string]bool, len(events))
	for _, e := range events {
		want[e.ID] = true
	}
	rctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	seen, missing := map[string]bool{}, len(want)
	recs, err := kafkatest.ReadUntil(rctx, brokers, topic, func(rs []kafkatest.Record) bool {
		if len(rs) > 0 {
			id := rs[len(rs)-1].Headers["event_id"]
			if want[id] && !seen[id] {
				seen[id] = true
				missing--
			}
		}
		return missing == 0
	})
	var r KafkaReport
	r.Records = len(recs)
	distinct := map[string]bool{}
	maxVer := map[string]int64{}
	// Records of one partition are in offset order; a stream lives on one
	// partition.
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].Partition != recs[j].Partition {
			return recs[i].Partition < recs[j].Partition
		}
		return recs[i].Offset < recs[j].Offset
	})
	for _, rec := range recs {
		id, stream := rec.Headers["event_id"], rec.Headers["stream_id"]
		if distinct[id] {
			r.Duplicates++
		}
		distinct[id] = true
		if rec.Key != stream {
			r.Misplaced = append(r.Misplaced, fmt.Sprintf("%s: key %q, stream %q", id, rec.Key, stream))
		}
		v, _ := strconv.ParseInt(rec.Headers["stream_version"], 10, 64)
		if v > maxVer[stream]+1 {
			r.Gaps = append(r.Gaps, fmt.Sprintf("%s: version %d after %d", stream, v, maxVer[stream]))
		}
		maxVer[stream] = max(maxVer[stream], v)
	}
	r.Distinct = len(distinct)
	for id := range want {
		if !distinct[id] {
			r.Missing = append(r.Missing, id)
		}
	}
	sort.Strings(r.Missing)
	if err != nil && len(r.Missing) == 0 {
		err = nil
	}
	return r, err
}

// Balances compares each player's balance from GET /api/v1/wallet/balance
// with want (minor units) and returns the differences.
func Balances(ctx context.Context, api *API, players []*Player, want map[int]int64) ([]string, error) {
	var diffs []string
	for _, p := range players {
		o := api.Call(ctx, Retry{First: 50 * time.Millisecond, Max: time.Second, GiveUp: time.Minute}, http.MethodGet,
			"/api/v1/wallet/balance?player_id="+p.ID+"&currency="+p.Currency, nil)
		if o.Err != nil || o.Status != http.StatusOK {
			return nil, fmt.Errorf("balance of %s: %v %d %s", p.ID, o.Err, o.Status, o.Body)
		}
		bals, err := WalletBalances(o.Body)
		if err != nil || len(bals) != 1 {
			return nil, fmt.Errorf("balance answer %s: %v", o.Body, err)
		}
		if got, exp := bals[p.Currency], FormatMinor(want[p.Index], p.Exp); got != exp {
			diffs = append(diffs, fmt.Sprintf("%s %s: balance %s, the acknowledged calls say %s", p.ID, p.Currency, got, exp))
		}
	}
	return diffs, nil
}

// Head is the highest position in the event store.
func Head(ctx context.Context, db *pgxpool.Pool) (int64, error) {
	var head int64
	err := db.QueryRow(ctx, `SELECT coalesce(max(position), 0) FROM events`).Scan(&head)
	return head, err
}

// ReadModelsAt waits until GET /api/v1/transactions?min_position=head
// answers 200: the history read model has applied every event up to head.
func ReadModelsAt(ctx context.Context, api *API, head int64, within time.Duration) error {
	o := api.Call(ctx, Retry{First: 100 * time.Millisecond, Max: time.Second, GiveUp: within}, http.MethodGet,
		fmt.Sprintf("/api/v1/transactions?per_page=1&min_position=%d", head), nil)
	if o.Err != nil {
		return fmt.Errorf("read models did not reach position %d within %v: %w", head, within, o.Err)
	}
	if o.Status != http.StatusOK {
		return fmt.Errorf("read models at %d: %d %s", head, o.Status, o.Body)
	}
	return nil
}

// ProjectionsAt waits until every projection's watermark
// (readmodels.positions) has reached head.
func ProjectionsAt(ctx context.Context, db *pgxpool.Pool, head int64, within time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	return waitFor(wctx, 100*time.Millisecond, func() error {
		var low int64
		var name string
		if err := db.QueryRow(wctx, `SELECT projection, position FROM readmodels.positions ORDER BY position LIMIT 1`).
			Scan(&name, &low); err != nil {
			return err
		}
		if low < head {
			return fmt.Errorf("projection %s at %d, head %d", name, low, head)
		}
		return nil
	})
}

// CallbackEventTypes are the events forwarded to the client's callback URL.
var CallbackEventTypes = map[string]bool{
	"wallet.bet_placed.v1": true, "wallet.win_credited.v1": true, "wallet.bet_rolled_back.v1": true,
	"wallet.win_reversed.v1": true, "wallet.rollback_recorded.v1": true,
}

// CallbackReport compares the receiver's receipts with the events.
type CallbackReport struct {
	Expected, Received, Acked, Redelivered int
	Undelivered                            []string // events without an acknowledged delivery
	WrongKey                               []string // an idempotency key that is not "<event id>:callback", or differs between deliveries
	BadSignature                           []string
	OutOfOrder                             []string // delivered before an earlier event of its stream was acknowledged
}

// OK is true when every callback arrived, signed, keyed and in order.
func (r CallbackReport) OK() bool {
	return len(r.Undelivered)+len(r.WrongKey)+len(r.BadSignature)+len(r.OutOfOrder) == 0
}

// Callbacks checks the receipts against events (only events after
// fromPosition are expected: the callback URL was set then).
func Callbacks(events []Event, receipts []Receipt, fromPosition int64) CallbackReport {
	var r CallbackReport
	expected := map[string]Event{}
	streamVersions := map[string][]int64{}
	for _, e := range events {
		if e.Position > fromPosition && CallbackEventTypes[e.Type] {
			expected[e.ID] = e
			streamVersions[e.StreamID] = append(streamVersions[e.StreamID], e.StreamVersion)
		}
	}
	r.Expected = len(expected)
	acked := map[string]bool{}
	ackedVer := map[string]map[int64]bool{}
	keys := map[string]string{}
	for _, rc := range receipts {
		r.Received++
		id := rc.EventID
		if k, ok := keys[id]; ok && k != rc.IdempotencyKey || rc.IdempotencyKey != id+":callback" || rc.EventIDHeader != id {
			r.WrongKey = append(r.WrongKey, fmt.Sprintf("%s: key %q (before %q), header %q", id, rc.IdempotencyKey, keys[id], rc.EventIDHeader))
		}
		keys[id] = rc.IdempotencyKey
		if !rc.SignatureOK {
			r.BadSignature = append(r.BadSignature, id)
		}
		if _, ok := expected[id]; ok {
			for _, v := range streamVersions[rc.StreamID] {
				if v < rc.StreamVersion && !ackedVer[rc.StreamID][v] {
					r.OutOfOrder = append(r.OutOfOrder, fmt.Sprintf("%s v%d sent before v%d was acknowledged",
						rc.StreamID, rc.StreamVersion, v))
					break
				}
			}
		}
		if rc.Acked {
			if acked[id] {
				r.Redelivered++
			}
			acked[id] = true
			if ackedVer[rc.StreamID] == nil {
				ackedVer[rc.StreamID] = map[int64]bool{}
			}
			ackedVer[rc.StreamID][rc.StreamVersion] = true
		}
	}
	for id := range expected {
		if acked[id] {
			r.Acked++
		} else {
			r.Undelivered = append(r.Undelivered, id)
		}
	}
	sort.Strings(r.Undelivered)
	return r
}

// WaitCallbacks polls the receiver until every expected callback was
// acknowledged or within has passed, and returns the last report.
func WaitCallbacks(ctx context.Context, rcv *Receiver, events []Event, fromPosition int64, within time.Duration) CallbackReport {
	deadline := time.Now().Add(within)
	for {
		r := Callbacks(events, rcv.Receipts(), fromPosition)
		if len(r.Undelivered) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// VerifyReport is the part of `pitboss verify --json` the suite reads.
type VerifyReport struct {
	OK     bool `json:"ok"`
	Events int  `json:"events"`
	Checks []struct {
		Name    string `json:"name"`
		OK      bool   `json:"ok"`
		Skipped string `json:"skipped"`
	} `json:"checks"`
}

// Verify runs `pitboss verify --json`: the hash chain, double entry, every
// account equal to the fold of its events, the idempotency records, and
// (unless skipReadModels) the read models against a rebuild.
func Verify(ctx context.Context, svc *Service, skipReadModels bool) (VerifyReport, string, error) {
	args := []string{"verify", "--json", "--quiet", "--record=false"}
	if skipReadModels {
		args = append(args, "--skip-read-models")
	}
	out, err := svc.CLI(ctx, args...)
	var rep VerifyReport
	if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil {
		return rep, out, errors.Join(err, fmt.Errorf("verify output: %w", jerr))
	}
	var failed []string
	for _, c := range rep.Checks {
		if !c.OK && c.Skipped == "" {
			failed = append(failed, c.Name)
		}
	}
	if !rep.OK {
		return rep, out, fmt.Errorf("verify failed: %s", strings.Join(failed, ", "))
	}
	return rep, out, nil
}
