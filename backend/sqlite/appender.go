package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// appender runs Append's transactions on a writer connection it keeps
// (decision 0101): BEGIN IMMEDIATE and COMMIT are statements on a
// *sql.Conn, and the writer's statements are prepared on that connection
// once. A *sql.Tx starts a goroutine to watch its context, and one more
// for each query inside it: two an Append, each of which may wake an idle
// processor, a context switch that costs this VM more than the statements.
// Every other write transaction runs on the writer pool as before;
// Backend.wmu keeps the two from waiting on SQLite's lock for each other.
type appender struct {
	db    *sql.DB
	conn  *sql.Conn  // nil before the first Append and after a failure
	stmts writeStmts // prepared on conn
	claim *sql.Stmt  // idempotency keys' claim, prepared on conn when first needed
}

// ready takes a connection from the pool and prepares the statements on
// it, unless it has them.
func (a *appender) ready(ctx context.Context) error {
	if a.conn != nil {
		return nil
	}
	c, err := a.db.Conn(ctx)
	if err != nil {
		return err
	}
	a.conn = c
	if err := a.prepare(ctx); err != nil {
		a.discard()
		return err
	}
	return nil
}

// begin opens a transaction on the connection. A connection found broken
// at BEGIN, before anything was written, is replaced once, as
// database/sql's BeginTx would.
func (a *appender) begin(ctx context.Context) error {
	for try := 0; ; try++ {
		if err := a.ready(ctx); err != nil {
			return err
		}
		_, err := a.conn.ExecContext(ctx, "BEGIN IMMEDIATE")
		if err == nil {
			return nil
		}
		a.discard()
		if try > 0 || !(errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone)) {
			return err
		}
	}
}

func (a *appender) prepare(ctx context.Context) error {
	for _, s := range writeStatements(&a.stmts) {
		st, err := a.conn.PrepareContext(ctx, s.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", s.sql, err)
		}
		*s.s = st
	}
	return nil
}

// claimStmt is the claim of an idempotency key, on the connection.
func (a *appender) claimStmt(ctx context.Context) (*sql.Stmt, error) {
	if a.claim == nil {
		st, err := a.conn.PrepareContext(ctx, claimKeySQL)
		if err != nil {
			return nil, err
		}
		a.claim = st
	}
	return a.claim, nil
}

// end ends the transaction: with COMMIT when ok, else with ROLLBACK.
// A connection whose transaction may still be open after that is
// discarded: closing it rolls back whatever it held.
func (a *appender) end(ctx context.Context, ok bool) error {
	q := "ROLLBACK"
	if ok {
		q = "COMMIT"
	}
	if _, err := a.conn.ExecContext(ctx, q); err != nil {
		a.discard()
		return err
	}
	return nil
}

// discard closes the connection (database/sql drops a connection that
// reports driver.ErrBadConn instead of pooling it) and its statements; the
// next Append takes a new one.
func (a *appender) discard() {
	if a.conn == nil {
		return
	}
	for _, s := range writeStatements(&a.stmts) {
		if *s.s != nil {
			(*s.s).Close()
			*s.s = nil
		}
	}
	if a.claim != nil {
		a.claim.Close()
		a.claim = nil
	}
	_ = a.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = a.conn.Close()
	a.conn = nil
}
