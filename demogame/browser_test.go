package demogame_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/browsertest"
	"github.com/pitboss/pitboss/internal/eventually"
)

// historyItem is an item of GET /api/v1/transactions.
type historyItem struct {
	ID          string      `json:"id"`
	Type        string      `json:"type"`
	Amount      json.Number `json:"amount"`
	Status      string      `json:"status"`
	Provider    *string     `json:"provider"`
	Game        *string     `json:"game"`
	RoundID     *string     `json:"round_id"`
	ExternalID  *string     `json:"external_id"`
	ReferenceID *string     `json:"reference_id"`
}

// TestDemoGameInABrowser plays the built-in demo game in headless
// Chromium against the real server on a loopback port: launch through the
// API, open game_url, spin by mouse and by keyboard, watch the balance on
// the page, then find every round's bet and win through GET
// /api/v1/transactions (relay -> Kafka -> projector -> read model) and in
// the events table.
func TestDemoGameInABrowser(t *testing.T) {
	t.Parallel()
	browser := browsertest.ChromiumPath(t)
	start := time.Now()
	h, c, l := demoFixture(t, apitest.Options{ReadModels: true}, "20.00", gateway.ScopeTransactionsRead, gateway.ScopeWalletRead)
	shots := browsertest.OutDir(t, "screenshots")

	tab := browsertest.OpenBrowser(t, browser, 900, 1100, 3*time.Minute)
	ctx := tab.Ctx
	shot := func(name string) { t.Helper(); tab.Screenshot(t, shots, name) }
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	wait := func(what, expr string) {
		t.Helper()
		tab.WaitFor(t, what, expr, func() string { return strconv.Quote(text("#result")) })
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(l.GameURL)); err != nil {
		t.Fatal(err)
	}
	wait("the page to load its state", `document.body.dataset.state === "ready"`)
	t.Logf("%s: game page loaded in chromium", time.Since(start).Round(time.Millisecond))
	if got := text("#balance"); got != "20.00" {
		t.Fatalf("balance on the page %q, want 20.00", got)
	}
	shot("demo-1-loaded.png")

	// The keyboard changes the stake: + moves from 1.00 to 2.00, - back.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`),
		chromedp.KeyEvent("+")); err != nil {
		t.Fatal(err)
	}
	if v, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("stake"))); err != nil || v != "2.00" {
		t.Fatalf("stake after + is %q (%v), want 2.00", v, err)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent("-")); err != nil {
		t.Fatal(err)
	}

	// Spin until the balance on the page has changed: a round that pays
	// exactly the stake back (one cherry) leaves it as it was. Rounds go
	// by mouse, by Enter on the focused Spin button, and by Space outside
	// any control.
	var roundIDs []string
	balance := "20.00"
	for round := 1; round <= 15 && (round <= 3 || balance == "20.00"); round++ {
		var action chromedp.Action[chromedp.Void]
		switch round % 3 {
		case 1:
			action = chromedp.Click(chromedp.ID("spin"))
		case 2:
			action = chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
				return chromedp.Do(ctx, chromedp.Focus(chromedp.ID("spin")), chromedp.KeyEvent("\r"))
			})
		default:
			action = chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
				return chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`), chromedp.KeyEvent(" "))
			})
		}
		if err := chromedp.Do(ctx, action); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		wait("round "+strconv.Itoa(round), `document.body.dataset.rounds === "`+strconv.Itoa(round)+
			`" && document.body.dataset.state === "ready"`)
		id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.lastRound`))
		if err != nil || id == "" {
			t.Fatalf("round %d id %q: %v", round, id, err)
		}
		roundIDs = append(roundIDs, id)
		balance = text("#balance")
		if round == 1 {
			shot("demo-2-after-first-spin.png")
		}
	}
	if balance == "20.00" {
		t.Fatalf("the balance on the page never changed in %d rounds", len(roundIDs))
	}
	if r := text("#result"); !strings.Contains(r, "win") && !strings.Contains(r, "No win") {
		t.Fatalf("result text %q says neither win nor no win", r)
	}
	shot("demo-3-balance-changed.png")
	t.Logf("%s: %d rounds played, balance %s", time.Since(start).Round(time.Millisecond), len(roundIDs), balance)

	// The page shows what the wallet holds.
	wallet := domain.PlayerWallet(c.ID, "p1", eur)
	if got, want := balance, domain.FromMinor(h.Balance(wallet), eur).String(); got != want {
		t.Fatalf("page balance %s, wallet %s", got, want)
	}
	wb := apitest.Data[struct {
		Balances []struct {
			Currency string      `json:"currency"`
			Balance  json.Number `json:"balance"`
		} `json:"balances"`
	}](t, h.Get("/api/v1/wallet/balance?player_id=p1&currency=EUR", c.Key))
	if len(wb.Balances) != 1 || wb.Balances[0].Balance.String() != balance {
		t.Fatalf("GET /api/v1/wallet/balance: %+v, want EUR %s", wb, balance)
	}

	// Every round is a bet and a win in the transaction history (the read
	// model catches up through Kafka) and in the events table.
	want := map[string]bool{}
	for _, id := range roundIDs {
		want[id+"/bet"], want[id+"/win"] = true, true
	}
	eventually.NoError(t, 90*time.Second, "every bet and win in GET /api/v1/transactions", func() error {
		q := url.Values{"player_id": {"p1"}, "provider": {"demo"}, "per_page": {"500"}}
		rec := h.Get("/api/v1/transactions?"+q.Encode(), c.Key)
		found := 0
		for _, it := range apitest.Data[[]historyItem](t, rec) {
			if it.RoundID != nil && want[*it.RoundID+"/"+it.Type] {
				if it.Game == nil || *it.Game != "demo-slot" || it.ExternalID == nil ||
					!strings.HasPrefix(*it.ExternalID, *it.RoundID) {
					t.Fatalf("history item %+v", it)
				}
				found++
			}
		}
		if found != len(want) {
			return fmt.Errorf("history has %d of the %d bets and wins: %s", found, len(want), rec.Body)
		}
		return nil
	})
	t.Logf("%s: every bet and win is in GET /api/v1/transactions", time.Since(start).Round(time.Millisecond))
	bets, wins := h.Events(wallet, domain.EventBetPlaced), h.Events(wallet, domain.EventWinCredited)
	if len(bets) != len(roundIDs) || len(wins) != len(roundIDs) {
		t.Fatalf("%d bet and %d win events for %d rounds", len(bets), len(wins), len(roundIDs))
	}
	for i, id := range roundIDs {
		if bets[i].Data.RoundID != id || wins[i].Data.RoundID != id || !wins[i].Data.RoundClosed {
			t.Fatalf("round %s: bet %+v win %+v", id, bets[i].Data, wins[i].Data)
		}
	}

	requests, problems := tab.Recorded()
	if len(problems) > 0 {
		t.Fatalf("script errors on the page: %v", problems)
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, h.URL+"/") {
			t.Fatalf("the page requested %s, outside %s", u, h.URL)
		}
	}
	if len(requests) < 4 { // page, script, style, state (+ spins)
		t.Fatalf("only %d requests recorded: %v", len(requests), requests)
	}
}
