package providersim

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/pitboss/pitboss/domain"
)

// The Bet Brothers' supplier Free Spin API as the supplier (the provider)
// answers it: POST /supplier_api/freespin/create and /cancel, bodies
// signed X-REQUEST-SIGN (lowercase hex HMAC-SHA256 with the provider's
// secret), answered {"status": "success", ...} or, refused, the addendum's
// {"code", "message"} with the code as the HTTP status (403 for a bad
// signature, as the document says). The json launch kind's /session is
// answered too, so that a provider whose endpoints are this server
// launches.
//
// Decisions where the document is silent: create has no idempotency key,
// so every create is a new bonus; amount is a JSON number written with
// exactly the currency's decimals (what Pitboss sends); cancel of a bonus
// already cancelled answers success again, of one a free spin of which was
// played 400, of an unknown one (or another player's or game's) 404.

// tbbFirstBonusID is the first bonus_id handed out.
const tbbFirstBonusID = 54000

func (s *PromoServer) tbbProvider(q *promoRequest) (int, any, bool) {
	if want := s.cfg.ProviderName; want != "" && q.text("provider_name") != want {
		return http.StatusForbidden, q.refusal(http.StatusForbidden, "unknown provider_name"), true
	}
	return 0, nil, false
}

func (s *PromoServer) tbbCreate(q *promoRequest) (int, any) {
	if !q.fields(field{"provider_name", fText, true}, field{"provider_id", fInt, true}, field{"player_id", fText, true},
		field{"game_symbol", fText, true}, field{"rounds", fInt, true}, field{"amount", fNumber, true},
		field{"currency_code", fCurrency, true}, field{"start_date", fISOTime, true}, field{"end_date", fISOTime, true},
		field{"bonus_code", fText, true}, field{"brand_id", fInt, true}) {
		return q.invalid()
	}
	if code, body, refused := s.tbbProvider(q); refused {
		return code, body
	}
	cur, _ := s.currency(q.text("currency_code"))
	amount, ok := q.tbbAmount(cur)
	rounds, _ := q.integer("rounds")
	if rounds <= 0 {
		q.deviate("rounds %d is not a positive count", rounds)
	}
	if !ok || len(q.devs) > 0 {
		return q.invalid()
	}
	start, end := q.text("start_date"), q.text("end_date")
	if msg := window(start, end); msg != "" {
		return http.StatusBadRequest, q.refusal(http.StatusBadRequest, msg)
	}
	brand, _ := q.integer("brand_id")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse {
		return http.StatusBadRequest, q.refusal(http.StatusBadRequest, "the free spins are refused (the simulator's fault switch)")
	}
	s.seq++
	id := tbbFirstBonusID + s.seq
	ref := strconv.Itoa(id)
	s.rewards[ref] = &FreeBetReward{Ref: ref, Campaign: q.text("bonus_code"), Player: q.text("player_id"),
		Game: q.text("game_symbol"), Currency: cur.Code(), BetValue: amount, FreeBets: int(rounds), Remaining: int(rounds),
		Start: start, End: end, brand: brand}
	s.rwOrder = append(s.rwOrder, ref)
	return http.StatusOK, map[string]any{"status": "success", "bonus_id": id}
}

// tbbAmount reads amount, a JSON number of cur written with exactly its
// decimals, as minor units (deviations otherwise).
func (q *promoRequest) tbbAmount(cur domain.Currency) (int64, bool) {
	text := string(q.o["amount"])
	m, err := domain.ParsePositive(text, cur)
	if err != nil {
		q.deviate("amount %s is not a positive amount of %s: %v", text, cur.Code(), err)
		return 0, false
	}
	_, frac, dot := strings.Cut(text, ".")
	if len(frac) != cur.Exponent() || (cur.Exponent() == 0 && dot) {
		q.deviate("amount %s is not written with %s's %d decimals", text, cur.Code(), cur.Exponent())
		return 0, false
	}
	return m.Minor(), true
}

func (s *PromoServer) tbbCancel(q *promoRequest) (int, any) {
	if !q.fields(field{"provider_name", fText, true}, field{"provider_id", fInt, true}, field{"player_id", fText, true},
		field{"game_symbol", fText, true}, field{"bonus_id", fInt, true}, field{"brand_id", fInt, true}) {
		return q.invalid()
	}
	if code, body, refused := s.tbbProvider(q); refused {
		return code, body
	}
	bonus, _ := q.integer("bonus_id")
	brand, _ := q.integer("brand_id")
	s.mu.Lock()
	defer s.mu.Unlock()
	rw, ok := s.rewards[strconv.FormatInt(bonus, 10)]
	if !ok || rw.Player != q.text("player_id") || rw.Game != q.text("game_symbol") {
		return http.StatusNotFound, q.refusal(http.StatusNotFound, "no such bonus of the player on the game")
	}
	if brand != rw.brand {
		q.deviate("brand_id %d is not the %d the free spins were created with", brand, rw.brand)
		return q.invalid()
	}
	if !rw.Canceled && rw.Remaining < rw.FreeBets {
		return http.StatusBadRequest, q.refusal(http.StatusBadRequest, "free spins already played cannot be canceled")
	}
	rw.Canceled = true
	return http.StatusOK, map[string]any{"status": "success"}
}

// jsonLaunch is the json launch kind's POST /session (its X-Signature
// checked), answered with a game address.
func (s *PromoServer) jsonLaunch(q *promoRequest) (int, any) {
	return http.StatusOK, map[string]any{"launchUrl": s.URL + "/games/?token=" + url.QueryEscape(q.text("token"))}
}
