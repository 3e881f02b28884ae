package audit_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/domain"
)

var eur = domain.MustCurrency("EUR")

// ledger builds n valid events: deposits into a player wallet from the
// external account, each one moving (i+1) euros.
func ledger(t *testing.T, n int) []domain.Event {
	t.Helper()
	player := domain.PlayerWallet("acme", "p1", eur)
	ext := domain.ExternalAccount("acme", eur)
	at := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
	evs := make([]domain.Event, n)
	for i := range evs {
		amt := domain.FromMinor(int64(i+1)*100, eur)
		evs[i] = domain.Event{
			ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1), Type: domain.EventDeposited, StreamID: player,
			Version: int64(i + 1), Position: int64(i + 1), OccurredAt: at.Add(time.Duration(i) * time.Second),
			Data: domain.EventData{ClientID: "acme", PlayerID: "p1", Currency: "EUR", Amount: amt.String(),
				Postings: []domain.Posting{{Account: ext, Amount: amt.Neg().String()}, {Account: player, Amount: amt.String()}}},
		}
	}
	return evs
}

// rows encodes events as the store would, chaining each hash to the
// previous one.
func rows(t *testing.T, evs []domain.Event) []audit.Record {
	t.Helper()
	prev := domain.GenesisHash
	out := make([]audit.Record, len(evs))
	for i, e := range evs {
		body, err := domain.EncodeBody(e)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = record(e, body, prev)
		prev = out[i].Hash
	}
	return out
}

func record(e domain.Event, body, prev []byte) audit.Record {
	return audit.Record{Position: e.Position, EventID: e.ID, StreamID: string(e.StreamID), StreamVersion: e.Version,
		Type: string(e.Type), OccurredAt: e.OccurredAt.Truncate(time.Microsecond), Body: body, PrevHash: prev,
		Hash: domain.ChainHash(prev, body)}
}

// rechain recomputes every hash from position from on, as a forger who
// rewrote history would.
func rechain(recs []audit.Record, from int) {
	for i := range recs {
		if recs[i].Position < int64(from) {
			continue
		}
		if i > 0 {
			recs[i].PrevHash = recs[i-1].Hash
		}
		recs[i].Hash = domain.ChainHash(recs[i].PrevHash, recs[i].Body)
	}
}

func verify(recs []audit.Record, anchors ...audit.Anchor) ([]audit.CheckResult, []audit.CurrencyTotal) {
	c := audit.NewChain(5, anchors...)
	for _, r := range recs {
		c.Add(r, audit.Examine(r))
	}
	return c.Results()
}

func TestChain(t *testing.T) {
	t.Parallel()
	type broken struct {
		check    string
		position int64
		failures int64
		contains string
	}
	tests := []struct {
		name    string
		given   func(t *testing.T, evs []domain.Event) []audit.Record
		anchor  func(orig []audit.Record) []audit.Anchor
		broken  []broken // every other check must hold
		wantSum string
	}{
		{
			name:    "an untouched ledger",
			given:   func(t *testing.T, evs []domain.Event) []audit.Record { return rows(t, evs) },
			wantSum: "0.00",
		},
		{
			name: "an amount edited in place",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				recs := rows(t, evs)
				recs[2].Body = bytes.Replace(recs[2].Body, []byte(`"amount":"3.00"`), []byte(`"amount":"9.00"`), 1)
				return recs
			},
			broken:  []broken{{audit.CheckHashChain, 3, 1, "stored hash"}},
			wantSum: "0.00",
		},
		{
			name: "a posting edited in place",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				recs := rows(t, evs)
				recs[3].Body = bytes.Replace(recs[3].Body, []byte(`"amount":"-4.00"`), []byte(`"amount":"-40.00"`), 1)
				return recs
			},
			broken: []broken{
				{audit.CheckHashChain, 4, 1, "stored hash"},
				// the event's own sum and the currency total
				{audit.CheckDoubleEntry, 4, 2, "sum to -36.00, not zero"},
			},
			wantSum: "-36.00",
		},
		{
			name: "an event deleted",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				recs := rows(t, evs)
				return append(recs[:2], recs[3:]...)
			},
			broken:  []broken{{audit.CheckHashChain, 4, 1, "position 3 missing"}},
			wantSum: "0.00",
		},
		{
			name: "the first events deleted",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				return rows(t, evs)[2:]
			},
			broken:  []broken{{audit.CheckHashChain, 3, 1, "positions 1..2 missing"}},
			wantSum: "0.00",
		},
		{
			name: "an event inserted with a hash of its own",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				recs := rows(t, evs)
				recs[4].PrevHash = bytes.Repeat([]byte{7}, 32)
				recs[4].Hash = domain.ChainHash(recs[4].PrevHash, recs[4].Body)
				return recs
			},
			// row 5's own link, and row 6's link to the hash row 5 had
			broken:  []broken{{audit.CheckHashChain, 5, 2, "prev_hash 0707"}},
			wantSum: "0.00",
		},
		{
			name: "the first event not linked to the genesis hash",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				recs := rows(t, evs)
				recs[0].PrevHash = bytes.Repeat([]byte{1}, 32)
				rechain(recs, 1)
				return recs
			},
			broken:  []broken{{audit.CheckHashChain, 1, 1, "genesis hash"}},
			wantSum: "0.00",
		},
		{
			name: "history rewritten and re-hashed, caught by an anchor",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				recs := rows(t, evs)
				recs[1].Body = bytes.Replace(recs[1].Body, []byte(`"amount":"2.00"`), []byte(`"amount":"7.00"`), 1)
				rechain(recs, 2)
				return recs
			},
			anchor: func(orig []audit.Record) []audit.Anchor {
				return []audit.Anchor{{Position: 4, Hash: orig[3].Hash}}
			},
			broken:  []broken{{audit.CheckAnchors, 4, 1, "history up to here was rewritten"}},
			wantSum: "0.00",
		},
		{
			name: "an anchor beyond the head",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				return rows(t, evs)[:3]
			},
			anchor: func(orig []audit.Record) []audit.Anchor {
				return []audit.Anchor{{Position: 5, Hash: orig[4].Hash}}
			},
			broken:  []broken{{audit.CheckAnchors, 5, 1, "not in the event store"}},
			wantSum: "0.00",
		},
		{
			name: "a column that disagrees with the body",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				recs := rows(t, evs)
				recs[2].StreamVersion = 9
				return recs
			},
			broken:  []broken{{audit.CheckEventBodies, 3, 1, "column stream_version is 9 but the body says 3"}},
			wantSum: "0.00",
		},
		{
			name: "an occurred_at column moved",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				recs := rows(t, evs)
				recs[1].OccurredAt = recs[1].OccurredAt.Add(time.Hour)
				return recs
			},
			broken:  []broken{{audit.CheckEventBodies, 2, 1, "column occurred_at"}},
			wantSum: "0.00",
		},
		{
			name: "a field injected into a body and re-hashed",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				recs := rows(t, evs)
				recs[2].Body = bytes.Replace(recs[2].Body, []byte(`{"position"`), []byte(`{"note":"x","position"`), 1)
				rechain(recs, 3)
				return recs
			},
			broken:  []broken{{audit.CheckEventBodies, 3, 1, "canonical"}},
			wantSum: "0.00",
		},
		{
			name: "unbalanced postings with a correct chain",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				evs[2].Data.Postings = evs[2].Data.Postings[1:] // the credit without its debit
				return rows(t, evs)
			},
			broken:  []broken{{audit.CheckDoubleEntry, 3, 2, "sum to 3.00, not zero"}},
			wantSum: "3.00",
		},
		{
			name: "a posting more precise than its currency",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				evs[1].Data.Postings[0].Amount = "-2.001"
				evs[1].Data.Postings[1].Amount = "2.001"
				return rows(t, evs)
			},
			broken:  []broken{{audit.CheckDoubleEntry, 2, 1, "amount \"-2.001\""}},
			wantSum: "0.00",
		},
		{
			name: "a posting in another currency",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				evs[0].Data.Postings[0].Account = domain.ExternalAccount("acme", domain.MustCurrency("USD"))
				return rows(t, evs)
			},
			// the event, and the totals of both currencies
			broken:  []broken{{audit.CheckDoubleEntry, 1, 3, "not in the event's currency EUR"}},
			wantSum: "1.00",
		},
		{
			name: "a body that is not an event",
			given: func(t *testing.T, evs []domain.Event) []audit.Record {
				recs := rows(t, evs)
				recs[4].Body = []byte(`[1,2]`)
				rechain(recs, 5)
				return recs
			},
			broken: []broken{
				{audit.CheckEventBodies, 5, 1, "does not decode"},
				{audit.CheckDoubleEntry, 5, 1, "cannot be read"},
			},
			wantSum: "0.00",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// given
			orig := rows(t, ledger(t, 6))
			recs := tc.given(t, ledger(t, 6))
			var anchors []audit.Anchor
			if tc.anchor != nil {
				anchors = tc.anchor(orig)
			}
			// when
			results, totals := verify(recs, anchors...)
			// then
			for _, r := range results {
				var want *broken
				for i := range tc.broken {
					if tc.broken[i].check == r.Name {
						want = &tc.broken[i]
					}
				}
				if want == nil {
					if !r.OK || r.Failures != 0 {
						t.Errorf("%s: want ok, got %d failures: %v", r.Name, r.Failures, r.Examples)
					}
					continue
				}
				first, _ := r.First()
				if r.OK || r.Failures != want.failures || first.Position != want.position || !strings.Contains(first.Message, want.contains) {
					t.Errorf("%s: got ok=%v, %d failures, first %v; want %d failures, first at position %d containing %q",
						r.Name, r.OK, r.Failures, first, want.failures, want.position, want.contains)
				}
			}
			for _, b := range tc.broken {
				found := false
				for _, r := range results {
					found = found || r.Name == b.check
				}
				if !found {
					t.Errorf("check %s was not run", b.check)
				}
			}
			var sum string
			for _, tot := range totals {
				if tot.Currency == "EUR" {
					sum = tot.Sum
				}
			}
			if sum != tc.wantSum {
				t.Errorf("EUR total %q, want %q", sum, tc.wantSum)
			}
		})
	}
}

func TestChainTotalsAndHead(t *testing.T) {
	t.Parallel()
	// given six deposits of 1..6 euros
	recs := rows(t, ledger(t, 6))
	c := audit.NewChain(0)
	// when
	for _, r := range recs {
		c.Add(r, audit.Examine(r))
	}
	_, totals := c.Results()
	// then
	if len(totals) != 1 || totals[0] != (audit.CurrencyTotal{Currency: "EUR", Postings: 12, Sum: "0.00", Debits: "21.00"}) {
		t.Fatalf("totals %+v", totals)
	}
	pos, hash := c.Head()
	if pos != 6 || !bytes.Equal(hash, recs[5].Hash) || c.Events() != 6 {
		t.Fatalf("head %d %x after %d events", pos, hash, c.Events())
	}
}

func TestParseAnchor(t *testing.T) {
	t.Parallel()
	h := strings.Repeat("ab", 32)
	tests := []struct {
		in      string
		wantPos int64
		wantErr bool
	}{
		{"12:" + h, 12, false},
		{"12:" + strings.ToUpper(h), 12, false},
		{"0:" + h, 0, true},
		{"-3:" + h, 0, true},
		{"x:" + h, 0, true},
		{"12:" + h[:62], 0, true},
		{"12:zz" + h[2:], 0, true},
		{h, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			a, err := audit.ParseAnchor(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err == nil && (a.Position != tc.wantPos || hex.EncodeToString(a.Hash) != h) {
				t.Fatalf("got %d %x", a.Position, a.Hash)
			}
		})
	}
}

func TestRecordLine(t *testing.T) {
	t.Parallel()
	// given a stored row whose body has characters JSON escapes
	e := ledger(t, 1)[0]
	e.Data.Reason = "<b>&\u2028é"
	rec := rows(t, []domain.Event{e})[0]
	// when it is exported
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	// then an outside reader gets the stored bytes back from the string
	var line struct {
		Body, PrevHash, Hash string
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	line.Body, line.PrevHash, line.Hash = m["body"].(string), m["prev_hash"].(string), m["hash"].(string)
	prev, _ := hex.DecodeString(line.PrevHash)
	sum := sha256.Sum256(append(prev, line.Body...))
	if hex.EncodeToString(sum[:]) != line.Hash || line.Body != string(rec.Body) {
		t.Fatalf("exported line does not hash to its hash: %s", raw)
	}
	for _, k := range []string{"position", "event_id", "stream_id", "stream_version", "type", "occurred_at"} {
		if _, ok := m[k]; !ok {
			t.Errorf("line lacks %s: %s", k, raw)
		}
	}
	// and a body that is not UTF-8 is refused, not altered
	rec.Body = []byte{'"', 0xff, '"'}
	if _, err := json.Marshal(rec); err == nil {
		t.Fatal("a non-UTF-8 body was exported")
	}
}

func TestAccounts(t *testing.T) {
	t.Parallel()
	const id = "player:acme:p1:EUR"
	fold := func() *audit.AccountFold {
		return &audit.AccountFold{Account: id, Sum: "12.50", Postings: 3, StreamEvents: 2, MaxVersion: 2, LastPosition: 9}
	}
	row := func() *audit.AccountRow {
		return &audit.AccountRow{Account: id, Kind: "player", Currency: "EUR", Balance: 1250, Version: 2, LastPosition: 9}
	}
	tests := []struct {
		name      string
		fold      func() *audit.AccountFold
		row       func() *audit.AccountRow
		wantField string
		contains  string
	}{
		{"equal", fold, row, "", ""},
		{"equal with a trailing-zero sum", func() *audit.AccountFold { f := fold(); f.Sum = "12.5000"; return f }, row, "", ""},
		{"no postings and no balance", func() *audit.AccountFold { f := fold(); f.Sum, f.Postings = "", 0; return f },
			func() *audit.AccountRow { r := row(); r.Balance = 0; return r }, "", ""},
		{"balance edited", fold, func() *audit.AccountRow { r := row(); r.Balance = 99999; return r }, "balance",
			"stored balance 999.99 ≠ 12.50"},
		{"version edited", fold, func() *audit.AccountRow { r := row(); r.Version = 3; return r }, "version",
			"stored version 3 ≠ 2 events"},
		{"last position edited", fold, func() *audit.AccountRow { r := row(); r.LastPosition = 4; return r }, "last_position",
			"stored last_position 4 ≠ 9"},
		{"kind edited", fold, func() *audit.AccountRow { r := row(); r.Kind = "house"; return r }, "kind", `"house"`},
		{"a stream with a hole", func() *audit.AccountFold { f := fold(); f.MaxVersion = 3; return f }, row, "stream_version",
			"versions are not 1..2"},
		{"a sum beyond the currency's precision", func() *audit.AccountFold { f := fold(); f.Sum = "12.505"; return f }, row,
			"balance", "not a valid EUR balance"},
		{"an amount that is not decimal text", func() *audit.AccountFold { f := fold(); f.BadAmounts = 1; return f }, row,
			"balance", "cannot be folded"},
		{"a row without events", func() *audit.AccountFold { return nil }, row, "account", "no event touches"},
		{"events without a row", fold, func() *audit.AccountRow { return nil }, "account", "has no row"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := audit.NewAccounts(3)
			a.Compare(tc.fold(), tc.row())
			res := a.Result()
			first, _ := res.First()
			if tc.wantField == "" {
				if !res.OK || res.Rows != 1 {
					t.Fatalf("want ok over 1 row, got %+v", res)
				}
				return
			}
			if res.OK || res.Failures != 1 || first.Field != tc.wantField || first.Account != id || !strings.Contains(first.Message, tc.contains) {
				t.Fatalf("got %+v; want field %s with %q", res, tc.wantField, tc.contains)
			}
		})
	}
}

func TestAccountsMerge(t *testing.T) {
	t.Parallel()
	src := func(ids ...string) (func() (*audit.AccountFold, bool, error), func() (*audit.AccountRow, bool, error)) {
		i, j := 0, 0
		return func() (*audit.AccountFold, bool, error) {
				if i == len(ids) {
					return nil, false, nil
				}
				i++
				return &audit.AccountFold{Account: ids[i-1], StreamEvents: 1, MaxVersion: 1, LastPosition: 1}, true, nil
			}, func() (*audit.AccountRow, bool, error) {
				if j == len(ids) {
					return nil, false, nil
				}
				j++
				id := domain.AccountID(ids[j-1])
				return &audit.AccountRow{Account: ids[j-1], Kind: id.Kind().String(), Currency: id.CurrencyCode(), Version: 1, LastPosition: 1}, true, nil
			}
	}
	t.Run("both sides in order", func(t *testing.T) {
		folds, _ := src("client:a:EUR", "player:a:p:EUR", "player:a:q:EUR")
		_, accRows := src("client:a:EUR", "player:a:q:EUR", "player:a:r:EUR")
		a := audit.NewAccounts(5)
		if err := a.Merge(folds, accRows); err != nil {
			t.Fatal(err)
		}
		res := a.Result()
		if res.Rows != 4 || res.Failures != 2 || res.Examples[0].Account != "player:a:p:EUR" || res.Examples[1].Account != "player:a:r:EUR" {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("a source out of order", func(t *testing.T) {
		folds, accRows := src("player:a:q:EUR", "client:a:EUR")
		if err := audit.NewAccounts(5).Merge(folds, accRows); err == nil || !strings.Contains(err.Error(), "out of order") {
			t.Fatalf("err %v", err)
		}
	})
}

func TestReportText(t *testing.T) {
	t.Parallel()
	recs := rows(t, ledger(t, 4))
	recs[1].Body = bytes.Replace(recs[1].Body, []byte(`"amount":"2.00"`), []byte(`"amount":"5.00"`), 1)
	results, totals := verify(recs)
	rep := audit.Report{StartedAt: time.Unix(0, 0), Events: 4, HeadPosition: 4, Checks: results, Currencies: totals}
	rep.Finish(time.Unix(2, 0))
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"verify FAILED: 4 events",
		"FAIL hash_chain",
		"first position 2 (event 00000000-0000-4000-8000-000000000002): stored hash " + hex.EncodeToString(recs[1].Hash)[:16],
		"ok   event_bodies",
		"EUR    8 postings, sum 0.00, volume 10.00",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if rep.OK {
		t.Fatal("report OK with a broken chain")
	}
}

func TestChainClients(t *testing.T) {
	t.Parallel()
	// given five events: acme's at 1, 2 and 4, beta's at 3 and 5
	evs := ledger(t, 5)
	for _, i := range []int{2, 4} {
		evs[i].StreamID = domain.PlayerWallet("beta", "p1", eur)
		evs[i].Data.ClientID = "beta"
	}
	recs := rows(t, evs)
	c := audit.NewChain(0)
	// when
	for _, r := range recs {
		c.Add(r, audit.Examine(r))
	}
	// then each client sees its own count and last event, never the other's
	want := []audit.ClientSpan{
		{Client: "acme", Events: 3, HeadPosition: 4, HeadHash: hex.EncodeToString(recs[3].Hash)},
		{Client: "beta", Events: 2, HeadPosition: 5, HeadHash: hex.EncodeToString(recs[4].Hash)},
	}
	got := c.Clients()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("clients %+v, want %+v", got, want)
	}
	rep := audit.Report{Clients: got}
	if s, found := rep.Client("beta"); !found || s != want[1] {
		t.Fatalf("beta %+v %v", s, found)
	}
	if s, found := rep.Client("gamma"); !found || s != (audit.ClientSpan{Client: "gamma"}) {
		t.Fatalf("a client without events: %+v %v", s, found)
	}
	if _, found := (audit.Report{}).Client("acme"); found {
		t.Fatal("a run recorded before per-client spans must say it has none")
	}
}

func TestStreamClient(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"player:acme:p-17:EUR": "acme",
		"client:acme:EUR":      "acme",
		"house:acme:prov:EUR":  "acme",
		"external:acme":        "acme",
		"nocolon":              "",
		"player::p:EUR":        "",
	} {
		if got := audit.StreamClient(in); got != want {
			t.Errorf("StreamClient(%q) = %q, want %q", in, got, want)
		}
	}
}
