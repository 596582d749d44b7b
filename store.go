package satchel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/internal/docengine"
	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/vpath"
)

// Store is an open satchel database: every scope's workspaces (and
// collections) on one backend. It is safe for concurrent use; open it once
// per process and share it.
type Store struct {
	b    backend.Backend
	eng  *engine.Engine
	dsn  string
	docs docengine.Engine // collections' documents

	keyRetention time.Duration // idempotency keys (store_idempotency.go); 0: the default

	changesOnce sync.Once
	changes     *changeHub                  // the change feed (store_changes.go), made on first use
	refusals    refusalCounts               // of file rules (access.go)
	log         atomic.Pointer[slog.Logger] // SetLogger's (nil: logs nothing)
}

// Option configures Open and New.
type Option func(*config)

type config struct {
	cacheBytes int64
	readOnly   bool
	keyTTL     time.Duration
}

// ReadOnly makes Open open an existing SQLite file for reading only: the
// open writes nothing (no journal mode, no migration; a read-only file or
// mount, or a full disk, can still be read), a missing file is an error
// matching fs.ErrNotExist, and every write is refused with ErrReadOnly.
// The memory and PostgreSQL backends ignore it.
func ReadOnly() Option { return func(c *config) { c.readOnly = true } }

// WithCacheBytes bounds the in-process cache of immutable objects (default
// 256 MiB). The cache never holds stale data: objects never change.
func WithCacheBytes(n int64) Option { return func(c *config) { c.cacheBytes = n } }

// Open opens a store. dsn is `memory:` (nothing on disk; gone with the
// process), a SQLite file path (optionally prefixed `file:`; created when
// missing), or a `postgres://` URL.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	b, err := openBackend(ctx, dsn, c)
	if err != nil {
		return nil, err
	}
	s := New(b, opts...)
	s.dsn = dsn
	return s, nil
}

func openBackend(ctx context.Context, dsn string, c config) (backend.Backend, error) {
	switch {
	case dsn == "memory:" || dsn == "memory":
		return memory.New(), nil
	case dsn == "":
		return nil, errs.New(errs.ErrInvalidArgument, "no database: give a path, memory: or a postgres:// URL")
	}
	if scheme, ok := urlScheme(dsn); ok && !knownScheme(scheme) {
		return nil, errs.New(errs.ErrInvalidArgument, "cannot open %q: satchel has no %s backend (a database is a SQLite file path, memory: or a postgres:// URL)", dsn, scheme)
	}
	if open := openers(dsn, c); open != nil {
		return open(ctx, dsn)
	}
	return nil, errs.New(errs.ErrInvalidArgument, "cannot open %q: unknown kind of database", dsn)
}

// New returns a store over a backend of your own (see package backend and
// its conformance suite, backend/backendtest).
func New(b backend.Backend, opts ...Option) *Store {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return &Store{b: b, eng: engine.New(b, engine.Options{CacheBytes: c.cacheBytes, Guard: guardArchived}), keyRetention: c.keyTTL}
}

// Close stops the change feed and closes the store's backend.
func (s *Store) Close() error {
	s.changesOnce.Do(func() {}) // no feed is made from now on
	s.changes.close()
	return s.b.Close()
}

// Actor says who makes the commits of a workspace, and through what, for
// the audit trail every commit carries (DESIGN §2.6).
type Actor struct {
	// Agent is the agent's name; empty means an operator.
	Agent string `json:"agent,omitempty"`
	// Credential names the credential used (a token's ID, never the secret).
	Credential string `json:"credential,omitempty"`
	// Via is the tool or command, e.g. "mcp:write_file" or "cli:fs write".
	Via string `json:"via,omitempty"`
	// Client and ClientVersion name the MCP client of the session, as its
	// initialize request gave them (agent-chosen text).
	Client        string `json:"client,omitempty"`
	ClientVersion string `json:"client_version,omitempty"`
}

// name rules for threads and checkpoints (DESIGN §2.6).
func checkName(kind, name string, allowDigits bool) error {
	ok := len(name) >= 1 && len(name) <= 128
	digits := true
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '.', c == '_', c == '-':
			digits = false
		default:
			ok = false
		}
	}
	if ok && digits && !allowDigits {
		return errs.New(errs.ErrInvalidArgument, "invalid %s name %q: must not be all digits (a number means a sequence)", kind, name)
	}
	if !ok {
		return errs.New(errs.ErrInvalidArgument, "invalid %s name %q: must be 1 to 128 letters, digits, '.', '_' or '-'", kind, name)
	}
	return nil
}

// ValidPath reports whether p is a valid workspace path (DESIGN §2.1),
// with the error every operation would give.
func ValidPath(p string) error { return vpath.Validate(p) }

// ValidThreadName reports whether name is a valid thread name.
func ValidThreadName(name string) error { return checkName("thread", name, false) }

// ValidCheckpointName reports whether name is a valid checkpoint name. Names
// that a commit reference already means are refused, since the reference
// would never reach the checkpoint: "head", and the numbers a sequence
// is read from (negative ones included).
func ValidCheckpointName(name string) error {
	if err := checkName("checkpoint", name, false); err != nil {
		return err
	}
	if name == "head" {
		return errs.New(errs.ErrInvalidArgument, "invalid checkpoint name %q: %s already means the thread's head commit", name, name)
	}
	if _, err := strconv.ParseInt(name, 10, 64); err == nil {
		return errs.New(errs.ErrInvalidArgument, "invalid checkpoint name %q: must not be a number (a number means a sequence)", name)
	}
	return nil
}

// ValidScope reports whether scope is a valid scope name: 1 to 128
// letters, digits, '.', '_', '-', '@' or ':'.
func ValidScope(scope string) error {
	ok := len(scope) >= 1 && len(scope) <= 128
	for i := 0; ok && i < len(scope); i++ {
		c := scope[i]
		ok = c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
			strings.IndexByte("._-@:", c) >= 0
	}
	if !ok {
		return errs.New(errs.ErrInvalidArgument, "invalid scope %q: must be 1 to 128 letters, digits, '.', '_', '-', '@' or ':'", scope)
	}
	return nil
}

// ThreadInfo describes a thread.
type ThreadInfo struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	// Head is the sequence number of the newest commit (0: none yet).
	Head     int64     `json:"head"`
	HeadTime time.Time `json:"head_time,omitzero"`
	// Archived is set when the thread is archived (ArchiveThread).
	Archived bool `json:"archived,omitempty"`
}

// Threads lists a scope's threads.
func (s *Store) Threads(ctx context.Context, scope string) ([]ThreadInfo, error) {
	if err := ValidScope(scope); err != nil {
		return nil, err
	}
	if l, ok := backend.As[backend.HeadsLister](s.b); ok {
		hs, err := l.ThreadHeads(ctx, scope)
		if err != nil {
			return nil, err
		}
		out := make([]ThreadInfo, 0, len(hs))
		for _, h := range hs {
			if isSpillThread(h.Name) {
				continue // a thread's spill area is part of the thread
			}
			info := ThreadInfo{Name: h.Name, Created: h.Created, Head: h.Head.Seq, Archived: archivedMeta(h.Head.Meta)}
			if h.Head.Seq != 0 {
				info.HeadTime = h.Head.Time
			}
			out = append(out, info)
		}
		return out, nil
	}
	ts, err := s.b.Threads(ctx, scope)
	if err != nil {
		return nil, err
	}
	out := make([]ThreadInfo, 0, len(ts))
	for _, t := range ts {
		if isSpillThread(t.Name) {
			continue // a thread's spill area is part of the thread
		}
		info := ThreadInfo{Name: t.Name, Created: t.Created}
		c, ok, err := s.eng.HeadCommit(ctx, t.ID)
		if err != nil && !errors.Is(err, backend.ErrNoThread) {
			return nil, err
		}
		if ok {
			info.Head, info.HeadTime, info.Archived = c.Seq, c.Time, archivedMeta(c.Meta)
		}
		out = append(out, info)
	}
	return out, nil
}

// DeleteThread deletes a thread: its log, checkpoints and settings. Its
// storage is reclaimed by the next GC (forks may share it).
func (s *Store) DeleteThread(ctx context.Context, scope, name string) error {
	if err := ValidScope(scope); err != nil {
		return err
	}
	if err := ValidThreadName(name); err != nil {
		return err
	}
	t, err := s.b.Thread(ctx, scope, name, false)
	if errors.Is(err, backend.ErrNoThread) {
		return errs.New(errs.ErrNotFound, "thread not found: %s", name)
	}
	if err != nil {
		return err
	}
	if err := s.refuseOpenReviewThread(ctx, name); err != nil {
		return err
	}
	if err := s.b.DeleteThread(ctx, t.ID); err != nil {
		return err
	}
	// Its spill area goes with it.
	sp, err := s.b.Thread(ctx, scope, name+spillThreadSuffix, false)
	if errors.Is(err, backend.ErrNoThread) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.b.DeleteThread(ctx, sp.ID)
}

// ScopeNames lists the names of the scopes that have threads, and nothing
// more; ScopeUsage lists every scope that has threads or documents, with
// its usage.
func (s *Store) ScopeNames(ctx context.Context) ([]string, error) { return s.b.Scopes(ctx) }

// Limits bound a workspace (DESIGN §2.4). Zero fields take the defaults.
type Limits struct {
	// MaxBytes bounds the total of every path and content counted as JSON
	// strings (default 1 GiB).
	MaxBytes int64 `json:"max_bytes,omitempty"`
	// MaxFiles bounds the number of files (default 1,000,000).
	MaxFiles int64 `json:"max_files,omitempty"`
	// MaxFileBytes bounds one file's content in bytes (default 64 MiB).
	MaxFileBytes int64 `json:"max_file_bytes,omitempty"`
}

// Default limits.
const (
	DefaultMaxBytes     = 1 << 30
	DefaultMaxFiles     = 1_000_000
	DefaultMaxFileBytes = 64 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	return l
}

const limitsKey = "limits"

// SetLimits sets the bounds of a scope (thread "") or of one thread, which
// override the scope's. Workspaces opened afterwards apply them.
func (s *Store) SetLimits(ctx context.Context, scope, thread string, l Limits) error {
	if err := ValidScope(scope); err != nil {
		return err
	}
	if thread != "" {
		if err := ValidThreadName(thread); err != nil {
			return err
		}
	}
	if l.MaxBytes < 0 || l.MaxFiles < 0 || l.MaxFileBytes < 0 {
		return errs.New(errs.ErrInvalidArgument, "limits must not be negative")
	}
	v, _ := json.Marshal(l)
	return s.b.PutSetting(ctx, scope, thread, limitsKey, v)
}

// OwnLimits returns the bounds set on the scope itself (thread "") or on
// the thread itself, without the scope's or the defaults: a zero field is
// one not set there.
func (s *Store) OwnLimits(ctx context.Context, scope, thread string) (Limits, error) {
	v, ok, err := s.b.Setting(ctx, scope, thread, limitsKey)
	if err != nil || !ok {
		return Limits{}, err
	}
	var l Limits
	if err := json.Unmarshal(v, &l); err != nil {
		return Limits{}, fmt.Errorf("satchel: stored limits of %s/%s: %w", scope, thread, err)
	}
	return l, nil
}

// LimitsOf returns the bounds in force for a thread: the thread's, else the
// scope's, else the defaults, field by field.
func (s *Store) LimitsOf(ctx context.Context, scope, thread string) (Limits, error) {
	var out Limits
	for _, th := range []string{thread, ""} {
		v, ok, err := s.b.Setting(ctx, scope, th, limitsKey)
		if err != nil {
			return Limits{}, err
		}
		if !ok {
			continue
		}
		var l Limits
		if err := json.Unmarshal(v, &l); err != nil {
			return Limits{}, fmt.Errorf("satchel: stored limits of %s/%s: %w", scope, th, err)
		}
		if out.MaxBytes == 0 {
			out.MaxBytes = l.MaxBytes
		}
		if out.MaxFiles == 0 {
			out.MaxFiles = l.MaxFiles
		}
		if out.MaxFileBytes == 0 {
			out.MaxFileBytes = l.MaxFileBytes
		}
	}
	return out.withDefaults(), nil
}
