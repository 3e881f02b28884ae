package providersim_test

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pitboss/pitboss/providersim"
)

// TestCaletaGamesAPI: the simulator's game list answers a request signed
// with the operator's key and naming the operator, and refuses any other.
func TestCaletaGamesAPI(t *testing.T) {
	t.Parallel()
	ours, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	api := providersim.NewCaletaGamesAPI("op-1", &ours.PublicKey, providersim.CaletaSampleGames())
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	call := func(path string, key *rsa.PrivateKey, body string) (int, []byte) {
		sum := sha256.Sum256([]byte(body))
		sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewBufferString(body))
		req.Header.Set("X-Auth-Signature", base64.StdEncoding.EncodeToString(sig))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		return resp.StatusCode, buf.Bytes()
	}

	status, raw := call("/api/game/list", ours, `{"operator_id":"op-1"}`)
	var games []map[string]any
	if status != http.StatusOK || json.Unmarshal(raw, &games) != nil || len(games) != 5 || games[3]["game_code"] != "cg_blackjack" {
		t.Fatalf("signed call: %d %s", status, raw)
	}
	for _, field := range []string{"url_thumb", "url_background", "product", "platforms", "name", "game_id", "game_code",
		"enabled", "category", "blocked_countries"} {
		if _, ok := games[0][field]; !ok {
			t.Errorf("a game lacks the document's %s", field)
		}
	}
	api.SetGames(providersim.CaletaSampleGames()[:1])
	if _, raw := call("/api/game/list", ours, `{"operator_id":"op-1"}`); json.Unmarshal(raw, &games) != nil || len(games) != 1 {
		t.Fatalf("after SetGames: %s", raw)
	}
	for _, tc := range []struct {
		name, path, body string
		key              *rsa.PrivateKey
		want             int
	}{
		{"another key", "/api/game/list", `{"operator_id":"op-1"}`, stranger, http.StatusUnauthorized},
		{"another operator", "/api/game/list", `{"operator_id":"op-2"}`, ours, http.StatusNotFound},
		{"no operator", "/api/game/list", `{}`, ours, http.StatusBadRequest},
		{"another call", "/api/game/url", `{"operator_id":"op-1"}`, ours, http.StatusNotFound},
	} {
		if status, raw := call(tc.path, tc.key, tc.body); status != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, status, raw, tc.want)
		}
	}
	api.FailWith(http.StatusBadGateway)
	if status, _ := call("/api/game/list", ours, `{"operator_id":"op-1"}`); status != http.StatusBadGateway {
		t.Fatalf("failing: %d", status)
	}
	if calls, refused := api.Calls(); calls != 6 || refused != 3 {
		t.Fatalf("calls %d, refused %d", calls, refused)
	}
}
