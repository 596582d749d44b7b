package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

func newExportCmd(a *app) *cobra.Command {
	var out, dir string
	var force bool
	cmd := &cobra.Command{
		Use:     "export -o FILE.satchel",
		GroupID: groupAdmin,
		Short:   "Write the database (or a scope, or a thread) to a portable file",
		Long: `Write every scope of the database, or only --scope S, or only its
thread --thread T, to FILE in satchel's export format
(docs/export-format.md): every retained commit of every thread with its
time and metadata, files with their exact bytes and modified times,
checkpoints, forks, retention and bounds, every document with its
history (whether or not a project defines its store), the definition
files of the project DIR (--dir, default . when it has stores/), the
tokens (their hashes: no secret is ever stored) and the reviews, open
and decided. satchel import loads it into any database:
this is how a store moves from SQLite to PostgreSQL.

FILE is written 0600 (it holds the tokens' hashes), complete or not at
all; an existing FILE is refused unless --force. "-o -" writes to
standard output. A progress bar shows on a terminal.

Prints what it wrote; with --json, {"threads": N, "commits": N, "blobs":
N, "documents": N, "tokens": N, "reviews": N, "project_files": N}.`,
		Example: `  satchel export -o all.satchel
  satchel export --scope acme -o acme.satchel
  satchel --db satchel.db export -o move.satchel && satchel --db postgres://host/db import move.satchel`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if out == "" {
				return usagef("export needs -o FILE (or -o - for standard output)")
			}
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			o := satchel.ExportOptions{}
			pf := a.root.PersistentFlags()
			if pf.Changed("scope") || pf.Changed("thread") {
				o.Scope = a.scope
			}
			if pf.Changed("thread") {
				o.Thread = a.thread
			}
			if d := projectDir(cmd, dir); d != "" {
				o.Project = os.DirFS(d)
			}
			var stop func()
			o.Progress, stop = a.exportProgress("export")
			defer stop()
			var st satchel.ExportStats
			if out == "-" {
				_, err = s.Export(ctx, a.stdout, o)
				return err
			}
			err = writeFileAtomic(out, force, func(w io.Writer) error {
				var err error
				st, err = s.Export(ctx, w, o)
				return err
			})
			stop() // before the result is printed
			if err != nil {
				return err
			}
			return a.emit(st, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "exported %s, %d commits, %d blobs, %d documents, %d tokens, %d reviews, %d project files to %s\n",
					threadsAndSpills(st.Threads, st.SpillAreas), st.Commits, st.Blobs, st.Documents, st.Tokens, st.Reviews, st.ProjectFiles, out)
				return err
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` (- for standard output)")
	cmd.Flags().StringVar(&dir, "dir", "", "project `DIR` whose definition files are exported (default: . when it has them; every document is exported either way)")
	cmd.Flags().BoolVar(&force, "force", false, "replace FILE when it exists")
	return cmd
}

// writeFileAtomic writes path through a temporary file in its directory,
// mode 0600, renamed into place only when write succeeds: a failed write
// leaves nothing. An existing path is refused unless force.
func writeFileAtomic(path string, force bool, write func(w io.Writer) error) error {
	return writeFileMode(path, 0o600, force, write)
}

// writeFileMode is writeFileAtomic with the file's mode given.
func writeFileMode(path string, mode os.FileMode, force bool, write func(w io.Writer) error) error {
	if _, err := os.Lstat(path); err == nil && !force {
		return &satchel.Error{Kind: satchel.ErrExists, Msg: fmt.Sprintf("%s exists: remove it, or give --force to replace it", path)}
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}

// importResult is what `satchel import --json` prints.
type importResult struct {
	satchel.ExportStats
	// Wrote lists the project files written into --dir; Kept those left
	// as they were because they differ (without --replace).
	Wrote []string `json:"wrote,omitempty"`
	Kept  []string `json:"kept,omitempty"`
	// TokenList names every token imported.
	TokenList []importedToken `json:"token_list"`
}

// importedToken is a token an import brought in, as it is printed.
type importedToken struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"` // "agent" or "operator"
	Scope  string `json:"scope,omitempty"`
	Agent  string `json:"agent,omitempty"`
	Thread string `json:"thread,omitempty"`
}

func (t importedToken) String() string {
	if t.Kind == "operator" {
		return fmt.Sprintf("token %s: operator", t.ID)
	}
	s := fmt.Sprintf("token %s: agent %s, scope %s", t.ID, t.Agent, t.Scope)
	if t.Thread != "" {
		s += ", thread " + t.Thread
	}
	return s
}

func newImportCmd(a *app) *cobra.Command {
	var dir, tokens string
	var replace bool
	cmd := &cobra.Command{
		Use:     "import FILE.satchel",
		GroupID: groupAdmin,
		Short:   "Load a file that satchel export wrote",
		Long: `Load FILE, written by satchel export from any database, into this one:
the same threads, commits (sequence numbers, times, metadata), files,
checkpoints, forks, settings, documents with their history, tokens and
reviews (a file of format version 1, older, has no reviews).

The whole file is checked first (its format version, every record's
checksum, every blob's hash, that it is complete) and nothing is written
unless all of it is sound. A file that would overwrite a thread, a
document, a token, a review or a setting is refused unless --replace. If the
database fails while the import writes, what it wrote is removed.

Tokens: --tokens safe (the default) imports the agent tokens of the
scopes the file holds (their settings, threads or documents) and refuses
the whole import, naming the record, if the file has an operator token
(it would sign in to the inspector and read every scope) or a token of a
scope the file does not hold. --tokens all imports every token the file
has; --tokens none leaves them all out. Every token imported is named:
its id, kind (agent or operator), scope and agent.

The project files the export holds (stores/*.json, agents/*/agent.json)
are written below --dir when given; one that exists with other content
is kept unless --replace. Nothing is ever written outside DIR: a
symbolic link inside DIR that leads out of it refuses the import before
anything is written, naming the link. A progress bar shows on a
terminal.

Prints what it loaded; with --json, the counts as export prints them,
"token_list" (id, kind, scope, agent, thread of each token imported),
and "wrote" and "kept", the project files.`,
		Example: `  satchel --db postgres://localhost/satchel import all.satchel --dir .
  satchel import acme.satchel --replace
  satchel import all.satchel --tokens all`,
		Args: exactArgs("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			policy, err := satchel.ParseTokenImport(tokens)
			if err != nil {
				return usagef("--tokens must be safe, all or none, was %q", tokens)
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			progress, stop := a.importProgress()
			o := satchel.ImportOptions{Replace: replace, Progress: progress, Tokens: policy}
			if dir != "" {
				o.CheckProject = func(paths []string) error { return checkProjectDir(dir, paths) }
			}
			res, err := s.Import(ctx, f, fi.Size(), o)
			stop()
			if err != nil {
				return err
			}
			out := importResult{ExportStats: res.ExportStats, TokenList: []importedToken{}}
			for _, t := range res.TokenList {
				it := importedToken{ID: t.ID, Kind: "agent", Scope: t.Scope, Agent: t.Agent, Thread: t.Thread}
				if t.Operator {
					it.Kind = "operator"
				}
				out.TokenList = append(out.TokenList, it)
			}
			if dir != "" {
				if out.Wrote, out.Kept, err = writeProjectFiles(dir, res.ProjectFiles, replace); err != nil {
					return err
				}
			}
			return a.emit(out, func(w io.Writer) error {
				fmt.Fprintf(w, "imported %s, %d commits, %d blobs, %d documents, %d tokens, %d reviews\n",
					threadsAndSpills(res.Threads, res.SpillAreas), res.Commits, res.Blobs, res.Documents, res.Tokens, res.Reviews)
				for _, t := range out.TokenList {
					fmt.Fprintln(w, t)
				}
				for _, p := range out.Wrote {
					fmt.Fprintf(w, "wrote %s\n", p)
				}
				for _, p := range out.Kept {
					fmt.Fprintf(w, "kept %s (it differs from the file's; --replace overwrites it)\n", p)
				}
				if dir == "" && len(res.ProjectFiles) > 0 {
					fmt.Fprintf(w, "the file holds %d project files: give --dir to write them\n", len(res.ProjectFiles))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "write the file's project definitions below `DIR`")
	cmd.Flags().BoolVar(&replace, "replace", false, "overwrite threads, documents, tokens, reviews, settings and project files that exist")
	cmd.Flags().StringVar(&tokens, "tokens", "safe", "which of the file's tokens to import: `safe` (agent tokens of the file's scopes; refuses operator tokens and other scopes' tokens), all or none")
	return cmd
}

// checkProjectDir refuses, before anything is written, project files
// whose path below dir goes through a symbolic link that leads out of
// dir (or through something that is not a directory).
func checkProjectDir(dir string, paths []string) error {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil // made by writeProjectFiles: nothing below it yet
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, p := range paths {
		parts := strings.Split(p, "/")
		for i := range parts {
			name := filepath.Join(parts[:i+1]...)
			fi, err := root.Lstat(name)
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if err != nil {
				return refusef(satchel.ErrInvalidPath, "import refused: cannot write %s into %s: %v", p, dir, err)
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				if _, err := root.Stat(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return refusef(satchel.ErrInvalidPath, "import refused: cannot write %s into %s: %s is a symbolic link that leads out of %s; nothing was imported", p, dir, filepath.Join(dir, name), dir)
				}
			}
		}
	}
	return nil
}

// writeProjectFiles writes project files below dir (their paths were
// checked by Import: stores/NAME.json and agents/NAME/agent.json),
// through an os.Root: nothing is written outside dir, whatever links
// lie in it.
func writeProjectFiles(dir string, files []satchel.ProjectFile, replace bool) (wrote, kept []string, err error) {
	if len(files) == 0 {
		return nil, nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	for _, pf := range files {
		name := filepath.FromSlash(pf.Path)
		p := filepath.Join(dir, name)
		if !filepath.IsLocal(name) { // checked paths are local; make sure
			return wrote, kept, refusef(satchel.ErrInvalidPath, "cannot write %q: not a path inside %s", pf.Path, dir)
		}
		old, err := root.ReadFile(name)
		switch {
		case err == nil && bytes.Equal(old, pf.Content):
			continue
		case err == nil && !replace:
			kept = append(kept, p)
			continue
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return wrote, kept, fmt.Errorf("cannot write %s: %w", p, err)
		}
		if err := writeInAtomic(root, name, pf.Content); err != nil {
			return wrote, kept, fmt.Errorf("cannot write %s: %w", p, err)
		}
		wrote = append(wrote, p)
	}
	return wrote, kept, nil
}

// writeInAtomic writes content to name within root (mode 0600) through a
// temporary file renamed into place, making its directories.
func writeInAtomic(root *os.Root, name string, content []byte) error {
	d := filepath.Dir(name)
	if d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(d, "."+filepath.Base(name)+"."+hex.EncodeToString(rnd[:])+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
	}
	return err
}

// exportProgress returns an ExportOptions.Progress that draws a progress
// bar on a terminal (started at the first call, when the total is known),
// and the function that clears it.
func (a *app) exportProgress(desc string) (func(done, total int64), func()) {
	var done atomic.Int64
	var stop func()
	return func(n, total int64) {
			if stop == nil {
				stop = a.progress(desc, int(total), &done)
			}
			done.Store(n)
		}, func() {
			if stop != nil {
				stop()
				stop = nil
			}
		}
}

// importProgress is exportProgress for ImportOptions.Progress: one bar a
// stage (checking the file, then importing it).
func (a *app) importProgress() (func(stage string, done, total int64), func()) {
	var done atomic.Int64
	stage := ""
	var stop func()
	return func(st string, n, total int64) {
			if st != stage {
				if stop != nil {
					stop()
				}
				stage = st
				done.Store(0)
				stop = a.progress(st, int(total), &done)
			}
			done.Store(n)
		}, func() {
			if stop != nil {
				stop()
				stop = nil
			}
		}
}

// threadsAndSpills is "3 threads", or "3 threads (and 1 spill area)": a
// thread's spill area is kept beside it, not a thread of its own.
func threadsAndSpills(threads, spills int) string {
	s := fmt.Sprintf("%d threads", threads)
	switch spills {
	case 0:
	case 1:
		s += " (and 1 spill area)"
	default:
		s += fmt.Sprintf(" (and %d spill areas)", spills)
	}
	return s
}
