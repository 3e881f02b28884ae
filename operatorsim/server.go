package operatorsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// bufferedResponse keeps a handler's answer until the fault injection
// decides whether it is sent or lost.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedResponse) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedResponse) sendTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}

// call wraps a wallet call: the latency, the fault drawn for it, and its
// log line.
func (s *Sim) call(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.gate.RLock()
		defer s.gate.RUnlock()
		// The body is read first: once it is read, net/http watches the
		// connection, so a client that gives up (or a restart that closes
		// it) ends the call's context, and a held call with it.
		body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		r.Body = io.NopCloser(bytes.NewReader(body))
		ci := &callInfo{}
		r = r.WithContext(context.WithValue(r.Context(), callInfoKey{}, ci))
		f, cfg := s.faults.draw()
		status, outcome := s.serveCall(w, r, next, f, cfg)
		s.log.Info("call", "method", r.Method, "path", r.URL.Path, "call", ci.what, "status", status,
			"fault", f.String(), "outcome", outcome, "correlation", r.Header.Get("X-Correlation-ID"),
			"took", time.Since(start).Round(time.Microsecond))
		if outcome == "dropped" {
			panic(http.ErrAbortHandler) // net/http closes the connection, unanswered
		}
	})
}

// serveCall serves one call under fault f and says what became of it.
func (s *Sim) serveCall(w http.ResponseWriter, r *http.Request, next http.Handler, f fault, cfg Faults) (int, string) {
	if !s.wait(r.Context(), cfg.Latency) {
		return 0, "client gone"
	}
	switch f {
	case faultRestart:
		s.restartLater()
		return 0, "dropped"
	case faultTimeout:
		if !s.wait(r.Context(), cfg.TimeoutHold) {
			return 0, "held until the client gave up"
		}
		s.protocolFault(w, http.StatusGatewayTimeout)
		return http.StatusGatewayTimeout, "held, not applied"
	case faultError:
		s.protocolFault(w, cfg.ErrorStatus)
		return cfg.ErrorStatus, "not applied"
	}
	buf := &bufferedResponse{header: http.Header{}}
	next.ServeHTTP(buf, r)
	if f == faultLost {
		if cfg.LostAnswerStatus == 0 {
			return buf.status, "dropped"
		}
		s.protocolFault(w, cfg.LostAnswerStatus)
		return cfg.LostAnswerStatus, "applied, answer lost"
	}
	buf.sendTo(w)
	return buf.status, "answered"
}

// wait waits d, or until ctx ends or the simulator closes; false: it did
// not wait the whole d.
func (s *Sim) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.closed:
	}
	return false
}

// protocolFault answers a fault in the protocol's error shape.
func (s *Sim) protocolFault(w http.ResponseWriter, status int) {
	if s.cfg.Protocol == ProtocolTBB {
		tbbError(w, status, "")
		return
	}
	code := pamErrUndefined
	if status == http.StatusGatewayTimeout {
		code = pamErrTimeout
	}
	pamFail(w, status, code, fmt.Sprintf("simulated fault: HTTP %d", status), nil)
}

// server is one life of the HTTP server: a restart makes the next.
type server struct {
	hs   *http.Server
	done chan struct{}
}

// Start listens on addr (host:port; port 0 picks one) and serves until
// Close; it returns the base URL ("http://127.0.0.1:PORT"). A restart
// listens on the same address again.
func (s *Sim) Start(ctx context.Context, addr string) (string, error) {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.srv != nil {
		return "", errors.New("operator simulator: already started")
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("operator simulator: listen: %w", err)
	}
	s.addr = ln.Addr().String()
	s.srv = s.serve(ln)
	return "http://" + s.addr, nil
}

func (s *Sim) serve(ln net.Listener) *server {
	srv := &server{hs: &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(srv.done)
		if err := srv.hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("serve", "err", err)
		}
	}()
	return srv
}

// Close stops the simulator: restarts under way end, held calls are let
// go, and the server shuts down within ctx.
func (s *Sim) Close(ctx context.Context) error {
	s.closeMu.Do(func() { close(s.closed) })
	s.bg.Wait()
	s.srvMu.Lock()
	srv := s.srv
	s.srvMu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.hs.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, srv.hs.Close())
	}
	<-srv.done
	if err != nil {
		return fmt.Errorf("operator simulator: shut down: %w", err)
	}
	return nil
}

// restartLater starts a restart in the background (the call that asked
// for it must return first: the restart waits for every call to end).
func (s *Sim) restartLater() {
	select {
	case <-s.closed:
		return
	default:
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		if err := s.restart(); err != nil {
			s.log.Error("restart", "err", err)
		}
	}()
}

// restart is one simulated crash and start: the server and its
// connections are closed, the calls under way end, the state is read back
// from the state file, and after the pause the same address is listened
// on again. Without Start it only reads the state back.
func (s *Sim) restart() error {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.srv != nil {
		_ = s.srv.hs.Close()
		<-s.srv.done
	}
	s.gate.Lock()
	var err error
	if s.cfg.StatePath != "" { // memory only: the state stays as it is
		s.store.mu.Lock()
		err = s.store.load()
		s.store.mu.Unlock()
	}
	s.gate.Unlock()
	s.faults.countRestart()
	if err != nil {
		return err
	}
	s.log.Info("restart", "state", s.cfg.StatePath, "pause", s.faults.get().RestartPause)
	if s.srv == nil {
		return nil
	}
	if !s.wait(context.Background(), s.faults.get().RestartPause) {
		return nil // closing
	}
	ln, err := s.relisten()
	if err != nil {
		return err
	}
	s.srv = s.serve(ln)
	return nil
}

// relisten listens on the address again, retrying briefly while the old
// socket is released.
func (s *Sim) relisten() (net.Listener, error) {
	var err error
	for range 100 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			return ln, nil
		}
		if !s.wait(context.Background(), 20*time.Millisecond) {
			return nil, errors.New("closed while restarting")
		}
	}
	return nil, fmt.Errorf("listen again on %s: %w", s.addr, err)
}
