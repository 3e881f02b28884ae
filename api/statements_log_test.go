package api_test

import (
	"context"
	"encoding/base64"
	"html"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/ledgerlog/ledgerlogtest"
)

// wantClientLog checks a closed statement's client log — the client's
// events at or below its position and their tree's root, as tlog computes
// them alone from the bodies — in its JSON, CSV and printable page.
func wantClientLog(t *testing.T, h *stmtHarness, v stmtView) {
	t.Helper()
	ctx := context.Background()
	rows, err := h.Pool.Query(ctx, `SELECT body::text FROM events WHERE split_part(stream_id, ':', 2) = $1 AND position <= $2
		ORDER BY position`, v.Statement.ClientID, v.Statement.Position)
	if err != nil {
		t.Fatal(err)
	}
	var tr ledgerlogtest.Tree
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			t.Fatal(err)
		}
		tr.Add(t, []byte(body))
	}
	n := tr.Size()
	if rows.Err() != nil || n == 0 {
		t.Fatalf("%d events (%v)", n, rows.Err())
	}
	root := tr.Root(t)
	want := base64.StdEncoding.EncodeToString(root[:])
	if v.Statement.LogSize != n || v.Statement.LogRoot != want {
		t.Fatalf("the statement's log: %d %s, the client's events give %d %s", v.Statement.LogSize, v.Statement.LogRoot, n, want)
	}
	rec := h.Do(apitest.Request{Method: http.MethodGet, Path: "/api/v1/statements/" + v.ID, Key: h.w.client.Key,
		Header: map[string]string{"Accept": "text/csv"}})
	if lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n"); rec.Code != http.StatusOK || len(lines) < 2 ||
		!strings.HasSuffix(lines[0], ",log_size,log_root") || !strings.HasSuffix(strings.TrimSpace(lines[1]), ","+strconv.FormatInt(n, 10)+","+want) {
		t.Fatalf("CSV %d\n%s", rec.Code, rec.Body)
	}
	rec = h.Do(apitest.Request{Method: http.MethodGet, Path: "/api/v1/statements/" + v.ID, Key: h.w.client.Key,
		Header: map[string]string{"Accept": "text/html"}})
	if rec.Code != http.StatusOK || !strings.Contains(html.UnescapeString(rec.Body.String()),
		strconv.FormatInt(n, 10)+" events, root <code>"+want+"</code>") {
		t.Fatalf("HTML %d\n%s", rec.Code, rec.Body)
	}
}
