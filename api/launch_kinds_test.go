package api_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/gateway/rsasig"
)

// caletaGamesAPI is a Caleta Games API on loopback: it checks each
// /api/game/url call's X-Auth-Signature with our launch key's public half,
// as Caleta does, and hands out a game URL holding the token.
type caletaGamesAPI struct {
	*httptest.Server
	calls chan map[string]any
}

func newCaletaGamesAPI(t *testing.T, verifyWith func(body []byte, sig string) error) *caletaGamesAPI {
	t.Helper()
	g := &caletaGamesAPI{calls: make(chan map[string]any, 8)}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/game/url" || r.Method != http.MethodPost {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":"no such path"}`)
			return
		}
		if err := verifyWith(body, r.Header.Get("X-Auth-Signature")); err != nil {
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"error":"invalid signature"}`)
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		g.calls <- m
		if m["game_code"] == "cg_blocked" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":"The game is not available to this operator."}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"url": "https://games.caleta.example/games/?token=" + m["token"].(string)})
	}))
	t.Cleanup(g.Close)
	return g
}

// TestCaletaLaunchEndToEnd: a launch through the operator API reaches
// Caleta's Games API signed with our launch key, answers the game URL it
// returned, and the session id it sent as token is a session the Caleta
// wallet then accepts.
func TestCaletaLaunchEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := apitest.New(t, apitest.Options{Loopback: true})
	ourKey, providerKey := newRSAKey(t), newRSAKey(t)
	ourPublic, err := rsasig.Prepare(&ourKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	games := newCaletaGamesAPI(t, func(body []byte, sig string) error {
		return gateway.VerifyRSASHA256(ourPublic, body, sig)
	})
	h.AddProvider("caleta", "Caleta Gaming", gateway.ProviderKindCaleta, games.URL)
	if err := h.Gateway.UpsertProvider(ctx, gateway.Provider{ID: "caleta", Name: "Caleta Gaming",
		Secret: apitest.ProviderSecret("caleta"), Enabled: true, WalletProtocol: gateway.WalletProtocolCaleta,
		WalletPublicKey: publicPEM(t, providerKey)}); err != nil {
		t.Fatal(err)
	}
	h.AddGame("torch", "caleta", "Torch of Fire", "slots", true)
	h.AddGame("blocked", "caleta", "Blocked", "slots", true)
	for id, code := range map[string]string{"torch": "cg_torchoffire", "blocked": "cg_blocked"} {
		if err := h.Gateway.SetProviderGameCode(ctx, id, code); err != nil {
			t.Fatal(err)
		}
	}
	der, err := x509.MarshalPKCS8PrivateKey(ourKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Gateway.SetProviderLaunchCredentials(ctx, "caleta", gateway.LaunchCredentials{OperatorID: "pitboss-op",
		Country: "BR", Secret: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))}); err != nil {
		t.Fatal(err)
	}
	c := h.NewClient(gateway.ScopeLaunch)
	if list := apitest.Data[[]ctProviderView](t, h.Call(http.MethodGet, "/api/v1/providers", c.Key, "")); len(list) != 1 ||
		list[0].Kind != gateway.ProviderKindCaleta || list[0].Status != gateway.ProviderAvailable {
		t.Fatalf("providers %+v", list)
	}

	l := apitest.Data[apitest.Launch](t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key,
		`{"provider":"caleta","game_id":"torch","player_id":"p1","currency":"EUR","language":"pt-BR"}`))
	if l.GameURL != "https://games.caleta.example/games/?token="+l.SessionID {
		t.Fatalf("game_url %q for session %s", l.GameURL, l.SessionID)
	}
	wantLaunched(t, h, c, "p1", "caleta", "torch", l)
	call := <-games.calls
	want := map[string]any{"operator_id": "pitboss-op", "sub_partner_id": c.ID, "token": l.SessionID, "user": "p1",
		"game_code": "cg_torchoffire", "currency": "EUR", "country": "BR", "lang": "pt"}
	for k, v := range want {
		if call[k] != v {
			t.Fatalf("Games API call field %s = %v, want %v (call %v)", k, call[k], v, call)
		}
	}
	if lobby, _ := call["lobby_url"].(string); !strings.Contains(lobby, "/v1/return?session="+l.SessionID) {
		t.Fatalf("lobby_url %q", call["lobby_url"])
	}

	// The token is a real session: Caleta's first wallet call on it is
	// answered with the player's balance.
	raw, _ := json.Marshal(map[string]any{"token": l.SessionID, "request_uuid": "req-1", "game_code": "cg_torchoffire",
		"supplier_user": "cg_p1"})
	rec := h.Do(apitest.Request{Method: http.MethodPost, Path: "/provider/caleta/caleta/wallet/balance", Body: raw,
		Header: map[string]string{"X-Auth-Signature": caletaSign(t, providerKey, raw)}})
	wantCaletaOK(t, decodeCaleta(t, rec, raw), 0, "p1")

	// Caleta's refusal (its 404 {"error"}) is our 502 PROVIDER_REJECTED,
	// and no launch is recorded.
	before := len(h.Events(domain.PlayerWallet(c.ID, "p1", ctEUR), domain.EventGameLaunched))
	e := apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key, apitest.LaunchBody("caleta", "blocked", "p1", "EUR")),
		http.StatusBadGateway, wire.CodeProviderRejected)
	if e.Error.Details["provider_status"] != json.Number("404") || !strings.Contains(e.Error.Message, "not available") {
		t.Fatalf("refusal %+v", e.Error)
	}
	if n := len(h.Events(domain.PlayerWallet(c.ID, "p1", ctEUR), domain.EventGameLaunched)); n != before {
		t.Fatalf("a refused launch was recorded (%d events, want %d)", n, before)
	}
}
