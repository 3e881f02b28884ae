package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Request is one request to the server.
type Request struct {
	Method, Path string // Path with its query
	// Key is sent as Authorization: Bearer <Key> when set.
	Key string
	// Body is sent verbatim when a string or []byte, else JSON-encoded;
	// nil and "" send no body. A request with a body says Content-Type:
	// application/json.
	Body any
	// Host is the request's host (which environment it addresses); empty:
	// the server's own address.
	Host string
	// RemoteAddr is the direct peer, host:port, of an in-process request;
	// empty: 192.0.2.1:1234.
	RemoteAddr string
	// Header are more request headers; they override the ones above.
	Header map[string]string
	// Context is the request's context (a deadline the test sets); nil:
	// context.Background().
	Context context.Context
}

// Do sends r to the server, over the loopback listener when
// Options.Loopback is set and in process otherwise. The answer comes back
// as a recorder either way, so assertions read the same.
func (h *Harness) Do(r Request) *httptest.ResponseRecorder {
	h.t.Helper()
	if h.opts.Loopback {
		if r.RemoteAddr != "" {
			h.t.Fatalf("%s %s: RemoteAddr needs an in-process request (Options.Loopback is set)", r.Method, r.Path)
		}
		return h.send(r)
	}
	return serve(h.t, h.Handler, r)
}

// Call sends method path with key and body: Do for the common case.
func (h *Harness) Call(method, path, key string, body any) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.Do(Request{Method: method, Path: path, Key: key, Body: body})
}

// Get is Call of a GET.
func (h *Harness) Get(path, key string) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.Call(http.MethodGet, path, key, nil)
}

// Admin calls the admin API with the harness's admin token.
func (h *Harness) Admin(method, path string, body any) *httptest.ResponseRecorder {
	h.t.Helper()
	if h.opts.AdminToken == "" {
		h.t.Fatal("Admin: the harness has no admin token (Options.AdminToken)")
	}
	return h.Call(method, path, h.opts.AdminToken, body)
}

// requestBody is what Request.Body sends, and whether it sends anything;
// it fails the test when a value does not encode.
func requestBody(t testing.TB, b any) (raw []byte, ok bool) {
	t.Helper()
	switch v := b.(type) {
	case nil:
		return nil, false
	case string:
		return []byte(v), v != ""
	case []byte:
		return v, true
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("encode the request body: %v", err)
		}
		return raw, true
	}
}

func (r Request) newRequest(t testing.TB, ctx context.Context, base string) *http.Request {
	t.Helper()
	raw, hasBody := requestBody(t, r.Body)
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(raw)
	}
	if r.Context != nil {
		ctx = r.Context
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, base+r.Path, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	if r.Host != "" {
		req.Host = r.Host
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.Key != "" {
		req.Header.Set("Authorization", "Bearer "+r.Key)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	return req
}

// serve answers r in process, the request shaped as the server would
// have read it off the wire.
func serve(t testing.TB, handler http.Handler, r Request) *httptest.ResponseRecorder {
	t.Helper()
	req := r.newRequest(t, context.Background(), "http://example.com")
	req.URL.Scheme, req.URL.Host = "", ""
	req.RequestURI = req.URL.RequestURI()
	if req.Body == nil {
		req.Body = http.NoBody // a server's request always has one
	}
	req.RemoteAddr = r.RemoteAddr
	if req.RemoteAddr == "" {
		req.RemoteAddr = "192.0.2.1:1234"
	}
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	return rec
}

// send makes r over the loopback listener and records the answer.
func (h *Harness) send(r Request) *httptest.ResponseRecorder {
	h.t.Helper()
	res, err := h.client.Do(r.newRequest(h.t, context.Background(), h.URL))
	if err != nil {
		h.t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatalf("%s %s: read the answer: %v", r.Method, r.Path, err)
	}
	rec := httptest.NewRecorder()
	for k, v := range res.Header {
		rec.Header()[k] = v
	}
	rec.WriteHeader(res.StatusCode)
	_, _ = rec.Body.Write(b)
	return rec
}
