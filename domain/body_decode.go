package domain

// decodeCanonical is DecodeBody's fast path. Every consumer of the ledger
// decodes every event body (each projection, the forwarder, replay, the
// auditor's verification), and with encoding/json's reflection that was
// 16 % of the service's CPU at 64 concurrent wallet calls
// (docs/benchmarks.md).
//
// It reads only the exact shape EncodeBody writes: the body's own keys, in
// any order, spelled exactly, each once; no white space; strings of
// printable ASCII with no escapes; integers without fraction or exponent;
// true and false; postings as null or an array of {account, amount}
// objects. Anything else — an escape, a non-ASCII byte, any other null, an
// unknown, repeated or differently cased key, a
// number out of range, trailing bytes — returns false, and DecodeBody uses
// encoding/json instead. Everything it accepts is therefore valid JSON that
// encoding/json decodes to the same value, which FuzzDecodeCanonical checks
// on arbitrary input.
func decodeCanonical(b []byte, x *body) bool {
	s := scanner{b: b}
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "position":
			return s.int(&x.Position)
		case "id":
			return s.str(&x.ID)
		case "type":
			var t string
			ok := s.str(&t)
			x.Type = EventType(t)
			return ok
		case "stream_id":
			var id string
			ok := s.str(&id)
			x.StreamID = AccountID(id)
			return ok
		case "version":
			return s.int(&x.Version)
		case "occurred_at":
			return s.str(&x.OccurredAt)
		case "data":
			return s.data(&x.Data)
		case "meta":
			return s.meta(&x.Meta)
		}
		return false
	})
	return ok && s.i == len(s.b)
}

type scanner struct {
	b []byte
	i int
}

// object reads {"key":value,...}, handing each key to field, which reads
// the value. An empty object is accepted. A key that comes twice is
// refused: encoding/json decodes the second value over the first (reusing
// slice elements), which is not worth copying for bodies we never write.
func (s *scanner) object(field func(key []byte) bool) bool {
	if !s.byte('{') {
		return false
	}
	if s.byte('}') {
		return true
	}
	var (
		seen [20][]byte
		n    int
	)
	for {
		key, ok := s.raw()
		if !ok || n == len(seen) {
			return false
		}
		for _, k := range seen[:n] {
			if string(k) == string(key) {
				return false
			}
		}
		seen[n], n = key, n+1
		if !s.byte(':') || !field(key) {
			return false
		}
		if s.byte('}') {
			return true
		}
		if !s.byte(',') {
			return false
		}
	}
}

func (s *scanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string of printable ASCII without escapes.
func (s *scanner) str(out *string) bool {
	r, ok := s.raw()
	if ok {
		*out = string(r)
	}
	return ok
}

// raw reads a string of printable ASCII without escapes and returns its
// bytes, without copying them.
func (s *scanner) raw() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// int reads -?(0|[1-9][0-9]*) that fits an int64.
func (s *scanner) int(out *int64) bool {
	neg := s.byte('-')
	start := s.i
	var u uint64
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		d := uint64(s.b[s.i] - '0')
		if u > (1<<63-d)/10 { // u*10+d would pass 1<<63
			return false
		}
		u = u*10 + d
		s.i++
	}
	switch n := s.i - start; {
	case n == 0, n > 1 && s.b[start] == '0':
		return false
	case neg:
		*out = -int64(u-1) - 1 // u may be 1<<63, MinInt64's magnitude
	case u > 1<<63-1:
		return false
	default:
		*out = int64(u)
	}
	return true
}

func (s *scanner) bool(out *bool) bool {
	switch {
	case s.lit("true"):
		*out = true
	case s.lit("false"):
		*out = false
	default:
		return false
	}
	return true
}

func (s *scanner) lit(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

func (s *scanner) data(d *EventData) bool {
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "client_id":
			return s.str(&d.ClientID)
		case "player_id":
			return s.str(&d.PlayerID)
		case "provider":
			return s.str(&d.Provider)
		case "game_id":
			return s.str(&d.GameID)
		case "round_id":
			return s.str(&d.RoundID)
		case "session_id":
			return s.str(&d.SessionID)
		case "external_tx_id":
			return s.str(&d.ExternalTxID)
		case "reference_tx_id":
			return s.str(&d.ReferenceTx)
		case "currency":
			return s.str(&d.Currency)
		case "amount":
			return s.str(&d.Amount)
		case "balance_after":
			return s.str(&d.BalanceAfter)
		case "direction":
			return s.str(&d.Direction)
		case "round_closed":
			return s.bool(&d.RoundClosed)
		case "promo":
			return s.bool(&d.Promo)
		case "jackpot":
			return s.str(&d.Jackpot)
		case "campaign_id":
			return s.str(&d.CampaignID)
		case "reward_id":
			return s.str(&d.RewardID)
		case "free_bets":
			return s.int(&d.FreeBets)
		case "provider_ref":
			return s.str(&d.ProviderRef)
		case "operator_tx_id":
			return s.str(&d.OperatorTxID)
		case "expires_at":
			return s.str(&d.ExpiresAt)
		case "reason":
			return s.str(&d.Reason)
		case "postings":
			return s.postings(&d.Postings)
		}
		return false
	})
}

// postings reads an array of postings, or null (nil, as EncodeBody writes
// an event without postings). As with encoding/json, [] is an empty,
// non-nil slice.
func (s *scanner) postings(out *[]Posting) bool {
	if s.lit("null") {
		*out = nil
		return true
	}
	if !s.byte('[') {
		return false
	}
	ps := make([]Posting, 0, 2)
	if !s.byte(']') {
		for {
			var p Posting
			ok := s.object(func(key []byte) bool {
				switch string(key) {
				case "account":
					var a string
					ok := s.str(&a)
					p.Account = AccountID(a)
					return ok
				case "amount":
					return s.str(&p.Amount)
				}
				return false
			})
			if !ok {
				return false
			}
			ps = append(ps, p)
			if s.byte(']') {
				break
			}
			if !s.byte(',') {
				return false
			}
		}
	}
	*out = ps
	return true
}

func (s *scanner) meta(m *Metadata) bool {
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "request_id":
			return s.str(&m.RequestID)
		case "correlation_id":
			return s.str(&m.CorrelationID)
		case "actor":
			return s.str(&m.Actor)
		}
		return false
	})
}
