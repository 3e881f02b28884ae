package api_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/projector/projectortest"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
	"github.com/pitboss/pitboss/reconcile"
)

// TestReconcileUploadBounds (issue 37, item 1): the upload is bounded in
// flight — one per client, from before its body is read (429 with
// Retry-After; the process's comparisons: TestUploadSlots) — and in size: a file over MaxReconcileFileBytes or MaxFileRows is 413 naming the
// limit, and a transaction id that breaks the id rule is a 400 naming its
// line, never echoed back whole.
func TestReconcileUploadBounds(t *testing.T) {
	t.Parallel()
	h := newRQHarness(t)
	const query = "/api/v1/reconciliations?day=2025-03-01&provider=" + projectortest.Provider
	// A second and a third client of their own, keys with reports:read.
	keys := []string{h.full}
	for _, c := range []string{"rq-b", "rq-c"} {
		h.AddClient(c, "sandbox")
		k, _ := h.IssueKey(c, gateway.ScopeReportsRead, gateway.ScopeTransactionsRead)
		keys = append(keys, k)
	}

	// hold starts an upload with key whose body never ends until the
	// returned func is called; it answers on done.
	hold := func(key string) (finish func(), done chan int) {
		pr, pw := io.Pipe()
		req, err := http.NewRequest(http.MethodPost, h.URL+query, pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "text/csv")
		done = make(chan int, 1)
		go func() {
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- 0
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			done <- res.StatusCode
		}()
		if _, err := pw.Write([]byte("transaction_id,amount,currency\n")); err != nil {
			t.Fatal(err)
		}
		finish = func() { _ = pw.Close() }
		t.Cleanup(finish) // a failing test still lets the server shut down
		return finish, done
	}
	post := func(key, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, h.URL+query, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "text/csv")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	const file = "transaction_id,amount,currency\nb1,10.00,EUR\n"

	finishA, doneA := hold(keys[0])
	// The client's second upload waits for none: 429 with Retry-After.
	var res *http.Response
	eventually.True(t, 10*time.Second, "the client's second upload refused", func() bool {
		res = post(keys[0], file)
		return res.StatusCode == http.StatusTooManyRequests
	})
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	// Another client's upload goes through meanwhile.
	if res := post(keys[1], file); res.StatusCode != http.StatusOK {
		t.Fatalf("another client's upload: %d", res.StatusCode)
	}
	finishA()
	if code := <-doneA; code != http.StatusOK {
		t.Fatalf("the held upload answered %d once its file ended", code)
	}
	// Their slots are free again.
	if res := post(keys[2], file); res.StatusCode != http.StatusOK {
		t.Fatalf("after the held uploads: %d", res.StatusCode)
	}

	// Size: the bytes and the rows, each a 413 naming its limit.
	type answer struct {
		status int
		body   apitest.ErrorBody
	}
	do := func(body string) answer {
		rec := h.Do(apitest.Request{Method: http.MethodPost, Path: query, Key: h.full, Body: body,
			Header: map[string]string{"Content-Type": "text/csv"}})
		return answer{rec.Code, apitest.Decode[apitest.ErrorBody](t, rec)}
	}
	// Fewer rows than the row limit, more bytes than the byte limit.
	row := strings.Repeat("b", 100) + ",10.00,EUR\n"
	big := "transaction_id,amount,currency\n" + strings.Repeat(row, api.MaxReconcileFileBytes/len(row)+2)
	if a := do(big); a.status != http.StatusRequestEntityTooLarge || a.body.Error.Details["limit_bytes"] == nil {
		t.Fatalf("a file over %d bytes: %d %+v", api.MaxReconcileFileBytes, a.status, a.body.Error)
	}
	var rows strings.Builder
	rows.WriteString("transaction_id,amount,currency\n")
	for i := range reconcile.MaxFileRows + 1 {
		fmt.Fprintf(&rows, "t%d,1,EUR\n", i)
	}
	if a := do(rows.String()); a.status != http.StatusRequestEntityTooLarge || a.body.Error.Details["limit_rows"] == nil {
		t.Fatalf("a file over %d rows: %d %+v", reconcile.MaxFileRows, a.status, a.body.Error)
	}
	long := strings.Repeat("x", 5000)
	a := do("transaction_id,amount,currency\nb1,10.00,EUR\n" + long + ",1.00,EUR\n")
	if a.status != http.StatusBadRequest || a.body.Error.Code != wire.CodeInvalidRequest ||
		strings.Contains(a.body.Error.Message, long) || !strings.Contains(a.body.Error.Message, "line 3") {
		t.Fatalf("an id over the id rule: %d %+v", a.status, a.body.Error)
	}
}
