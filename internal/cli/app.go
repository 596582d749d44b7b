package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bounded"
)

// defaultDB is the database used when neither --db nor SATCHEL_DB names one.
const defaultDB = "./satchel.db"

// app is the state every command shares: the global flags, the standard
// streams, the store (opened on first use, closed when Main returns) and
// the functions that print results. A command receives it from its
// constructor, newXCmd(a).
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	// Global flags.
	db, scope, thread string
	json              bool

	// openStore opens the database; Main uses satchel.Open. closeStore
	// says whether Main closes what it opened (tests share one store).
	openStore  func(ctx context.Context, dsn string) (*satchel.Store, error)
	closeStore bool

	store *satchel.Store
	root  *cobra.Command
	cmd   *cobra.Command // the command running, for the audit trail
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *app {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	a := &app{
		stdin: stdin, stdout: stdout, stderr: stderr,
		getenv:     os.Getenv,
		closeStore: true,
	}
	a.openStore = a.openDB // dbopen.go
	return a
}

// dsn returns the database to open: --db when given, else SATCHEL_DB,
// else the one the project file of --dir (or of .) names, looked for
// there and then in each parent directory, else ./satchel.db.
func (a *app) dsn() (string, error) {
	if a.root != nil && a.root.PersistentFlags().Changed("db") {
		return a.db, nil
	}
	if v := a.getenv("SATCHEL_DB"); v != "" {
		return v, nil
	}
	dir := "."
	if a.cmd != nil {
		if f := a.cmd.Flags().Lookup("dir"); f != nil && f.Value.String() != "" {
			dir = f.Value.String()
		}
	}
	if db, ok, err := FindProjectDB(dir); ok || err != nil {
		return db, err
	}
	return defaultDB, nil
}

// open returns the store, opening it on first use.
func (a *app) open(ctx context.Context) (*satchel.Store, error) {
	if a.store != nil {
		return a.store, nil
	}
	dsn, err := a.dsn()
	if err != nil {
		return nil, err
	}
	s, err := a.openStore(ctx, dsn)
	if err != nil {
		return nil, err
	}
	a.store = s
	return s, nil
}

// close closes the store if Main opened it.
func (a *app) close() error {
	if a.store == nil || !a.closeStore {
		return nil
	}
	err := a.store.Close()
	a.store = nil
	return err
}

// actor is who the commits of this invocation are recorded as: an
// operator, through the command being run ("cli:fs write").
func (a *app) actor() satchel.Actor {
	via := "cli"
	if a.cmd != nil {
		via = "cli:" + strings.TrimPrefix(a.cmd.CommandPath(), a.cmd.Root().Name()+" ")
	}
	return satchel.Actor{Via: via}
}

// workspace returns the workspace of --scope and --thread.
func (a *app) workspace(ctx context.Context) (*satchel.Workspace, error) {
	return a.workspaceOf(ctx, a.thread)
}

// workspaceOf returns the workspace of thread in --scope.
func (a *app) workspaceOf(ctx context.Context, thread string) (*satchel.Workspace, error) {
	s, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	if a.readsOnly() {
		if err := a.checkThread(ctx, s, thread); err != nil {
			return nil, err
		}
	}
	return s.Workspace(ctx, a.scope, thread, satchel.WorkspaceActor(a.actor()))
}

// checkThread refuses a read of a thread that does not exist, so that a
// mistyped --thread is not shown as an empty workspace. A scope without
// any thread yet reads as empty on its default thread: nothing is
// mistyped there.
func (a *app) checkThread(ctx context.Context, s *satchel.Store, thread string) error {
	err := s.CheckThread(ctx, a.scope, thread)
	if err == nil || !errors.Is(err, satchel.ErrNotFound) {
		return err
	}
	if a.root != nil && a.root.PersistentFlags().Changed("thread") {
		return err
	}
	if ts, terr := s.Threads(ctx, a.scope); terr == nil && len(ts) == 0 {
		return nil
	}
	return err
}

// reader returns the workspace's head, or its commit ref when ref is not
// empty (--at).
func (a *app) reader(ctx context.Context, ref string) (satchel.Reader, error) {
	ws, err := a.workspace(ctx)
	if err != nil {
		return nil, err
	}
	if ref == "" {
		return ws, nil
	}
	return ws.At(ctx, ref)
}

// input returns args[i] when it was given, else all of standard input,
// refused once it passes limit bytes (read no further than limit+1).
func (a *app) input(args []string, i int, limit int64, limitName string) (string, error) {
	if len(args) > i {
		return args[i], nil
	}
	return bounded.ReadString(a.stdin, limit, 0, "standard input", limitName)
}

// emit prints a command's result: v as one JSON value with --json, else
// what plain writes.
func (a *app) emit(v any, plain func(w io.Writer) error) error {
	if a.json {
		return a.printJSON(v)
	}
	if plain == nil {
		return nil
	}
	return plain(a.stdout)
}

// emptyNote says on a terminal that a listing has nothing to show (msg),
// where a pipe gets no output at all.
func (a *app) emptyNote(msg string) {
	if !a.json && isTerminal(a.stdout) {
		fmt.Fprintln(a.stdout, msg)
	}
}

// printJSON writes v as one line of JSON, without HTML escaping.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// lines writes each item on its own line; nothing for no items.
func lines(items []string) func(w io.Writer) error {
	return func(w io.Writer) error {
		var b strings.Builder
		for _, s := range items {
			b.WriteString(s)
			b.WriteByte('\n')
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
}

// text writes s exactly.
func text(s string) func(w io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// notice writes a message for the person at the terminal on standard
// error, so that standard output stays the result alone.
func (a *app) notice(format string, args ...any) {
	fmt.Fprintf(a.stderr, format+"\n", args...)
}

// stamp formats a time for plain output: RFC 3339, in UTC.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// nonEmpty returns s, or an empty slice when s is nil, so JSON prints [].
func nonEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// refuse returns a refusal of kind satchel.ErrInvalidArgument with a
// message of the CLI's own, for arguments the API does not check.
func refuse(format string, args ...any) error {
	return &satchel.Error{Kind: satchel.ErrInvalidArgument, Msg: fmt.Sprintf(format, args...)}
}

// refusef is refuse with the error's kind given.
func refusef(kind error, format string, args ...any) error {
	return &satchel.Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// notNegative refuses a negative value of the flag name.
func notNegative(name string, n int) error {
	if n < 0 {
		return refuse("--%s must not be negative, was %d", name, n)
	}
	return nil
}
