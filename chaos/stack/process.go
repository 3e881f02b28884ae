// Package stack runs a whole Pitboss installation for the fault-injection
// suite (package chaos) and the model-based test (package modeltest): the
// pitboss binary built from ./cmd/pitboss and run as child processes, a
// private PostgreSQL cluster and a private Kafka broker started from the
// project's own binaries (so a fault never touches the shared ones), a
// provider that signs its wallet calls and retries them until it gets a
// definitive answer, a callback receiver whose behaviour a test changes,
// and the checks that prove nothing was lost or applied twice.
//
// Every child process is started with Pdeathsig, so a test binary that
// dies (a -timeout, a panic) takes its processes with it.
package stack

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is one child process with its output in a log file.
type Proc struct {
	Name    string
	Path    string
	Args    []string
	Env     []string
	Dir     string
	LogPath string
	// Cred runs the process as another OS user (PostgreSQL refuses root).
	Cred *syscall.Credential

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts the process; its stdout and stderr are appended to LogPath.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		select {
		case <-p.done:
		default:
			return fmt.Errorf("%s is already running (pid %d)", p.Name, p.cmd.Process.Pid)
		}
	}
	f, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("log of %s: %w", p.Name, err)
	}
	fmt.Fprintf(f, "===== %s start %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), p.Path, strings.Join(p.Args, " "))
	cmd := exec.Command(p.Path, p.Args...)
	cmd.Env = p.Env
	cmd.Dir = p.Dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: p.Cred}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	done := p.done
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// Pid is the process id, 0 when it never started.
func (p *Proc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Running reports whether the process is alive.
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Exited returns a channel closed when the process has exited, and its
// wait error afterwards.
func (p *Proc) Exited() (<-chan struct{}, func() error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	done := p.done
	return done, func() error { p.mu.Lock(); defer p.mu.Unlock(); return p.err }
}

// Run starts a process that does one job and waits for it to end; when ctx
// ends first the process is killed and ctx's error returned. A failure
// carries the last tailLines lines of its log.
func (p *Proc) Run(ctx context.Context, tailLines int) error {
	if err := p.Start(); err != nil {
		return err
	}
	done, werr := p.Exited()
	select {
	case <-done:
	case <-ctx.Done():
		_ = p.Kill()
		return ctx.Err()
	}
	if err := werr(); err != nil {
		return fmt.Errorf("%s: %w\n%s", p.Name, err, p.LogTail(tailLines))
	}
	return nil
}

// Signal sends sig to the process and waits up to wait for it to exit;
// after that it sends SIGKILL to its whole process group. SIGKILL itself
// goes to the group at once.
func (p *Proc) Signal(sig syscall.Signal, wait time.Duration) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	if sig == syscall.SIGKILL {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	} else {
		_ = syscall.Kill(cmd.Process.Pid, sig)
	}
	select {
	case <-done:
		return nil
	case <-time.After(wait):
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-done:
		return fmt.Errorf("%s did not stop within %v after %v; killed", p.Name, wait, sig)
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) survives SIGKILL", p.Name, cmd.Process.Pid)
	}
}

// Kill is kill -9 of the process group, waiting for the exit.
func (p *Proc) Kill() error { return p.Signal(syscall.SIGKILL, 10*time.Second) }

// Stop asks the process to end (SIGTERM) and kills it after wait.
func (p *Proc) Stop(wait time.Duration) error { return p.Signal(syscall.SIGTERM, wait) }

// LogTail returns the last n lines of the log.
func (p *Proc) LogTail(n int) string { return tail(p.LogPath, n) }

// LogContains reports whether the log has a line containing s.
func (p *Proc) LogContains(s string) bool {
	b, err := os.ReadFile(p.LogPath)
	return err == nil && bytes.Contains(b, []byte(s))
}

func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// waitFor polls cond every interval until it returns nil or ctx ends.
func waitFor(ctx context.Context, interval time.Duration, cond func() error) error {
	var last error
	for {
		if last = cond(); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), last)
		case <-time.After(interval):
		}
	}
}

// ModuleRoot is the folder holding go.mod, found upwards from the working
// directory (a test's working directory is its package folder).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
