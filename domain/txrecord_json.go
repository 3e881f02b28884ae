package domain

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// The ledger writer encodes every idempotency record it writes, and decodes
// every one it decides from its cache, on its one goroutine: with
// encoding/json's reflection that was a third of that goroutine's work at 64
// concurrent wallet calls (docs/benchmarks.md). These two do it without.

// AppendTxRecordJSON appends r as JSON to dst: the same bytes as
// encoding/json.Marshal(r) (TestAppendTxRecordJSONMatchesMarshal), and the
// same error for a CreatedAt outside years 0..9999.
func AppendTxRecordJSON(dst []byte, r *TxRecord) ([]byte, error) {
	if y := r.CreatedAt.Year(); y < 0 || y > 9999 {
		_, err := json.Marshal(r)
		return dst, err
	}
	b := dst
	if b == nil {
		b = make([]byte, 0, 384) // a bet's record is about 330 bytes
	}
	b = append(b, `{"key":`...)
	b = appendJSONString(b, r.Key)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, string(r.Kind))
	b = append(b, `,"account":`...)
	b = appendJSONString(b, string(r.Account))
	b = appendOmitString(b, `,"player_id":`, r.PlayerID)
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, r.Currency)
	b = append(b, `,"amount":`...)
	b = strconv.AppendInt(b, r.Amount, 10)
	b = appendOmitString(b, `,"round_id":`, r.RoundID)
	if r.RolledBack {
		b = append(b, `,"rolled_back":true`...)
	}
	b = appendOmitInt(b, `,"open_bets":`, r.OpenBets)
	b = appendOmitInt(b, `,"rolled_bets":`, r.RolledBets)
	if r.Closed {
		b = append(b, `,"closed":true`...)
	}
	b = appendOmitInt(b, `,"wins":`, r.Wins)
	b = appendOmitString(b, `,"settles":`, r.Settles)
	b = appendOmitString(b, `,"campaign":`, r.Campaign)
	b = appendOmitString(b, `,"reward":`, r.Reward)
	b = appendOmitInt(b, `,"free_bets":`, r.FreeBets)
	b = appendOmitInt(b, `,"used":`, r.Used)
	b = appendOmitString(b, `,"state":`, r.State)
	b = appendOmitString(b, `,"valid_until":`, r.ValidUntil)
	b = appendOmitString(b, `,"event_id":`, r.EventID)
	b = appendOmitInt(b, `,"position":`, r.Position)
	b = appendOmitString(b, `,"balance_after":`, r.BalanceAfter)
	if len(r.Request) > 0 {
		b = append(b, `,"request":{`...)
		keys := make([]string, 0, len(r.Request))
		for k := range r.Request {
			keys = append(keys, k)
		}
		slices.Sort(keys) // encoding/json writes a map's keys sorted
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, r.Request[k])
		}
		b = append(b, '}')
	}
	b = append(b, `,"created_at":"`...)
	b = r.CreatedAt.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...), nil
}

func appendOmitString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, key...), s)
}

func appendOmitInt(b []byte, key string, n int64) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), n, 10)
}

// appendJSONString appends s quoted as encoding/json quotes it: printable
// ASCII other than the quote, the backslash and the three characters it
// escapes for HTML (< > &) goes as it is; anything else is left to
// encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// DecodeTxRecord parses a record's JSON into r. The shape
// AppendTxRecordJSON writes — its keys in any order, each once, no white
// space, strings of printable ASCII without escapes, created_at in UTC —
// is read directly; anything else goes to encoding/json, so both give the
// same record for any input (FuzzDecodeTxRecord).
func DecodeTxRecord(data []byte, r *TxRecord) error {
	if decodeTxRecordCanonical(data, r) {
		return nil
	}
	*r = TxRecord{}
	return json.Unmarshal(data, r)
}

func decodeTxRecordCanonical(data []byte, r *TxRecord) bool {
	*r = TxRecord{}
	s := scanner{b: data}
	ok := s.object(func(key []byte) bool {
		var v string
		switch string(key) {
		case "key":
			return s.str(&r.Key)
		case "kind":
			ok := s.str(&v)
			r.Kind = TxKind(v)
			return ok
		case "account":
			ok := s.str(&v)
			r.Account = AccountID(v)
			return ok
		case "player_id":
			return s.str(&r.PlayerID)
		case "currency":
			return s.str(&r.Currency)
		case "amount":
			return s.int(&r.Amount)
		case "round_id":
			return s.str(&r.RoundID)
		case "rolled_back":
			return s.bool(&r.RolledBack)
		case "open_bets":
			return s.int(&r.OpenBets)
		case "rolled_bets":
			return s.int(&r.RolledBets)
		case "closed":
			return s.bool(&r.Closed)
		case "wins":
			return s.int(&r.Wins)
		case "settles":
			return s.str(&r.Settles)
		case "campaign":
			return s.str(&r.Campaign)
		case "reward":
			return s.str(&r.Reward)
		case "free_bets":
			return s.int(&r.FreeBets)
		case "used":
			return s.int(&r.Used)
		case "state":
			return s.str(&r.State)
		case "valid_until":
			return s.str(&r.ValidUntil)
		case "event_id":
			return s.str(&r.EventID)
		case "position":
			return s.int(&r.Position)
		case "balance_after":
			return s.str(&r.BalanceAfter)
		case "request":
			return s.stringMap(&r.Request)
		case "created_at":
			raw, ok := s.raw()
			if !ok || len(raw) == 0 || raw[len(raw)-1] != 'Z' {
				return false
			}
			t, err := time.Parse(time.RFC3339Nano, string(raw))
			// Only the form AppendTxRecordJSON writes: other spellings
			// time.Parse takes are left to encoding/json's stricter parse.
			if err != nil || string(t.AppendFormat(nil, time.RFC3339Nano)) != string(raw) {
				return false
			}
			r.CreatedAt = t
			return true
		}
		return false
	})
	return ok && s.i == len(s.b)
}

// stringMap reads an object of strings into a new map, as encoding/json
// does (an empty object is an empty map, not nil).
func (s *scanner) stringMap(out *map[string]string) bool {
	m := map[string]string{}
	ok := s.object(func(key []byte) bool {
		var v string
		if !s.str(&v) {
			return false
		}
		m[string(key)] = v
		return true
	})
	if ok {
		*out = m
	}
	return ok
}
