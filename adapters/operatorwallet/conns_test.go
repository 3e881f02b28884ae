package operatorwallet_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/operatorwallet"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

// TestConnectionsReusedUnderConcurrency: the default client keeps a
// connection per call in flight, up to MaxIdleConnsPerWallet, so a second
// burst of as many calls at once to the same wallet dials nothing new.
// With 32 kept (before), the second burst of 64 dialled 32 connections.
func TestConnectionsReusedUnderConcurrency(t *testing.T) {
	t.Parallel()
	const burst = 64
	var (
		dialled atomic.Int64
		arrived sync.WaitGroup
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every call of a burst is held until all have arrived, so the
		// burst needs a connection per call.
		arrived.Done()
		arrived.Wait()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"OK","balance":{"cashAmount":10.00,"bonusAmount":0,"promoAmount":0}}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialled.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	w, err := operatorwallet.New(operatorwallet.Config{Protocol: "valkyrie-pam", BaseURL: srv.URL, Credential: pamAPIToken,
		Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p := wallet.OperatorPlayer{Player: "p1", Token: "tok", Provider: "prov", Currency: domain.MustCurrency("EUR")}
	for round := range 2 {
		arrived.Add(burst)
		var wg sync.WaitGroup
		errs := make(chan error, burst)
		for range burst {
			wg.Go(func() {
				if _, err := w.Balance(context.Background(), p); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("burst %d: %v", round+1, err)
		}
		if round == 0 && dialled.Load() != burst {
			t.Fatalf("first burst dialled %d connections, want %d", dialled.Load(), burst)
		}
	}
	if n := dialled.Load() - burst; n != 0 {
		t.Fatalf("the second burst of %d calls dialled %d new connections, want 0 (all kept from the first)", burst, n)
	}
}
