package providersim

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/pitboss/pitboss/domain"
)

// Caleta's Freebets API, Caleta Gaming System API 1.5, as the provider
// answers it: prepaids/list, campaigns/list, campaigns/create,
// rewards/create, rewards/cancel under /api/freebet/, and the Games API's
// /api/game/url so a provider whose endpoints are this server can launch
// too. Bodies are signed by the operator (X-Auth-Signature: base64
// RSA-SHA256 with its launch key); money is an integer of 1/100000 of the
// currency's unit; datetimes are YYYY-MM-DDThh:mm:ss. A refusal is a 4xx
// with {"error": "..."} (the document's only error shape).
//
// Decisions where the document is silent: rewards/create with a
// reward_uuid already granted answers that reward again when the request
// is the same (a retry), and 409 when it differs; rewards/cancel of a
// reward already cancelled answers it again, of one a free bet of which
// was played is 409 ("a reward already claimed by user cannot be
// canceled"), of an unknown one 404.

// caletaPrepaidState is a prepaid the server offers.
type caletaPrepaidState struct {
	uuid, game, currency string
	gameID               int64
	value, count         *int64 // Caleta units, free bets; nil: null
}

// caletaCampaignState is a campaign the server created.
type caletaCampaignState struct {
	uuid, name, prepaid, game, currency string
	gameID                              int64
	value, count                        *int64
	start, end                          string
}

// verifyRSASHA256 checks sig, standard base64, is body's RSASSA-PKCS1-v1_5
// SHA-256 signature by key.
func verifyRSASHA256(key *rsa.PublicKey, body []byte, sig string) error {
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return errors.New("not standard base64")
	}
	sum := sha256.Sum256(body)
	return rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], raw)
}

// caletaStep is how many Caleta units one minor unit of cur is; 0 when cur
// has more decimals than Caleta's 5.
func caletaStep(cur domain.Currency) int64 {
	if cur.Exponent() > caletaDigits {
		return 0
	}
	s := int64(1)
	for range caletaDigits - cur.Exponent() {
		s *= 10
	}
	return s
}

// gameID is the integer id of a game code (the document's deprecated
// game_id, which every answer still carries). Call with s.mu held.
func (s *PromoServer) gameID(code string) int64 {
	id, ok := s.gameIDs[code]
	if !ok {
		id = int64(len(s.gameIDs) + 1)
		s.gameIDs[code] = id
	}
	return id
}

// offer adds a configured prepaid. Call with s.mu held (or before serving).
func (s *PromoServer) offer(p PromoPrepaid) error {
	cur, ok := s.currency(p.Currency)
	if !ok || caletaStep(cur) == 0 {
		return fmt.Errorf("%w: prepaid %s: %q is not a currency Caleta's amounts can carry", ErrConfig, p.UUID, p.Currency)
	}
	if p.UUID == "" || p.GameCode == "" {
		return fmt.Errorf("%w: a prepaid needs its uuid and game code", ErrConfig)
	}
	pp := &caletaPrepaidState{uuid: p.UUID, game: p.GameCode, currency: cur.Code(), gameID: s.gameID(p.GameCode)}
	if p.BetValue != "" {
		m, err := domain.ParsePositive(p.BetValue, cur)
		if err != nil {
			return fmt.Errorf("%w: prepaid %s: bet value: %w", ErrConfig, p.UUID, err)
		}
		v := m.Minor() * caletaStep(cur)
		pp.value = &v
	}
	if p.BetCount != 0 {
		c := int64(p.BetCount)
		pp.count = &c
	}
	if _, dup := s.prepaids[pp.uuid]; !dup {
		s.ppOrder = append(s.ppOrder, pp.uuid)
	}
	s.prepaids[pp.uuid] = pp
	return nil
}

// caletaOperator refuses a call naming another operator (the document's
// 404): not a deviation, an answer. Fields already checked.
func (q *promoRequest) caletaOperator() (int, any, bool) {
	if want := q.s.cfg.OperatorID; want != "" && q.has("operator_id") && q.text("operator_id") != want {
		return http.StatusNotFound, q.refusal(http.StatusNotFound,
			"The operator_id does not correspond to any existing Operator."), true
	}
	return 0, nil, false
}

// caletaMoney checks an integer money field of cur: positive and a whole
// number of cur's minor units (deviations otherwise).
func (q *promoRequest) caletaMoney(name string, cur domain.Currency) (int64, bool) {
	v, ok := q.integer(name)
	if !ok {
		return 0, false
	}
	step := caletaStep(cur)
	switch {
	case v <= 0:
		q.deviate("%s %d is not a positive amount", name, v)
		return 0, false
	case step == 0 || v%step != 0:
		q.deviate("%s %d is not a whole number of %s minor units (1/100000 of the unit, %d a minor unit)", name, v,
			cur.Code(), step)
		return 0, false
	}
	return v, true
}

func (s *PromoServer) caletaPrepaidsList(q *promoRequest) (int, any) {
	if !q.fields(field{"operator_id", fText, true}, field{"game_id", fInt, false}, field{"game_code", fText, false},
		field{"currency", fCurrency, false}) {
		return q.invalid()
	}
	if code, body, refused := q.caletaOperator(); refused {
		return code, body
	}
	game, cur := q.text("game_code"), q.text("currency")
	gameID, byID := q.integer("game_id")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.Prepaids == nil && game != "" && cur != "" {
		id := "pp-" + s.nonce + "-" + game + "-" + cur
		if _, ok := s.prepaids[id]; !ok {
			if err := s.offer(PromoPrepaid{UUID: id, GameCode: game, Currency: cur}); err != nil {
				return http.StatusBadRequest, q.refusal(http.StatusBadRequest, err.Error())
			}
		}
	}
	list := []any{}
	for _, id := range s.ppOrder {
		p := s.prepaids[id]
		if (game != "" && p.game != game) || (byID && p.gameID != gameID) || (cur != "" && p.currency != cur) {
			continue
		}
		list = append(list, map[string]any{"prepaid_uuid": p.uuid, "game_id": p.gameID, "currency": p.currency,
			"bet_value": p.value, "bet_count": p.count})
	}
	return http.StatusOK, list
}

func (c *caletaCampaignState) json() map[string]any {
	m := map[string]any{"campaign_uuid": c.uuid, "prepaid_uuid": c.prepaid, "name": c.name, "game_id": c.gameID,
		"currency": c.currency, "bet_value": c.value, "bet_count": c.count}
	if c.start != "" {
		m["start_time"] = c.start
	}
	if c.end != "" {
		m["end_time"] = c.end
	}
	return m
}

func (s *PromoServer) caletaCampaignsList(q *promoRequest) (int, any) {
	if !q.fields(field{"operator_id", fText, true}) {
		return q.invalid()
	}
	if code, body, refused := q.caletaOperator(); refused {
		return code, body
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	list := []any{}
	for _, id := range s.cpOrder {
		list = append(list, s.campaigns[id].json())
	}
	return http.StatusOK, list
}

func (s *PromoServer) caletaCampaignsCreate(q *promoRequest) (int, any) {
	if !q.fields(field{"name", fText, true}, field{"prepaid_uuid", fText, true}, field{"start_time", fTime, false},
		field{"end_time", fTime, false}, field{"currency", fCurrency, false}, field{"bet_value", fInt, false},
		field{"bet_count", fInt, false}) {
		return q.invalid()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.prepaids[q.text("prepaid_uuid")]
	if !ok {
		return http.StatusNotFound, q.refusal(http.StatusNotFound, "prepaid not found")
	}
	if q.has("currency") && q.text("currency") != p.currency {
		return http.StatusBadRequest, q.refusal(http.StatusBadRequest, "currency is not the prepaid's "+p.currency)
	}
	cur, _ := s.currency(p.currency)
	value, count, ok := q.caletaBets(cur, p.value, p.count, "prepaid")
	if !ok {
		return q.invalid()
	}
	start, end := q.text("start_time"), q.text("end_time")
	if msg := window(start, end); msg != "" {
		return http.StatusBadRequest, q.refusal(http.StatusBadRequest, msg)
	}
	s.seq++
	c := &caletaCampaignState{uuid: fmt.Sprintf("cmp-%s-%d", s.nonce, s.seq), name: q.text("name"), prepaid: p.uuid,
		game: p.game, gameID: p.gameID, currency: p.currency, value: value, count: count, start: start, end: end}
	s.campaigns[c.uuid] = c
	s.cpOrder = append(s.cpOrder, c.uuid)
	return http.StatusOK, c.json()
}

// caletaBets are the bet value and count a campaign or reward gets: what
// its prepaid (or campaign) fixes, else what the request says. A request
// value other than the fixed one is a deviation: the document has the
// fixed one used, so the free bets would not be what the operator asked.
func (q *promoRequest) caletaBets(cur domain.Currency, fixedValue, fixedCount *int64, from string) (value, count *int64, ok bool) {
	value, count = fixedValue, fixedCount
	if v, given := q.caletaMoney("bet_value", cur); given {
		if fixedValue != nil && v != *fixedValue {
			q.deviate("bet_value %d is not the %s's %d (the %s's is used)", v, from, *fixedValue, from)
		}
		if fixedValue == nil {
			value = &v
		}
	}
	if n, given := q.integer("bet_count"); given {
		switch {
		case n <= 0:
			q.deviate("bet_count %d is not a positive count", n)
		case fixedCount != nil && n != *fixedCount:
			q.deviate("bet_count %d is not the %s's %d (the %s's is used)", n, from, *fixedCount, from)
		case fixedCount == nil:
			count = &n
		}
	}
	return value, count, len(q.devs) == 0
}

// caletaReward is the document's Reward of rw. Call with s.mu held.
func (s *PromoServer) caletaReward(rw *FreeBetReward) map[string]any {
	cur, _ := s.currency(rw.Currency)
	m := map[string]any{"user": rw.Player, "reward_uuid": rw.Ref, "prepaid_uuid": rw.prepaid, "game_id": s.gameID(rw.Game),
		"currency": rw.Currency, "bet_value": rw.BetValue * caletaStep(cur), "bet_count": rw.FreeBets}
	if s.cfg.OperatorID != "" {
		m["operator_id"] = s.cfg.OperatorID
	}
	if rw.Campaign != "" {
		m["campaign_uuid"] = rw.Campaign
	}
	if rw.Start != "" {
		m["start_time"] = rw.Start
	}
	if rw.End != "" {
		m["end_time"] = rw.End
	}
	return m
}

func (s *PromoServer) caletaRewardsCreate(q *promoRequest) (int, any) {
	if !q.fields(field{"user", fText, true}, field{"sub_partner_id", fText, true}, field{"prepaid_uuid", fText, true},
		field{"start_time", fTime, false}, field{"end_time", fTime, false}, field{"reward_uuid", fText, false},
		field{"operator_id", fText, false}, field{"game_id", fInt, false}, field{"campaign_uuid", fText, false},
		field{"bet_value", fInt, false}, field{"bet_count", fInt, false}) {
		return q.invalid()
	}
	if code, body, refused := q.caletaOperator(); refused {
		return code, body
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse {
		return http.StatusBadRequest, q.refusal(http.StatusBadRequest, "the reward is refused (the simulator's fault switch)")
	}
	p, ok := s.prepaids[q.text("prepaid_uuid")]
	if !ok {
		return http.StatusNotFound, q.refusal(http.StatusNotFound, "prepaid not found")
	}
	fixedValue, fixedCount, from := p.value, p.count, "prepaid"
	start, end := q.text("start_time"), q.text("end_time")
	campaign := q.text("campaign_uuid")
	if campaign != "" {
		c, ok := s.campaigns[campaign]
		if !ok {
			return http.StatusNotFound, q.refusal(http.StatusNotFound, "campaign not found")
		}
		if c.prepaid != p.uuid {
			q.deviate("prepaid_uuid %s is not the campaign's %s", p.uuid, c.prepaid)
			return q.invalid()
		}
		fixedValue, fixedCount, from = c.value, c.count, "campaign"
		if start == "" {
			start = c.start
		}
		if end == "" {
			end = c.end
		}
	}
	cur, _ := s.currency(p.currency)
	value, count, ok := q.caletaBets(cur, fixedValue, fixedCount, from)
	if !ok {
		return q.invalid()
	}
	if value == nil || count == nil {
		return http.StatusBadRequest, q.refusal(http.StatusBadRequest,
			"bet_value and bet_count are required: the "+from+" leaves them open")
	}
	if msg := window(start, end); msg != "" {
		return http.StatusBadRequest, q.refusal(http.StatusBadRequest, msg)
	}
	ref := q.text("reward_uuid")
	if ref == "" {
		s.seq++
		ref = fmt.Sprintf("rwd-%s-%d", s.nonce, s.seq)
	}
	rw := &FreeBetReward{Ref: ref, Campaign: campaign, Player: q.text("user"), Game: p.game, Currency: p.currency,
		BetValue: *value / caletaStep(cur), FreeBets: int(*count), Remaining: int(*count), Start: start, End: end,
		prepaid: p.uuid}
	fingerprint := fmt.Sprint(rw.Campaign, "|", rw.Player, "|", q.text("sub_partner_id"), "|", p.uuid, "|", rw.BetValue,
		"|", rw.FreeBets, "|", rw.Start, "|", rw.End)
	if old, ok := s.rewards[ref]; ok {
		if old.fingerprint != fingerprint {
			return http.StatusConflict, q.refusal(http.StatusConflict,
				"reward_uuid "+ref+" is already a reward with other content")
		}
		return http.StatusOK, s.caletaReward(old) // a retry: the same reward, nothing granted twice
	}
	rw.fingerprint = fingerprint
	s.rewards[ref] = rw
	s.rwOrder = append(s.rwOrder, ref)
	return http.StatusOK, s.caletaReward(rw)
}

func (s *PromoServer) caletaRewardsCancel(q *promoRequest) (int, any) {
	if !q.fields(field{"operator_id", fText, true}, field{"reward_uuid", fText, true}) {
		return q.invalid()
	}
	if code, body, refused := q.caletaOperator(); refused {
		return code, body
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rw, ok := s.rewards[q.text("reward_uuid")]
	switch {
	case !ok:
		return http.StatusNotFound, q.refusal(http.StatusNotFound, "reward not found")
	case !rw.Canceled && rw.Remaining < rw.FreeBets:
		return http.StatusConflict, q.refusal(http.StatusConflict, "a reward already claimed by user cannot be canceled")
	}
	rw.Canceled = true
	return http.StatusOK, s.caletaReward(rw)
}

// caletaGameURL is the Games API's launch, so that a caleta-kind provider
// whose endpoints are this server launches: its game_url_body checked, a
// game address answered.
func (s *PromoServer) caletaGameURL(q *promoRequest) (int, any) {
	if !q.fields(field{"operator_id", fText, true}, field{"sub_partner_id", fText, true}, field{"token", fText, false},
		field{"user", fText, false}, field{"game_code", fText, true}, field{"game_id", fInt, false},
		field{"currency", fCurrency, true}, field{"country", fText, true}, field{"lang", fText, true},
		field{"lobby_url", fText, true}, field{"deposit_url", fText, false}) {
		return q.invalid()
	}
	if code, body, refused := q.caletaOperator(); refused {
		return code, body
	}
	return http.StatusOK, map[string]any{"url": s.URL + "/games/" + url.PathEscape(q.text("game_code")) + "?token=" +
		url.QueryEscape(q.text("token"))}
}
