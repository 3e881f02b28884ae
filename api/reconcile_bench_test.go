package api_test

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/gateway"
)

// BenchmarkReconcileUploads12 is the review's load (issue 37, item 1):
// twelve reconciliation uploads at once, each a file of 199,999 rows
// (about 13 MB), against the real server on loopback. It reports the
// process's peak heap in use while they run (sampled every 5 ms), the
// answers by status, and the time of the round:
//
//	go test -run '^$' -bench ReconcileUploads12 -benchtime 3x ./api/
//
// oneKey sends all twelve with one client's key (the review's case);
// twelveKeys with twelve clients' keys.
func BenchmarkReconcileUploads12(b *testing.B) {
	h := apitest.New(b, apitest.Options{})
	var keys []string
	for i := range 12 {
		c := fmt.Sprintf("rc-%02d", i)
		h.AddClient(c, "sandbox")
		k, _ := h.IssueKey(c, gateway.ScopeReportsRead, gateway.ScopeTransactionsRead)
		keys = append(keys, k)
	}
	var file strings.Builder
	file.WriteString("transaction_id,amount,currency\n")
	for i := range 199_999 {
		fmt.Fprintf(&file, "txn-0195f3c2-7d41-7a8e-9c10-%012d-%08d,10.00,EUR\n", i*7919, i)
	}
	body := file.String()
	for _, tc := range []struct {
		name string
		key  func(i int) string
	}{
		{"oneKey", func(int) string { return keys[0] }},
		{"twelveKeys", func(i int) string { return keys[i] }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var peak uint64
			statuses := map[int]int{}
			for b.Loop() {
				runtime.GC()
				stop := make(chan struct{})
				sampled := make(chan uint64)
				go func() {
					var m runtime.MemStats
					var top uint64
					tick := time.NewTicker(5 * time.Millisecond)
					defer tick.Stop()
					for {
						runtime.ReadMemStats(&m)
						top = max(top, m.HeapInuse)
						select {
						case <-stop:
							sampled <- top
							return
						case <-tick.C:
						}
					}
				}()
				var wg sync.WaitGroup
				var mu sync.Mutex
				for i := range 12 {
					wg.Go(func() {
						req, _ := http.NewRequest(http.MethodPost, h.URL+"/api/v1/reconciliations?day=2025-03-01",
							strings.NewReader(body))
						req.Header.Set("Authorization", "Bearer "+tc.key(i))
						req.Header.Set("Content-Type", "text/csv")
						res, err := http.DefaultClient.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, res.Body)
						res.Body.Close()
						mu.Lock()
						statuses[res.StatusCode]++
						mu.Unlock()
					})
				}
				wg.Wait()
				close(stop)
				peak = max(peak, <-sampled)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			for code, n := range statuses {
				b.ReportMetric(float64(n)/float64(b.N), fmt.Sprintf("answers-%d/op", code))
			}
		})
	}
}
