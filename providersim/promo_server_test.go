package providersim_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/providersim"
)

// Tests of the provider side of the promotion APIs: its checks of each
// request against the document (a wrong one is named), the idempotent
// reward create, the refused cancel of a used reward, the fault switch,
// and spending free bets through a wallet.

const tbbPromoSecret = "tbb-promo-secret"

// promoSims starts a server of protocol: caleta's verifies with our
// test key for operator op-77 and offers an open prepaid pp-1 of game g in
// EUR; tbb's verifies with tbbPromoSecret for provider acme.
func promoSim(t *testing.T, protocol string, key *rsa.PrivateKey) *providersim.PromoServer {
	t.Helper()
	cfg := providersim.PromoConfig{Protocol: protocol, Out: t.Output()}
	if protocol == "caleta" {
		cfg.OperatorKey, cfg.OperatorID = &key.PublicKey, "op-77"
		cfg.Prepaids = []providersim.PromoPrepaid{{UUID: "pp-1", GameCode: "g", Currency: "EUR"}}
	} else {
		cfg.Secret, cfg.ProviderName = tbbPromoSecret, "acme"
	}
	s, err := providersim.StartPromoServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// signing is how a test call is signed.
type signing int

const (
	signed signing = iota
	unsigned
	wrongKey
	upperHex
)

// promoPost sends body to the server's path, signed as the protocol
// signs (with key for caleta, tbbPromoSecret for tbb) unless sign says
// otherwise, and returns the answer.
func promoPost(t *testing.T, s *providersim.PromoServer, protocol string, key *rsa.PrivateKey, p, body string,
	sign signing) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+p, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if protocol == "caleta" {
		k := key
		if sign == wrongKey {
			k, _ = rsa.GenerateKey(rand.Reader, 2048)
		}
		sum := sha256.Sum256([]byte(body))
		sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		if sign != unsigned {
			req.Header.Set("X-Auth-Signature", base64.StdEncoding.EncodeToString(sig))
		}
	} else {
		secret := tbbPromoSecret
		if sign == wrongKey {
			secret = "another"
		}
		sig := gateway.Signature(secret, []byte(body))
		if sign == upperHex {
			sig = strings.ToUpper(sig)
		}
		if sign != unsigned {
			req.Header.Set("X-REQUEST-SIGN", sig)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const (
	caletaReward   = `{"user":"p-1","sub_partner_id":"casino-1","prepaid_uuid":"pp-1","reward_uuid":"r-1","bet_value":20000,"bet_count":10,"start_time":"2026-05-01T12:00:00","end_time":"2026-05-31T23:59:59"}`
	tbbCreate      = `{"provider_name":"acme","provider_id":1,"player_id":"p-1","game_symbol":"g","rounds":10,"amount":0.20,"currency_code":"EUR","start_date":"2026-05-01T12:00:00","end_date":"2026-05-31T23:59:59","bonus_code":"camp-1","brand_id":1}`
	caletaCreate   = "/api/freebet/rewards/create"
	caletaCancel   = "/api/freebet/rewards/cancel"
	tbbCreatePath  = "/supplier_api/freespin/create"
	tbbCancelPath  = "/supplier_api/freespin/cancel"
	caletaCampaign = "/api/freebet/campaigns/create"
)

// TestPromoServerNamesDeviations: requests not as the document says are
// refused and named, with the field at fault.
func TestPromoServerNamesDeviations(t *testing.T) {
	key, _ := rsaKey(t)
	swap := func(body, from, to string) string {
		if !strings.Contains(body, from) {
			t.Fatalf("%s not in %s", from, body)
		}
		return strings.Replace(body, from, to, 1)
	}
	for _, tc := range []struct {
		name, protocol, path, body string
		sign                       signing
		status                     int
		want                       string // a deviation, as printed
	}{
		{"caleta money as a string", "caleta", caletaCreate, swap(caletaReward, `"bet_value":20000`, `"bet_value":"20000"`),
			signed, 400, `caleta rewards/create: bet_value is "20000", not a JSON integer`},
		{"caleta money not whole cents", "caleta", caletaCreate, swap(caletaReward, `20000`, `20001`), signed, 400,
			`caleta rewards/create: bet_value 20001 is not a whole number of EUR minor units`},
		{"caleta datetime with a zone", "caleta", caletaCreate,
			swap(caletaReward, `"2026-05-01T12:00:00"`, `"2026-05-01T12:00:00Z"`), signed, 400,
			`caleta rewards/create: start_time "2026-05-01T12:00:00Z" is not YYYY-MM-DDThh:mm:ss`},
		{"caleta required field missing", "caleta", caletaCreate, swap(caletaReward, `"user":"p-1",`, ``), signed, 400,
			`caleta rewards/create: user is missing`},
		{"caleta field not in the document", "caleta", caletaCreate, swap(caletaReward, `{`, `{"game_code":"g",`), signed, 400,
			`caleta rewards/create: field game_code is not in the document`},
		{"caleta campaign with an operator_id", "caleta", caletaCampaign,
			`{"name":"n","prepaid_uuid":"pp-1","operator_id":"op-77"}`, signed, 400,
			`caleta campaigns/create: field operator_id is not in the document`},
		{"caleta list without operator", "caleta", "/api/freebet/prepaids/list", `{"game_code":"g"}`, signed, 400,
			`caleta prepaids/list: operator_id is missing`},
		{"caleta signed by another key", "caleta", caletaCreate, caletaReward, wrongKey, 403,
			`caleta rewards/create: X-Auth-Signature does not verify with the operator's public key`},
		{"caleta unsigned", "caleta", caletaCreate, caletaReward, unsigned, 403,
			`caleta rewards/create: X-Auth-Signature is missing`},
		{"caleta call not in the document", "caleta", "/api/freebet/rewards/list", `{"operator_id":"op-77"}`, signed, 404,
			`caleta rewards/list: POST /api/freebet/rewards/list is not a call of the document`},
		{"caleta body not an object", "caleta", caletaCreate, `[1]`, signed, 400,
			`caleta rewards/create: the body is not a JSON object`},
		{"tbb amount without its decimals", "tbb", tbbCreatePath, swap(tbbCreate, `0.20`, `0.2`), signed, 400,
			`tbb freespin/create: amount 0.2 is not written with EUR's 2 decimals`},
		{"tbb amount as a string", "tbb", tbbCreatePath, swap(tbbCreate, `0.20`, `"0.20"`), signed, 400,
			`tbb freespin/create: amount is "0.20", not a plain JSON number`},
		{"tbb provider_id as a string", "tbb", tbbCreatePath, swap(tbbCreate, `"provider_id":1`, `"provider_id":"1"`),
			signed, 400, `tbb freespin/create: provider_id is "1", not a JSON integer`},
		{"tbb date not ISO 8601", "tbb", tbbCreatePath, swap(tbbCreate, `"2026-05-01T12:00:00"`, `"tomorrow"`), signed, 400,
			`tbb freespin/create: start_date "tomorrow" is not an ISO 8601 date and time`},
		{"tbb brand_id missing", "tbb", tbbCreatePath, swap(tbbCreate, `,"brand_id":1`, ``), signed, 400,
			`tbb freespin/create: brand_id is missing`},
		{"tbb rounds not positive", "tbb", tbbCreatePath, swap(tbbCreate, `"rounds":10`, `"rounds":0`), signed, 400,
			`tbb freespin/create: rounds 0 is not a positive count`},
		{"tbb signed with another secret", "tbb", tbbCreatePath, tbbCreate, wrongKey, 403,
			`tbb freespin/create: X-REQUEST-SIGN is not the HMAC-SHA256 of the body`},
		{"tbb signature in upper case", "tbb", tbbCreatePath, tbbCreate, upperHex, 403,
			`tbb freespin/create: X-REQUEST-SIGN is not lowercase hex`},
		{"tbb cancel without bonus_id", "tbb", tbbCancelPath,
			`{"provider_name":"acme","provider_id":1,"player_id":"p-1","game_symbol":"g","brand_id":1}`, signed, 400,
			`tbb freespin/cancel: bonus_id is missing`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := promoSim(t, tc.protocol, key)
			status, body := promoPost(t, s, tc.protocol, key, tc.path, tc.body, tc.sign)
			if status != tc.status {
				t.Fatalf("HTTP %d %s, want %d", status, body, tc.status)
			}
			var got []string
			for _, d := range s.Deviations() {
				got = append(got, d.String())
			}
			if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, tc.want) }) {
				t.Fatalf("no deviation %q among %d:\n%s", tc.want, len(got), strings.Join(got, "\n"))
			}
			if len(s.Rewards()) != 0 {
				t.Fatalf("a request with a deviation granted %v", s.Rewards())
			}
		})
	}
}

// TestCaletaRewardCreateIsIdempotent: the same reward_uuid with the same
// content is the same reward (answered again, granted once); with other
// content it is refused.
func TestCaletaRewardCreateIsIdempotent(t *testing.T) {
	key, _ := rsaKey(t)
	s := promoSim(t, "caleta", key)
	status, first := promoPost(t, s, "caleta", key, caletaCreate, caletaReward, signed)
	if status != http.StatusOK {
		t.Fatalf("create: %d %s", status, first)
	}
	status, again := promoPost(t, s, "caleta", key, caletaCreate, caletaReward, signed)
	if status != http.StatusOK || again != first {
		t.Fatalf("retry: %d %s, want 200 %s", status, again, first)
	}
	other := strings.Replace(caletaReward, `"sub_partner_id":"casino-1"`, `"sub_partner_id":"casino-2"`, 1)
	status, body := promoPost(t, s, "caleta", key, caletaCreate, other, signed)
	if status != http.StatusConflict || !strings.Contains(body, "other content") {
		t.Fatalf("reuse with other content: %d %s, want 409", status, body)
	}
	if rws := s.Rewards(); len(rws) != 1 || rws[0].Remaining != 10 || rws[0].BetValue != 20 {
		t.Fatalf("rewards %+v, want one of 10 free bets of 20 cents", rws)
	}
	if devs := s.Deviations(); len(devs) != 0 {
		t.Fatalf("deviations %v", devs)
	}
}

// TestPromoServerFaultSwitch: while refusing, a grant is a 4xx and
// nothing is granted; Fail answers every call with its status.
func TestPromoServerFaultSwitch(t *testing.T) {
	key, _ := rsaKey(t)
	for _, tc := range []struct{ protocol, path, body string }{
		{"caleta", caletaCreate, caletaReward},
		{"tbb", tbbCreatePath, tbbCreate},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			s := promoSim(t, tc.protocol, key)
			s.RefuseGrants(true)
			if status, body := promoPost(t, s, tc.protocol, key, tc.path, tc.body, signed); status != http.StatusBadRequest ||
				!strings.Contains(body, "fault switch") {
				t.Fatalf("refused grant: %d %s", status, body)
			}
			if len(s.Rewards()) != 0 {
				t.Fatalf("a refused grant was kept: %v", s.Rewards())
			}
			s.RefuseGrants(false)
			s.Fail(http.StatusServiceUnavailable)
			if status, _ := promoPost(t, s, tc.protocol, key, tc.path, tc.body, signed); status != http.StatusServiceUnavailable {
				t.Fatalf("failing server answered %d", status)
			}
			s.Fail(0)
			if status, body := promoPost(t, s, tc.protocol, key, tc.path, tc.body, signed); status != http.StatusOK {
				t.Fatalf("grant: %d %s", status, body)
			}
			if devs := s.Deviations(); len(devs) != 0 {
				t.Fatalf("deviations %v", devs)
			}
		})
	}
}

// fakePromoWallet is a wallet of one player that keeps a balance (100.00
// EUR) and answers as Pitboss would: a free bet (caleta's is_free, tbb's
// bet of 0) costs nothing, a win is credited. It records every body.
type fakePromoWallet struct {
	mu      sync.Mutex
	balance int64 // minor units
	bodies  []map[string]any
}

func (f *fakePromoWallet) handler(protocol string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		dec := json.NewDecoder(r.Body)
		dec.UseNumber()
		_ = dec.Decode(&b)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.bodies = append(f.bodies, b)
		amount := int64(0)
		if n, ok := b["amount"].(json.Number); ok {
			amount, _ = n.Int64()
		}
		if protocol == "caleta" {
			amount /= 1000 // 1/100000 EUR to cents
		}
		switch path.Base(r.URL.Path) {
		case "bet":
			if b["is_free"] != true {
				f.balance -= amount
			}
		case "win":
			f.balance += amount
		}
		w.Header().Set("Content-Type", "application/json")
		var ans map[string]any
		if protocol == "caleta" {
			ans = map[string]any{"user": b["supplier_user"], "status": "RS_OK", "request_uuid": b["request_uuid"],
				"currency": "EUR", "balance": f.balance * 1000}
		} else {
			ans = map[string]any{"token": b["token"], "balance": f.balance}
			if id, ok := b["transaction_id"]; ok {
				ans["transaction_id"] = "ours-" + id.(string)
			}
		}
		_ = json.NewEncoder(w).Encode(ans)
	}
}

// TestSpendFreeBetsThenCancel spends free bets of a granted reward through
// a wallet in each protocol (zero deviations, the free bets taken off the
// reward, the wins credited), then tries to cancel it: a reward already
// used is refused, an unused one cancelled (twice: the same answer).
func TestSpendFreeBetsThenCancel(t *testing.T) {
	key, _ := rsaKey(t)
	for _, tc := range []struct {
		protocol, grantPath, cancelPath string
		grants                          []string
		refs                            [2]string
		cancel                          func(ref string) string
		refused                         int
	}{
		{"caleta", caletaCreate, caletaCancel,
			[]string{caletaReward, strings.Replace(caletaReward, `"r-1"`, `"r-2"`, 1)}, [2]string{"r-1", "r-2"},
			func(ref string) string { return `{"operator_id":"op-77","reward_uuid":"` + ref + `"}` }, http.StatusConflict},
		{"tbb", tbbCreatePath, tbbCancelPath, []string{tbbCreate, tbbCreate}, [2]string{"54001", "54002"},
			func(ref string) string {
				return `{"provider_name":"acme","provider_id":1,"player_id":"p-1","game_symbol":"g","bonus_id":` + ref +
					`,"brand_id":1}`
			}, http.StatusBadRequest},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			s := promoSim(t, tc.protocol, key)
			for _, g := range tc.grants {
				if status, body := promoPost(t, s, tc.protocol, key, tc.grantPath, g, signed); status != http.StatusOK {
					t.Fatalf("grant: %d %s", status, body)
				}
			}
			used, unused := tc.refs[0], tc.refs[1]
			wallet := &fakePromoWallet{balance: 10000}
			srv := httptest.NewServer(wallet.handler(tc.protocol))
			t.Cleanup(srv.Close)
			var out bytes.Buffer
			sp := providersim.Spend{Config: providersim.Config{Protocol: tc.protocol, BaseURL: srv.URL, Provider: "acme",
				PrivateKey: key, Secret: "wallet-secret", Out: &out}, Session: "gs-1", Reward: used, Bets: 2,
				Wins: []string{"1.50"}}
			rep, err := s.SpendFreeBets(context.Background(), sp)
			t.Logf("spend:\n%s", out.String())
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Deviations) != 0 || rep.Start.String() != "100.00" || rep.Final.String() != "101.50" {
				t.Fatalf("report: deviations %v, start %s, final %s; want none, 100.00, 101.50", rep.Deviations, rep.Start,
					rep.Final)
			}
			if rw, _ := s.Reward(used); rw.Remaining != 8 {
				t.Fatalf("reward %+v: %d free bets left, want 8", rw, rw.Remaining)
			}
			var bets, wins []map[string]any
			for _, b := range wallet.bodies {
				switch {
				case b["transaction_uuid"] != nil && b["reference_transaction_uuid"] == nil,
					tc.protocol == "tbb" && b["transaction_id"] != nil && b["round_close"] == nil:
					bets = append(bets, b)
				case b["transaction_uuid"] != nil || b["transaction_id"] != nil:
					wins = append(wins, b)
				}
			}
			if len(bets) != 2 || len(wins) != 2 {
				t.Fatalf("bets %v, wins %v; want two of each", bets, wins)
			}
			for i, b := range bets {
				w := wins[i]
				if tc.protocol == "caleta" {
					if b["is_free"] != true || b["reward_uuid"] != used || b["amount"] != json.Number("20000") ||
						w["is_free"] != true || w["reward_uuid"] != used || b["campaign_uuid"] != nil {
						t.Fatalf("free bet %v, its win %v", b, w)
					}
				} else if b["amount"] != json.Number("0") || b["round_id"] != w["round_id"] {
					t.Fatalf("free spin %v, its win %v", b, w)
				}
			}

			status, body := promoPost(t, s, tc.protocol, key, tc.cancelPath, tc.cancel(used), signed)
			if status != tc.refused || !strings.Contains(body, "cannot be canceled") {
				t.Fatalf("cancel of a used reward: %d %s, want %d", status, body, tc.refused)
			}
			if rw, _ := s.Reward(used); rw.Canceled {
				t.Fatal("a used reward was cancelled")
			}
			for range 2 {
				if status, body := promoPost(t, s, tc.protocol, key, tc.cancelPath, tc.cancel(unused), signed); status != http.StatusOK {
					t.Fatalf("cancel of an unused reward: %d %s", status, body)
				}
			}
			if rw, _ := s.Reward(unused); !rw.Canceled {
				t.Fatal("the unused reward was not cancelled")
			}
			for name, bad := range map[string]providersim.Spend{
				"more than left": func() providersim.Spend { x := sp; x.Bets = 9; return x }(),
				"cancelled":      func() providersim.Spend { x := sp; x.Reward = unused; return x }(),
				"unknown reward": func() providersim.Spend { x := sp; x.Reward = "nope"; return x }(),
			} {
				if _, err := s.SpendFreeBets(context.Background(), bad); !errors.Is(err, providersim.ErrConfig) {
					t.Errorf("spend %s: %v, want ErrConfig", name, err)
				}
			}
			if devs := s.Deviations(); len(devs) != 0 {
				t.Fatalf("deviations %v", devs)
			}
		})
	}
}

// TestPromoServerFallback: a path the server does not know goes to its
// fallback (Caleta's game list), so one server is the provider's whole
// endpoint; without one it is a deviation.
func TestPromoServerFallback(t *testing.T) {
	key, _ := rsaKey(t)
	s, err := providersim.StartPromoServer(providersim.PromoConfig{Protocol: "caleta", OperatorKey: &key.PublicKey,
		OperatorID: "op-77", Fallback: providersim.NewCaletaGamesAPI("op-77", &key.PublicKey, providersim.CaletaSampleGames()),
		Out: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	status, body := promoPost(t, s, "caleta", key, "/api/game/list", `{"operator_id":"op-77"}`, signed)
	if status != http.StatusOK || !strings.Contains(body, `"game_code"`) {
		t.Fatalf("game list through the fallback: %d %.200s", status, body)
	}
	if devs := s.Deviations(); len(devs) != 0 {
		t.Fatalf("deviations %v", devs)
	}
	plain := promoSim(t, "caleta", key)
	if status, _ := promoPost(t, plain, "caleta", key, "/api/game/list", `{"operator_id":"op-77"}`, signed); status != http.StatusNotFound ||
		len(plain.Deviations()) != 1 {
		t.Fatalf("without a fallback: %d, deviations %v", status, plain.Deviations())
	}
}
