package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/internal/freeport"
)

// Postgres is a private PostgreSQL cluster: initdb in a folder of its own,
// on a port of its own, run with the same server binaries the project's
// scripts use (scripts/pg-lib.sh), so that a test may stop and restart it
// without disturbing anybody else's database.
type Postgres struct {
	Dir  string // the cluster (PGDATA)
	Port int
	proc *Proc
	bin  string
}

// pgBinDir finds the newest /usr/lib/postgresql/N/bin with initdb and
// postgres, else the folder of postgres on PATH.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return a < b
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i], nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL server binaries (initdb, postgres) not found: run `make infra` once, which installs them")
}

// pgCredential is who runs the server: PostgreSQL refuses to run as root,
// so root runs it as the postgres OS user (scripts/pg-lib.sh does the same).
func pgCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the postgres OS user (make infra creates it): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// StartPostgres creates and starts a private cluster in a new folder under
// /tmp (the postgres user must be able to reach it; a test's TempDir is
// not). Close stops it and removes the folder.
func StartPostgres(ctx context.Context) (*Postgres, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := pgCredential()
	if err != nil {
		return nil, err
	}
	base, err := os.MkdirTemp("/tmp", "pitboss-chaos-pg-")
	if err != nil {
		return nil, err
	}
	port, err := freeport.Port()
	if err != nil {
		return nil, err
	}
	pg := &Postgres{Dir: filepath.Join(base, "data"), Port: port, bin: bin}
	if err := os.Chmod(base, 0o755); err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(base, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	initdb := &Proc{Name: "initdb", Path: filepath.Join(bin, "initdb"), LogPath: filepath.Join(base, "initdb.log"),
		Args: []string{"-D", pg.Dir, "-U", "pitboss", "-E", "UTF8", "--locale=C.UTF-8", "--auth=trust", "--no-sync"},
		Env:  []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"}, Dir: base, Cred: cred}
	if err := initdb.Run(ctx, 30); err != nil {
		return nil, err
	}
	// A private test cluster: loopback only, trust (the suite's own user
	// and password still go in the URL). fsync off: the faults kill
	// processes, never the machine, and the OS keeps written WAL across a
	// process crash. synchronous_commit stays on, as in production.
	conf := fmt.Sprintf(`
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
max_connections = 150
shared_buffers = 64MB
fsync = off
full_page_writes = off
synchronous_commit = on
timezone = 'UTC'
log_timezone = 'UTC'
log_line_prefix = '%%m [%%p] %%q%%u@%%d '
`, port, base)
	f, err := os.OpenFile(filepath.Join(pg.Dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(conf); err != nil {
		f.Close()
		return nil, err
	}
	f.Close()
	pg.proc = &Proc{Name: "postgres", Path: filepath.Join(bin, "postgres"), Args: []string{"-D", pg.Dir},
		LogPath: filepath.Join(base, "postgres.log"), Env: []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"},
		Dir: base, Cred: cred}
	if err := pg.Start(ctx); err != nil {
		pg.Close()
		return nil, err
	}
	return pg, nil
}

// URL is the DSN of database db on this cluster.
func (pg *Postgres) URL(db string) string {
	return fmt.Sprintf("postgres://pitboss:pitboss@127.0.0.1:%d/%s?sslmode=disable", pg.Port, db)
}

// CreateDatabase makes an empty database.
func (pg *Postgres) CreateDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, pg.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" OWNER pitboss"); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return pg.URL(name), nil
}

// Start starts the server and waits until it accepts connections.
func (pg *Postgres) Start(ctx context.Context) error {
	if err := pg.proc.Start(); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	err := waitFor(wctx, 100*time.Millisecond, func() error {
		if !pg.proc.Running() {
			return errors.New("postgres exited")
		}
		c, err := pgx.Connect(wctx, pg.URL("postgres"))
		if err != nil {
			return err
		}
		return c.Close(wctx)
	})
	if err != nil {
		return fmt.Errorf("postgres on port %d did not come up: %w\n%s", pg.Port, err, pg.proc.LogTail(20))
	}
	return nil
}

// Stop shuts the server down: "fast" (SIGINT: roll back open
// transactions, disconnect everyone, checkpoint) or "immediate" (SIGQUIT:
// no checkpoint; WAL recovery at the next start, as after a crash).
func (pg *Postgres) Stop(mode string) error {
	sig := syscall.SIGINT
	if mode == "immediate" {
		sig = syscall.SIGQUIT
	}
	return pg.proc.Signal(sig, 60*time.Second)
}

// Log is the tail of the server log.
func (pg *Postgres) Log(n int) string { return pg.proc.LogTail(n) }

// Close stops the server and removes the cluster.
func (pg *Postgres) Close() {
	if pg.proc != nil {
		_ = pg.proc.Signal(syscall.SIGQUIT, 20*time.Second)
	}
	if os.Getenv("CHAOS_KEEP") == "" {
		_ = os.RemoveAll(filepath.Dir(pg.Dir))
	}
}
