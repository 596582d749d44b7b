package crashtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// Environment of the child processes.
const (
	roleEnv = "SATCHEL_CRASHTEST_ROLE" // which child to be
	dsnEnv  = "SATCHEL_CRASHTEST_DSN"  // the database: a SQLite path or a postgres:// URL with search_path
	argsEnv = "SATCHEL_CRASHTEST_ARGS" // the role's arguments
)

// roles are the children the tests start, by name.
var roles = map[string]func(ctx context.Context, st *satchel.Store, args string, out io.Writer) error{}

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(runChild(role))
	}
	os.Exit(m.Run())
}

// runChild runs one child role and returns its exit code. Its stdout is
// the protocol (one line per acknowledged operation), its stderr errors.
func runChild(role string) int {
	ctx := context.Background()
	fn := roles[role]
	if fn == nil {
		fmt.Fprintf(os.Stderr, "unknown role %q\n", role)
		return 2
	}
	st, err := openStore(ctx, os.Getenv(dsnEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	if err := fn(ctx, st, os.Getenv(argsEnv), syncWriter{os.Stdout}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// syncWriter writes each line with one write(2), so that a line is in
// the pipe whole or not at all when the process is killed.
type syncWriter struct{ f *os.File }

func (w syncWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

// openStore opens a SQLite file, or a PostgreSQL database (a postgres://
// URL, whose search_path names the test's schema).
func openStore(ctx context.Context, dsn string) (*satchel.Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		b, err := postgres.Open(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return satchel.New(b), nil
	}
	return satchel.Open(ctx, dsn)
}

// longTest skips t unless SATCHEL_LONG_TESTS=1.
func longTest(t *testing.T) {
	t.Helper()
	testenv.Long(t, "kill loop or load test")
}

// database is one backend the tests run on.
type database struct {
	name string
	dsn  string
}

// databases returns a fresh SQLite file and, when SATCHEL_TEST_POSTGRES
// is set, a PostgreSQL schema of its own, migrated and empty
// (postgrestest), until t ends.
func databases(t *testing.T) []database {
	t.Helper()
	dbs := []database{{"sqlite", t.TempDir() + "/crash.db"}}
	url := os.Getenv("SATCHEL_TEST_POSTGRES")
	if url == "" {
		t.Log("SATCHEL_TEST_POSTGRES not set: PostgreSQL variant skipped")
		return dbs
	}
	return append(dbs, database{"postgres", postgrestest.Schema(t, url, postgrestest.Name("satchel_crash"))})
}

// child is a started child process and the lines it printed.
type child struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *strings.Builder
	// app names the child's PostgreSQL sessions, server is its database
	// (without the name); both empty on SQLite.
	app, server string
}

// startChild starts the test binary as a child of role.
func startChild(t *testing.T, role, dsn, args string) *child {
	t.Helper()
	c := &child{lines: make(chan string, 1<<16), stderr: &strings.Builder{}}
	if strings.HasPrefix(dsn, "postgres://") {
		// Named, so that wait can tell when its server sessions are gone.
		c.app = fmt.Sprintf("satchel_crash_child_%d_%d", os.Getpid(), children.Add(1))
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		c.server, dsn = dsn, dsn+sep+"application_name="+c.app
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"="+role, dsnEnv+"="+dsn, argsEnv+"="+args)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd = cmd
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}

// wait waits for the child to end and returns every line it printed
// (those not yet received) and its exit error. On PostgreSQL it also waits
// until the child's server sessions have ended: a transaction a killed
// child sent may still commit on the server after the child died, and
// what the test reads next must see it.
func (c *child) wait() ([]string, error) {
	var rest []string
	for l := range c.lines {
		rest = append(rest, l)
	}
	err := c.cmd.Wait()
	if c.app != "" {
		if gerr := sessionsGone(c.server, c.app); gerr != nil {
			return rest, gerr
		}
	}
	return rest, err
}

var children atomic.Int64

// sessionsGone waits until no server session carries application name app.
func sessionsGone(dsn, app string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n); err != nil {
			return fmt.Errorf("the sessions of %s: %w", app, err)
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the sessions of %s: %d still open after a minute", app, n)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
