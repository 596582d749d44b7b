package spill

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel/internal/errs"
)

// WorkspaceDir is the directory of a thread that the workspace backend
// writes spills in.
const WorkspaceDir = "spill"

// Workspace is the workspace backend (DESIGN §4): it stores each spill as a
// file of a thread, at "spill/<random>-<safe_name>", for deployments where
// the server has no private disk. An agent reads a spill back with the same
// read_file it reads every other file with, within its own scope and
// thread, so the hint names read_file with line bounds.
//
// The backend does not know which thread it writes: it is given the
// thread's write and read operations, already bound to the caller's scope
// and thread (the MCP server binds them per call, to Workspace.SaveSpill
// and Workspace.Read: the thread's spill area, out of its listings,
// searches, history and restores, pruned to its newest spills). The owner
// passed to Save is therefore not used; the thread is the owner.
type Workspace struct {
	// Tool is the tool the hint names; "" means DefaultReaderTool.
	Tool string
	// Window is how many bytes the hint's suggested first read may return
	// (read_file's max_chars); 0 means DefaultMaxInlineBytes.
	Window int
	// Keep, when more than 0, is how many spills the thread keeps (the
	// older are reclaimed): the hint then says so.
	Keep int

	write func(ctx context.Context, path, content string) error
	read  func(ctx context.Context, path string) (string, error)
	// rand is the source of the random part of names; nil means crypto/rand.
	rand io.Reader
}

// NewWorkspace returns a workspace backend over a thread's write (create
// or replace a file) and read (a file's whole content) operations.
func NewWorkspace(
	write func(ctx context.Context, path, content string) error,
	read func(ctx context.Context, path string) (string, error),
) *Workspace {
	return &Workspace{write: write, read: read}
}

// workspaceName is SafeName made a valid last segment of a workspace path
// (DESIGN §2.1): without trailing dots. The random prefix already keeps the
// segment from being "." or ".." or a reserved device name.
func workspaceName(name string) string {
	s := strings.TrimRight(SafeName(name), ".")
	if s == "" {
		return defaultSafeName
	}
	return s
}

// Save writes text to a new file "spill/<random>-<safe_name>" of the thread
// and returns its path. The error is the write operation's, wrapped with
// the path.
func (w *Workspace) Save(ctx context.Context, owner, name, text string) (Locator, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	rnd, err := randomPart(w.rand)
	if err != nil {
		return "", fmt.Errorf("spill: random name: %w", err)
	}
	path := WorkspaceDir + "/" + rnd + "-" + workspaceName(name)
	if err := w.write(ctx, path, text); err != nil {
		return "", fmt.Errorf("spill: write %s: %w", path, err)
	}
	return Locator(path), nil
}

// Fetch returns the content of the spill file at loc. A locator that is not
// "spill/<random>-<safe_name>" is refused with kind errs.ErrInvalidArgument;
// otherwise the error is the read operation's, unchanged.
func (w *Workspace) Fetch(ctx context.Context, loc Locator) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	file, ok := strings.CutPrefix(string(loc), WorkspaceDir+"/")
	if !ok || !isSpillFileName(file) || strings.HasSuffix(file, ".") {
		return "", errs.New(errs.ErrInvalidArgument, "%q is not a spill file (%s/<random>-<name>)", string(loc), WorkspaceDir)
	}
	return w.read(ctx, string(loc))
}

// Hint returns how a model reads the spill back: read_file (or w.Tool) with
// the path and the line bounds of a first read that fits w.Window bytes,
// and the number of lines, counted as DESIGN §2.2 counts them.
func (w *Workspace) Hint(loc Locator, text string) string {
	return w.kept(readHint(w.Tool, loc, text, w.Window))
}

// kept adds to a hint how long the spill stays, when Keep says.
func (w *Workspace) kept(hint string) string {
	if w.Keep <= 0 {
		return hint
	}
	return hint + " It stays while among this thread's newest " + strconv.Itoa(w.Keep) + " spills."
}

// HintFrom is Hint for a reader that saw text up to character char of
// line from (HintFromer).
func (w *Workspace) HintFrom(loc Locator, text string, from, char int) string {
	return w.kept(readHintFrom(w.Tool, loc, text, w.Window, from, char))
}
