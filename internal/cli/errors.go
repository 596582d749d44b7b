package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailure  = 1 // a refusal, or an error that is not satchel's (I/O, backend)
	exitUsage    = 2 // unknown command or flag, wrong number of arguments
	exitCanceled = 130
)

// errorKinds maps satchel's kinds of refusal (DESIGN §7) to a stable name
// and to the CLI's exit code. The MCP server maps the same kinds to tool
// errors; keep the two in step. Every refusal exits 1 today: the table is
// where a kind would get a code of its own.
var errorKinds = []struct {
	kind error
	name string
	code int
}{
	{satchel.ErrInvalidPath, "invalid_path", exitFailure},
	{satchel.ErrInvalidPattern, "invalid_pattern", exitFailure},
	{satchel.ErrInvalidRange, "invalid_range", exitFailure},
	{satchel.ErrInvalidArgument, "invalid_argument", exitFailure},
	{satchel.ErrNotFound, "not_found", exitFailure},
	{satchel.ErrExists, "exists", exitFailure},
	{satchel.ErrIsDirectory, "is_directory", exitFailure},
	{satchel.ErrNotText, "not_text", exitFailure},
	{satchel.ErrAnchorNotFound, "anchor_not_found", exitFailure},
	{satchel.ErrAmbiguousAnchor, "ambiguous_anchor", exitFailure},
	{satchel.ErrLimitExceeded, "limit_exceeded", exitFailure},
	{satchel.ErrQuotaExceeded, "quota_exceeded", exitFailure},
	{satchel.ErrWriteRace, "write_race", exitFailure},
	{satchel.ErrConflict, "conflict", exitFailure},
	{satchel.ErrReadOnly, "read_only", exitFailure},
	{satchel.ErrAccessDenied, "access_denied", exitFailure},
	{satchel.ErrValidation, "validation", exitFailure},
	{satchel.ErrArchived, "archived", exitFailure},
	{satchel.ErrStale, "stale", exitFailure},
	{satchel.ErrAccess, "file_access", exitFailure},
	{context.Canceled, "canceled", exitCanceled},
}

// usageError is a mistake in the command line itself: cobra's errors
// (unknown command or flag, a bad flag value, the wrong number of
// arguments, a missing required flag) and the commands' own checks of
// their arguments' shape. It exits 2 with the command's usage.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitStatus ends a command that already reported its failure (satchel
// sh exits with its script's status) with that code and no message.
type exitStatus struct{ code int }

func (e exitStatus) Error() string { return "" }

// runError marks an error returned by a command's RunE, as opposed to one
// cobra raised before running it. See markRunErrors.
type runError struct{ err error }

func (e runError) Error() string { return e.err.Error() }
func (e runError) Unwrap() error { return e.err }

// classify says how the CLI reports err: the name of its kind ("usage",
// a name of errorKinds, or "error" for errors that are not satchel's)
// and the exit code. It is the one place that decides exit codes.
func classify(err error) (name string, code int) {
	if err == nil {
		return "", exitOK
	}
	var u usageError
	if errors.As(err, &u) {
		return "usage", exitUsage
	}
	var es exitStatus
	if errors.As(err, &es) {
		return "exit_status", es.code
	}
	var r runError
	if !errors.As(err, &r) {
		return "usage", exitUsage // raised by cobra before the command ran
	}
	for _, k := range errorKinds {
		if errors.Is(err, k.kind) {
			return k.name, k.code
		}
	}
	return "error", exitFailure
}

// report prints err on stderr and returns the exit code. A refusal or
// any other failure prints its message alone, followed by a newline, so
// that callers can compare it with DESIGN's wording; a usage error adds
// the usage of the command it concerns.
func report(stderr io.Writer, cmd *cobra.Command, err error) int {
	name, code := classify(err)
	if code == exitOK {
		return code
	}
	msg := err.Error()
	if name == "exit_status" {
		return code // the command printed what it had to say
	}
	switch {
	case name == "usage" && cmd != nil && cmd.HasSubCommands() && strings.HasPrefix(msg, "unknown command "):
		// A mistyped subcommand: the suggestion, not the whole list of
		// commands it would scroll away.
		msg += "\n\nRun '" + cmd.CommandPath() + " --help' for its commands."
	case name == "usage" && cmd != nil:
		msg += "\n\n" + cmd.UsageString()
	}
	if msg == "" || msg[len(msg)-1] != '\n' {
		msg += "\n"
	}
	_, _ = io.WriteString(stderr, msg)
	return code
}

// jsonError is how a refusal prints with --json: the message and the
// name of its kind (errorKinds, "usage" or "error").
type jsonError struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// reportJSON is report for --json: err as one line of JSON on stderr,
// without the usage text, so a program reads what was refused.
func reportJSON(stderr io.Writer, err error) int {
	name, code := classify(err)
	if code == exitOK || name == "exit_status" {
		return code
	}
	enc := json.NewEncoder(stderr)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(jsonError{Error: err.Error(), Code: name})
	return code
}

// markRunErrors wraps the RunE of cmd and of every command below it so
// that the errors they return are told apart from cobra's usage errors,
// and records the running command in a. A command returns a usageError
// itself for a mistake in its arguments that cobra cannot see.
func markRunErrors(a *app, cmd *cobra.Command) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			a.cmd = c
			err := run(c, args)
			var u usageError
			if err == nil || errors.As(err, &u) {
				return err
			}
			return runError{err}
		}
	}
	for _, sub := range cmd.Commands() {
		markRunErrors(a, sub)
	}
}
