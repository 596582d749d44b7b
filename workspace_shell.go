package satchel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/shell"
	"github.com/satchel-dev/satchel/internal/vpath"
)

// ShellOptions configure Workspace.Shell; zero values take the defaults
// (docs/shell.md).
type ShellOptions struct {
	// Stdin is the script's standard input (empty when nil).
	Stdin io.Reader
	// Timeout bounds the run (30 s).
	Timeout time.Duration
	// MaxOutput bounds the standard output and error, together (1 MiB);
	// a run that writes more is stopped.
	MaxOutput int64
	// MaxMemory bounds what the run's pending writes hold and what one
	// command buffers (256 MiB).
	MaxMemory int64
	// MaxCommands bounds the commands run (1,000,000).
	MaxCommands int64
	// Atomic runs the script on a fork of the head and publishes its
	// changes with one compare-and-swap: if the thread moved during the
	// run, nothing is published.
	Atomic bool
}

// ShellResult is what a run of Workspace.Shell did.
type ShellResult struct {
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	ExitStatus int    `json:"exit_status"`
	// Commit is the commit the run made (nil when it changed nothing).
	Commit *Commit `json:"commit,omitempty"`
}

// ShellCommands lists the commands a script can run besides the shell's
// builtins (echo, printf, test, cd, read, ...).
func ShellCommands() []string { return shell.Commands() }

// Shell runs a POSIX shell or bash script over the workspace's files
// (docs/shell.md). The script reads the head it started from and every
// file it writes; none of its writes reaches the workspace until it ends.
// A run that changed files makes one commit, summarized "sh: " and the
// script's first line; a run that changed nothing makes none. A script
// that fails is not an error: its exit status says so, and what it wrote
// is committed as bash would have left it. A run stopped by a limit
// (ErrLimitExceeded: time, output, memory, commands) or a script that does not
// parse (ErrInvalidArgument) commits nothing.
func (w *Workspace) Shell(ctx context.Context, script string, opts ...ShellOptions) (*ShellResult, error) {
	var o ShellOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if !utf8.ValidString(script) {
		return nil, errs.New(errs.ErrInvalidArgument, "sh: the script is not valid UTF-8")
	}
	if _, err := shell.Parse(script); err != nil {
		return nil, errs.New(errs.ErrInvalidArgument, "%s", err.Error())
	}
	if o.Atomic {
		return w.shellAtomic(ctx, script, o)
	}
	res, changes, err := w.shellRun(ctx, script, o)
	if err != nil {
		return nil, err
	}
	if len(changes) > 0 {
		c, err := w.shellCommit(ctx, script, changes)
		if err != nil {
			return nil, err
		}
		res.Commit = c
	}
	return res, nil
}

// shellRun runs the script over the workspace's head.
func (w *Workspace) shellRun(ctx context.Context, script string, o ShellOptions) (*ShellResult, []shell.Change, error) {
	limits, err := w.Limits(ctx)
	if err != nil {
		return nil, nil, err
	}
	fsys, err := w.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	var base fs.FS = shellFS{fsys}
	res, err := shell.Run(ctx, script, base, shell.Options{
		Stdin: o.Stdin, Timeout: o.Timeout, MaxOutput: o.MaxOutput, MaxMemory: o.MaxMemory,
		MaxCommands: o.MaxCommands, MaxFileBytes: limits.MaxFileBytes, CheckPath: vpath.Validate,
		Now: time.Now().UTC(),
	})
	if err != nil {
		var le *shell.LimitError
		var pe *shell.ParseError
		switch {
		case errors.As(err, &le):
			return nil, nil, errs.New(errs.ErrLimitExceeded, "%s", le.Msg)
		case errors.As(err, &pe):
			return nil, nil, errs.New(errs.ErrInvalidArgument, "%s", pe.Msg)
		}
		return nil, nil, err
	}
	return &ShellResult{Stdout: res.Stdout, Stderr: res.Stderr, ExitStatus: res.Exit}, res.Changes, nil
}

// ShellSummary is the summary of the commit a run of script makes: "sh: "
// and its first line that is not blank, cut at 60 characters.
func ShellSummary(script string) string {
	line := ""
	for l := range strings.SplitSeq(script, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			line = l
			break
		}
	}
	if r := []rune(line); len(r) > 60 {
		line = string(r[:60])
	}
	return "sh: " + line
}

// shellCommit writes the run's changes as one commit.
func (w *Workspace) shellCommit(ctx context.Context, script string, changes []shell.Change) (*Commit, error) {
	var c Commit
	err := w.mutate(ctx, "sh", nil, func(b *Batch) error {
		b.meta = w.meta("sh", ShellSummary(script))
		b.reports = append(b.reports, &c)
		for _, ch := range changes {
			if ch.Deleted {
				ok, err := b.Exists(ctx, ch.Path)
				if err != nil {
					return err
				}
				if ok {
					if err := b.Delete(ctx, ch.Path); err != nil {
						return err
					}
				}
				continue
			}
			if err := b.Write(ctx, ch.Path, ch.Content); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c.Unchanged || c.Seq == 0 {
		return nil, nil
	}
	return &c, nil
}

// shellAtomic runs the script on a fork of the head and publishes the
// fork's commit onto the thread by compare-and-swap, as Lua's atomic runs
// do (docs/decisions/0018-lua-atomic-runs.md).
func (w *Workspace) shellAtomic(ctx context.Context, script string, o ShellOptions) (*ShellResult, error) {
	base, err := w.Head(ctx)
	if err != nil {
		return nil, err
	}
	var sfx [4]byte
	_, _ = rand.Read(sfx[:])
	name := w.thread
	if len(name) > 128-len("-sh-12345678") {
		name = name[:128-len("-sh-12345678")]
	}
	name += "-sh-" + hex.EncodeToString(sfx[:])
	var fork *Workspace
	if base.Seq == 0 {
		fork = w.sibling(name)
	} else if fork, err = w.Fork(ctx, strconv.FormatInt(base.Seq, 10), name); err != nil {
		return nil, err
	}
	drop := func() { _ = w.s.DeleteThread(context.WithoutCancel(ctx), w.scope, name) }
	res, changes, err := fork.shellRun(ctx, script, o)
	if err != nil {
		drop()
		return nil, err
	}
	if len(changes) == 0 {
		drop()
		return res, nil
	}
	if _, err := fork.shellCommit(ctx, script, changes); err != nil {
		drop()
		return nil, err
	}
	pub, err := fork.PublishTo(ctx, w, base.Seq)
	if errors.Is(err, ErrConflict) {
		return nil, &Error{Kind: ErrConflict, Msg: fmt.Sprintf(
			"thread %s changed during the run; nothing was published (the run's work is kept on thread %s)", w.thread, name)}
	}
	drop()
	if err != nil {
		return nil, err
	}
	res.Commit = &pub
	return res, nil
}

// shellFS is the files a run starts from, with the bulk read grep -r uses
// (shell.ContentScanner): the files under a directory in path order, with
// their packs read ahead as Workspace.Grep reads them. It reads the view
// directly: a rule that hides paths from FS must hide them here too.
type shellFS struct{ *FS }

func (f shellFS) ScanContent(dir string, fn func(path, content string) (bool, error)) error {
	from := ""
	if dir != "." {
		from = dir + "/"
	}
	return f.view.ScanFiles(f.ctx, from, upper(from), nil, func(ent *engine.Entry) (bool, error) {
		content, err := f.view.Content(f.ctx, ent)
		if err != nil {
			return false, err
		}
		return fn(ent.Path, content)
	})
}
