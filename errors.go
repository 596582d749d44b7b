package satchel

import "github.com/satchel-dev/satchel/internal/errs"

// Every refusal satchel makes is an error of one of these kinds, matched
// with errors.Is. The message says what was refused and why, worded as
// DESIGN.md words it. Not-found errors also match fs.ErrNotExist.
var (
	// ErrInvalidPath: a path broke a rule of DESIGN §2.1, e.g.
	// `invalid path "../x": contains a . or .. segment`.
	ErrInvalidPath = errs.ErrInvalidPath
	// ErrInvalidPattern: a glob or a regex was refused, e.g. one using `?`.
	ErrInvalidPattern = errs.ErrInvalidPattern
	// ErrInvalidRange: line bounds that cannot be read (`start must be at least 1`).
	ErrInvalidRange = errs.ErrInvalidRange
	// ErrInvalidArgument: a name, limit, policy or other argument out of range.
	ErrInvalidArgument = errs.ErrInvalidArgument
	// ErrNotFound: a file (`file not found: p`), thread, commit, checkpoint
	// or document that does not exist.
	ErrNotFound = errs.ErrNotFound
	// ErrExists: the target exists (a move without overwrite, a taken
	// checkpoint or thread name, a file where a directory is needed).
	ErrExists = errs.ErrExists
	// ErrIsDirectory: a file operation named a directory (`p is a directory`).
	ErrIsDirectory = errs.ErrIsDirectory
	// ErrNotText: a line operation met content that is not UTF-8.
	ErrNotText = errs.ErrNotText
	// ErrAnchorNotFound: str_replace's old text is absent (`anchor not found in p`).
	ErrAnchorNotFound = errs.ErrAnchorNotFound
	// ErrAmbiguousAnchor: str_replace's old text occurs more than once.
	ErrAmbiguousAnchor = errs.ErrAmbiguousAnchor
	// ErrLimitExceeded: a mutation would exceed maxBytes, maxFiles or the
	// per-file limit (DESIGN §2.4), or a grep ran past its bounds.
	ErrLimitExceeded = errs.ErrLimitExceeded
	// ErrWriteRace: two arms of one fanout wrote the same path (DESIGN §2.5).
	ErrWriteRace = errs.ErrWriteRace
	// ErrConflict: a precondition failed (the file changed since the hash the
	// caller saw), or other writers kept winning the head.
	ErrConflict = errs.ErrConflict
	// ErrReadOnly: a write to a shared store by an agent.
	ErrReadOnly = errs.ErrReadOnly
	// ErrAccessDenied: an agent used a store it was not granted.
	ErrAccessDenied = errs.ErrAccessDenied
	// ErrValidation: a document or definition failed validation; the error
	// is a *ValidationError listing every violation.
	ErrValidation = errs.ErrValidation
	// ErrArchived: a write to an archived thread (ArchiveThread), e.g.
	// `thread t of scope s is archived: it can be read, not written;
	// satchel threads unarchive t --scope s makes it writable`.
	ErrArchived = errs.ErrArchived
	// ErrQuotaExceeded: a change would grow its scope's usage past a quota
	// (Store.SetQuota), e.g. `quota exceeded: scope acme would hold 1.00 GiB
	// of files, over its quota of 1.00 GiB`.
	ErrQuotaExceeded = errs.ErrQuotaExceeded
	// ErrIdempotencyKeyReused: an idempotency key was given again, within
	// its retention, with other arguments (`idempotency key K was already
	// used with different arguments`).
	ErrIdempotencyKeyReused = errs.ErrKeyReused
	// ErrStale: a workspace that tracks reads (TrackReads) changed a file
	// whose content at the head is not what it last saw of it, e.g.
	// `notes/plan.md changed since you last read it: commit 42 by agent
	// research (edit_file, 2026-12-06T10:04:05Z); read it again before
	// changing it`. The error is a *StaleError.
	ErrStale = errs.ErrStale
	// ErrAccess: a change the caller's file rules (WithFileRules,
	// ReadOnlyFiles) do not allow: `notes/a.md is read-only for agent
	// research`, `secrets/k is hidden from agent research: it cannot be
	// written`, or a restore or merge that would change such paths. A path
	// the rules hide is never refused with it when read: it answers as a
	// missing file.
	ErrAccess = errs.ErrAccess
)

// Error is the concrete type of satchel's refusals: a kind and a message.
type Error = errs.Error

// ValidationError lists every violation of a document or definition.
type ValidationError = errs.ValidationError

// Violation is one reason a document or definition was refused.
type Violation = errs.Violation
