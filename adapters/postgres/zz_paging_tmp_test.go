package postgres_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/projections"
)

func TestTmpPaging10M(t *testing.T) {
	dsn := os.Getenv("RM_PAGE_DSN")
	if dsn == "" {
		t.Skip()
	}
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	rm := postgres.NewReadModels(pool)
	ctx := context.Background()
	cases := []struct {
		name string
		f    projections.TransactionFilter
		p    projections.Page
	}{
		{"unfiltered page 1", projections.TransactionFilter{ClientID: "client-1"}, projections.Page{Number: 1, Size: 50}},
		{"unfiltered page 10", projections.TransactionFilter{ClientID: "client-1"}, projections.Page{Number: 10, Size: 50}},
		{"unfiltered page 30000 (offset 1.5M)", projections.TransactionFilter{ClientID: "client-1"}, projections.Page{Number: 30000, Size: 50}},
		{"unfiltered last page", projections.TransactionFilter{ClientID: "client-1"}, projections.Page{Number: 66667, Size: 50}},
		{"unfiltered page 6000 of 500", projections.TransactionFilter{ClientID: "client-1"}, projections.Page{Number: 6000, Size: 500}},
		{"player page 1", projections.TransactionFilter{ClientID: "client-1", PlayerID: "player-301"}, projections.Page{Number: 1, Size: 50}},
		{"player last page", projections.TransactionFilter{ClientID: "client-1", PlayerID: "player-301"}, projections.Page{Number: 4, Size: 50}},
		{"type page 1", projections.TransactionFilter{ClientID: "client-1", Type: "bet"}, projections.Page{Number: 1, Size: 50}},
		{"type page 100", projections.TransactionFilter{ClientID: "client-1", Type: "bet"}, projections.Page{Number: 100, Size: 50}},
		{"type page 2000 (offset 100k)", projections.TransactionFilter{ClientID: "client-1", Type: "bet"}, projections.Page{Number: 2000, Size: 50}},
		{"type page 20000 (offset 1M)", projections.TransactionFilter{ClientID: "client-1", Type: "bet"}, projections.Page{Number: 20000, Size: 50}},
		{"one day", projections.TransactionFilter{ClientID: "client-1", From: time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC), To: time.Date(2025, 1, 11, 0, 0, 0, 0, time.UTC)}, projections.Page{Number: 1, Size: 50}},
		{"one day page 100", projections.TransactionFilter{ClientID: "client-1", From: time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC), To: time.Date(2025, 1, 11, 0, 0, 0, 0, time.UTC)}, projections.Page{Number: 100, Size: 50}},
		{"provider+game page 1", projections.TransactionFilter{ClientID: "client-1", Provider: "provider-3", Game: "game-10"}, projections.Page{Number: 1, Size: 50}},
	}
	for _, c := range cases {
		var best time.Duration
		var page projections.TransactionPage
		for i := 0; i < 3; i++ {
			start := time.Now()
			page, err = rm.Transactions(ctx, c.f, c.p)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); i == 0 || d < best {
				best = d
			}
		}
		t.Logf("%-40s %8s rows %3d total %8d exact %v", c.name, best.Round(time.Microsecond), len(page.Rows), page.Total, page.TotalExact)
	}
}
