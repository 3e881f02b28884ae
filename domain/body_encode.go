package domain

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// appendBody appends the canonical body of b: the same bytes as
// encoding/json.Marshal(b) (TestEncodeBodyMatchesMarshal,
// FuzzEncodeBodyMatchesMarshal), written without reflection. Every
// consumer that checks a body is canonical re-encodes it (the auditor's
// verification, verify --since), and encoding/json's reflection was half
// of what checking one event cost.
func appendBody(dst []byte, b *body) []byte {
	dst = append(dst, `{"position":`...)
	dst = strconv.AppendInt(dst, b.Position, 10)
	dst = appendJSONString(append(dst, `,"id":`...), b.ID)
	dst = appendJSONString(append(dst, `,"type":`...), string(b.Type))
	dst = appendJSONString(append(dst, `,"stream_id":`...), string(b.StreamID))
	dst = strconv.AppendInt(append(dst, `,"version":`...), b.Version, 10)
	dst = appendJSONString(append(dst, `,"occurred_at":`...), b.OccurredAt)
	dst = appendData(append(dst, `,"data":`...), &b.Data)
	dst = append(dst, `,"meta":{`...)
	first := true
	for _, f := range [...]struct{ key, v string }{{`"request_id":`, b.Meta.RequestID},
		{`"correlation_id":`, b.Meta.CorrelationID}, {`"actor":`, b.Meta.Actor}} {
		if f.v == "" {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONString(append(dst, f.key...), f.v)
	}
	return append(dst, "}}"...)
}

func appendData(dst []byte, d *EventData) []byte {
	dst = appendJSONString(append(dst, `{"client_id":`...), d.ClientID)
	dst = appendOmitString(dst, `,"player_id":`, d.PlayerID)
	dst = appendOmitString(dst, `,"provider":`, d.Provider)
	dst = appendOmitString(dst, `,"game_id":`, d.GameID)
	dst = appendOmitString(dst, `,"round_id":`, d.RoundID)
	dst = appendOmitString(dst, `,"session_id":`, d.SessionID)
	dst = appendOmitString(dst, `,"external_tx_id":`, d.ExternalTxID)
	dst = appendOmitString(dst, `,"reference_tx_id":`, d.ReferenceTx)
	dst = appendJSONString(append(dst, `,"currency":`...), d.Currency)
	dst = appendJSONString(append(dst, `,"amount":`...), d.Amount)
	dst = appendOmitString(dst, `,"balance_after":`, d.BalanceAfter)
	dst = appendOmitString(dst, `,"direction":`, d.Direction)
	if d.RoundClosed {
		dst = append(dst, `,"round_closed":true`...)
	}
	if d.Promo {
		dst = append(dst, `,"promo":true`...)
	}
	dst = appendOmitString(dst, `,"jackpot":`, d.Jackpot)
	dst = appendOmitString(dst, `,"campaign_id":`, d.CampaignID)
	dst = appendOmitString(dst, `,"reward_id":`, d.RewardID)
	dst = appendOmitInt(dst, `,"free_bets":`, d.FreeBets)
	dst = appendOmitString(dst, `,"provider_ref":`, d.ProviderRef)
	dst = appendOmitString(dst, `,"operator_tx_id":`, d.OperatorTxID)
	dst = appendOmitString(dst, `,"expires_at":`, d.ExpiresAt)
	dst = appendOmitString(dst, `,"reason":`, d.Reason)
	dst = append(dst, `,"postings":`...)
	if d.Postings == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, p := range d.Postings {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(append(dst, `{"account":`...), string(p.Account))
			dst = appendJSONString(append(dst, `,"amount":`...), p.Amount)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// encodeBody is EncodeBody's encoding, with the year check it makes.
func encodeBody(e Event) ([]byte, error) {
	if y := e.OccurredAt.UTC().Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("event %s occurred in year %d, outside 0..9999: %w", e.ID, y, ErrInvalidArgument)
	}
	b := body{Position: e.Position, ID: e.ID, Type: e.Type, StreamID: e.StreamID, Version: e.Version,
		OccurredAt: e.OccurredAt.UTC().Format(time.RFC3339Nano), Data: e.Data, Meta: e.Meta}
	return appendBody(make([]byte, 0, 768), &b), nil
}

// marshalBody is the reference: encoding/json's bytes of e's body.
func marshalBody(e Event) ([]byte, error) {
	return json.Marshal(body{Position: e.Position, ID: e.ID, Type: e.Type, StreamID: e.StreamID, Version: e.Version,
		OccurredAt: e.OccurredAt.UTC().Format(time.RFC3339Nano), Data: e.Data, Meta: e.Meta})
}
