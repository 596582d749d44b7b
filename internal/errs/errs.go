// Package errs holds satchel's error kinds: one sentinel per kind of refusal
// (DESIGN §7) and the error value that carries the exact message a user sees.
//
// The root package re-exports every sentinel, so users match them with
// errors.Is(err, satchel.ErrNotFound) without importing this package.
package errs

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/satchel-dev/satchel/internal/bytesize"
)

// Kinds of refusal. Each is matched with errors.Is.
var (
	// ErrInvalidPath: a path broke one of the rules of DESIGN §2.1.
	ErrInvalidPath = errors.New("invalid path")
	// ErrInvalidPattern: a glob or regex pattern is malformed or unsupported.
	ErrInvalidPattern = errors.New("invalid pattern")
	// ErrInvalidRange: line bounds that cannot be read (start < 1, end < start, ...).
	ErrInvalidRange = errors.New("invalid range")
	// ErrInvalidArgument: any other argument out of its domain (names, limits, policies).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrNotFound: a file, document, thread, commit or checkpoint does not exist.
	// Errors of this kind also match fs.ErrNotExist.
	ErrNotFound = errors.New("not found")
	// ErrExists: the target of a create-only operation already exists.
	// Errors of this kind also match fs.ErrExist.
	ErrExists = errors.New("already exists")
	// ErrIsDirectory: a file operation named a directory.
	ErrIsDirectory = errors.New("is a directory")
	// ErrNotText: a line operation met content that is not valid UTF-8.
	ErrNotText = errors.New("not text")
	// ErrAnchorNotFound: str_replace's old text does not occur in the file.
	ErrAnchorNotFound = errors.New("anchor not found")
	// ErrAmbiguousAnchor: str_replace's old text occurs more than once.
	ErrAmbiguousAnchor = errors.New("ambiguous anchor")
	// ErrLimitExceeded: a mutation would exceed a bound (DESIGN §2.4) or a
	// request exceeded a size, time or output limit.
	ErrLimitExceeded = errors.New("limit exceeded")
	// ErrWriteRace: two arms of one fanout wrote the same path (DESIGN §2.5).
	ErrWriteRace = errors.New("write-write race")
	// ErrConflict: a precondition (the content hash the caller last saw) no
	// longer holds, or a concurrent writer won a compare-and-swap too often.
	ErrConflict = errors.New("conflict")
	// ErrReadOnly: a write to a store that does not accept writes (shared),
	// or to a database opened for reading only (backend.ErrReadOnly is this
	// error, so a backend's refusal matches it).
	ErrReadOnly = errors.New("read-only")
	// ErrAccessDenied: an agent used a store it was not granted.
	ErrAccessDenied = errors.New("access denied")
	// ErrValidation: a document or definition failed validation.
	ErrValidation = errors.New("validation failed")
	// ErrArchived: a write to an archived thread, which can be read, not
	// written, until it is unarchived.
	ErrArchived = errors.New("archived")
	// ErrQuotaExceeded: a change would grow a scope's usage past its quota
	// (backend.ErrQuotaExceeded is this error, which a backend's refusal
	// matches).
	ErrQuotaExceeded = errors.New("quota exceeded")
	// ErrKeyReused: an idempotency key came back with other arguments.
	ErrKeyReused = errors.New("idempotency key reused")
	// ErrStale: a change to a file whose content at the head is not what
	// the caller last saw of it (a read ledger's refusal).
	ErrStale = errors.New("stale")
	// ErrAccess: a change to a path the caller's file rules (an agent's
	// "files", a token's --files or --read-only) let it read only, or hide.
	ErrAccess = errors.New("file access")
)

// Error is a refusal: a kind (one of the sentinels above) and the exact
// message of DESIGN.md. errors.Is matches the kind; the message is what
// a person or a model reads.
type Error struct {
	Kind error
	Msg  string
	// Count is the number of occurrences for ErrAmbiguousAnchor.
	Count int
}

// New returns an *Error of kind with a formatted message.
func New(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the kind, so errors.Is(err, ErrNotFound) holds.
func (e *Error) Unwrap() error { return e.Kind }

// Is makes not-found and exists errors also match the io/fs sentinels.
func (e *Error) Is(target error) bool {
	switch target {
	case fs.ErrNotExist:
		return e.Kind == ErrNotFound
	case fs.ErrExist:
		return e.Kind == ErrExists
	case fs.ErrInvalid:
		return e.Kind == ErrInvalidPath
	}
	return false
}

// Sizes writes a figure and the limit it went over as quota messages
// write sizes ("64.00 MiB"); when the two would read the same, the
// figure is followed by its exact bytes ("1.00 GiB (1073741825 bytes)").
func Sizes(would, limit int64) (string, string) {
	w, l := bytesize.Format(would), bytesize.Format(limit)
	if w == l && would != limit {
		w = fmt.Sprintf("%s (%d bytes)", w, would)
	}
	return w, l
}

// LimitMessage words a refusal by a workspace bound (DESIGN §2.4): the
// change would take the workspace's files (counter "files") or bytes
// (counter "bytes") to would, over limit, e.g. `limit exceeded: the
// workspace would hold 1,000,001 files, over maxFiles 1,000,000`; atLeast
// says the figure is the least the change comes to.
func LimitMessage(counter string, would, limit int64, atLeast bool) string {
	least := ""
	if atLeast {
		least = "at least "
	}
	if counter == "files" {
		return fmt.Sprintf("limit exceeded: the workspace would hold %s%s files, over maxFiles %s", least, bytesize.Count(would), bytesize.Count(limit))
	}
	w, l := Sizes(would, limit)
	return fmt.Sprintf("limit exceeded: the workspace would hold %s%s, over maxBytes %s", least, w, l)
}

// FileLimitMessage words a refusal of one file over the per-file limit:
// `limit exceeded: NAME is 80.00 MiB, over the per-file limit of 64.00
// MiB` (verb "would be" for a change not applied yet).
func FileLimitMessage(name, verb string, size, limit int64) string {
	w, l := Sizes(size, limit)
	return fmt.Sprintf("limit exceeded: %s %s %s, over the per-file limit of %s", name, verb, w, l)
}

// QuotaMessage words a refusal by a scope's quota as users see it: the
// change would take counter (one of backend.Counters) to would, over
// limit. Sizes are in binary units with two decimals, counts with commas
// between thousands, e.g. `quota exceeded: scope acme would hold 1.00 GiB
// of files, over its quota of 1.00 GiB` or `quota exceeded: scope acme
// would hold 100,001 files, over its quota of 100,000`.
func QuotaMessage(scope, counter string, would, limit int64) string {
	switch counter {
	case "bytes":
		return fmt.Sprintf("quota exceeded: scope %s would hold %s of files, over its quota of %s", scope, bytesize.Format(would), bytesize.Format(limit))
	case "history bytes":
		return fmt.Sprintf("quota exceeded: scope %s would hold %s of history, over its quota of %s", scope, bytesize.Format(would), bytesize.Format(limit))
	}
	return fmt.Sprintf("quota exceeded: scope %s would hold %s %s, over its quota of %s", scope, bytesize.Count(would), counter, bytesize.Count(limit))
}

// Violation is one reason a document or definition was refused.
type Violation struct {
	// File is the definition file, when the violation is in one.
	File string `json:"file,omitempty"`
	// Path is the field path, such as "metadata.source" or "tags[2]".
	Path string `json:"path"`
	// Msg says what is wrong.
	Msg string `json:"message"`
}

func (v Violation) String() string {
	var b strings.Builder
	if v.File != "" {
		b.WriteString(v.File)
		b.WriteString(": ")
	}
	if v.Path != "" {
		b.WriteString(v.Path)
		b.WriteString(": ")
	}
	b.WriteString(v.Msg)
	return b.String()
}

// ValidationError lists every violation found, all at once.
type ValidationError struct {
	// What names what was validated ("document", "definitions").
	What       string
	Violations []Violation
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	what := e.What
	if what == "" {
		what = "validation"
	}
	fmt.Fprintf(&b, "%s failed validation:", what)
	for _, v := range e.Violations {
		b.WriteString("\n  ")
		b.WriteString(v.String())
	}
	return b.String()
}

// Unwrap returns ErrValidation.
func (e *ValidationError) Unwrap() error { return ErrValidation }
