package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// Preloading goes through the operator API, as an operator's back end
// would: `pitboss sandbox` makes the client, its API key and the demo
// provider with its secret; every player then gets a deposit
// (POST /api/v1/transactions) and a game session (POST /api/v1/game/launch).

// sandboxCreds are what `pitboss sandbox` left in the data folder.
type sandboxCreds struct {
	key, provider, providerSecret, game string
}

func readSandbox(dataDir string) (sandboxCreds, error) {
	key, err := readFileTrim(filepath.Join(dataDir, "sandbox.key"))
	if err != nil {
		return sandboxCreds{}, fmt.Errorf("sandbox key: %w", err)
	}
	secret, err := readFileTrim(filepath.Join(dataDir, "demo-provider.secret"))
	if err != nil {
		return sandboxCreds{}, fmt.Errorf("demo provider secret: %w", err)
	}
	return sandboxCreds{key: key, provider: "demo", providerSecret: secret, game: "demo-slot"}, nil
}

// operator calls the bearer-key API.
type operator struct {
	http *http.Client
	base string
	key  string
}

// post sends body and decodes the envelope's data into out.
func (o operator) post(ctx context.Context, path string, body, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.base+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+o.key)
	return o.do(req, out)
}

func (o operator) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+o.key)
	return o.do(req, out)
}

func (o operator) do(req *http.Request, out any) error {
	res, err := o.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", req.Method, req.URL.Path, err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d: %s", req.Method, req.URL.Path, res.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// preload funds and launches n players, 32 at a time.
func preload(ctx context.Context, op operator, creds sandboxCreds, n int) ([]player, error) {
	players := make([]player, n)
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range 32 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				p, err := preloadOne(ctx, op, creds, i)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				players[i] = p
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, fmt.Errorf("preload players: %w", first)
	}
	return players, ctx.Err()
}

func preloadOne(ctx context.Context, op operator, creds sandboxCreds, i int) (player, error) {
	p := player{id: "bench-player-" + strconv.Itoa(i+1), currency: "EUR"}
	if i%4 == 3 {
		p.currency = "USD"
	}
	if err := op.post(ctx, "/api/v1/transactions", map[string]any{"type": "deposit",
		"transaction_id": "bench-deposit-" + strconv.Itoa(i+1), "player_id": p.id, "amount": "100000.00",
		"currency": p.currency}, nil); err != nil {
		return p, err
	}
	var launch struct {
		Data struct {
			SessionID string `json:"session_id"`
		} `json:"data"`
	}
	if err := op.post(ctx, "/api/v1/game/launch", map[string]any{"provider": creds.provider, "game_id": creds.game,
		"player_id": p.id, "currency": p.currency}, &launch); err != nil {
		return p, err
	}
	if launch.Data.SessionID == "" {
		return p, fmt.Errorf("launch of %s answered no session_id", p.id)
	}
	p.session = launch.Data.SessionID
	return p, nil
}
