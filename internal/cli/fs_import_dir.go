package cli

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bounded"
	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/ignore"
	"github.com/satchel-dev/satchel/internal/jsonsize"
	"github.com/satchel-dev/satchel/internal/vpath"
)

func newFSImportCmd(a *app) *cobra.Command {
	var (
		under    string
		batch    int
		excludes []string
		verbose  bool
	)
	cmd := &cobra.Command{
		Use:   "import DIR|FILE.tar[.gz]",
		Short: "Copy a host directory or a tar archive into the workspace",
		Long: `Copy every regular file below the host directory DIR, or of the tar
archive FILE (.tar, .tar.gz or .tgz; gzip is recognised by its bytes),
into the workspace at its path relative to DIR or in the archive (below
--under PREFIX when given), byte for byte, as ONE commit, or as one
commit for each --batch N files. Existing files at those paths are
replaced; other files are left alone.

Symbolic and hard links, devices, named pipes and other special files are
never followed: they are skipped, and so are paths that are not valid
workspace paths (a .. segment, a name ending in a dot or a space, a
backslash, a device name such as CON, ...), each reported on standard
error. DIR itself may be a link. --exclude PATTERN (repeatable) skips
what a .gitignore line would: '*.log', '/build/', 'node_modules/',
'docs/**/*.tmp', '!keep.log'.

The files are counted against the workspace's bounds (maxBytes,
maxFiles, the per-file limit) before any is held: a first pass reads DIR
or FILE and counts them, without keeping their content, and an import
that would take the workspace past a bound is refused then, naming the
bound and the figure, before anything is written, with --batch too. The
second pass reads them again and commits them. A progress bar shows on
a terminal.

Each commit's summary says what it imports: "import 112 files under
docs/". Prints one line, "imported 112 files under docs/"; --verbose
prints every workspace path imported first, one a line. With --json, an
array of the paths.`,
		Example: `  satchel fs import ./docs
  satchel fs import ~/project/src --under src --exclude '*.o' --exclude .git/
  satchel fs import release.tar.gz --batch 1000`,
		Args: exactArgs("DIR|FILE.tar[.gz]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := notNegative("batch", batch); err != nil {
				return err
			}
			prefix, err := vpath.Dir(under)
			if err != nil {
				return err
			}
			ex, err := ignore.Compile(excludes)
			if err != nil {
				return refuse("%v", err)
			}
			ws, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			im := &treeImport{a: a, ws: ws, prefix: prefix, batch: batch, exclude: ex}
			if err := im.run(ctx, args[0]); err != nil {
				return err
			}
			return a.emit(nonEmpty(im.imported), func(w io.Writer) error {
				if verbose {
					if err := lines(im.imported)(w); err != nil {
						return err
					}
				}
				_, err := fmt.Fprintf(w, "imported %s\n", filesUnder(len(im.imported), prefix))
				return err
			})
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print every path imported")
	cmd.Flags().StringVar(&under, "under", "", "import below the workspace directory `PREFIX`")
	cmd.Flags().IntVar(&batch, "batch", 0, "commit every `N` files (0: everything as one commit)")
	cmd.Flags().StringArrayVar(&excludes, "exclude", nil, "skip what the .gitignore-style `PATTERN` matches (repeatable)")
	return cmd
}

// treeImport copies a directory or an archive into a workspace.
type treeImport struct {
	a       *app
	ws      *satchel.Workspace
	prefix  string
	batch   int
	exclude *ignore.Matcher
	limit   int64
	fit     *satchel.Fit

	// counted is the JSON bytes of each file the first pass counted, in
	// order; the second pass holds no file larger than its count.
	counted []int64
	next    int
	quiet   bool // the second pass: skips were reported by the first

	pending  []pendingFile
	index    map[string]int // path → its place in pending
	imported []string
	done     atomic.Int64
}

// pendingFile is a file read and waiting for its commit.
type pendingFile struct{ path, content string }

// isArchive reports whether name is a tar archive by its name.
func isArchive(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".tar") || strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".tgz")
}

func (im *treeImport) run(ctx context.Context, src string) error {
	fit, err := im.ws.Fit(ctx)
	if err != nil {
		return err
	}
	im.fit, im.limit = fit, fit.Limits().MaxFileBytes
	root, err := filepath.EvalSymlinks(src) // DIR (or FILE) itself may be a link
	if err != nil {
		return err
	}
	info, err := os.Stat(root)
	if err != nil {
		return err
	}
	switch {
	case info.IsDir():
		err = im.dir(ctx, src, root)
	case info.Mode().IsRegular() && isArchive(src):
		err = im.archive(ctx, src, root, info.Size())
	default:
		return fmt.Errorf("cannot import %s: not a directory or a .tar, .tar.gz or .tgz archive", src)
	}
	if err != nil {
		return err
	}
	return im.flush(ctx)
}

// skip reports a file that is not imported.
func (im *treeImport) skip(rel, why string) {
	if !im.quiet {
		im.a.notice("skipped %s: %s", rel, why)
	}
}

// count counts the content of a file read from r (the first pass)
// against the workspace's bounds, without holding it.
func (im *treeImport) count(ctx context.Context, wp, rel string, r io.Reader) error {
	var c jsonsize.Counter
	n, err := io.Copy(&c, io.LimitReader(r, im.limit+1))
	if err != nil {
		return fmt.Errorf("cannot import %s: %w", rel, err)
	}
	if err := im.tooBig(rel, n); err != nil {
		return err
	}
	jb := int64(jsonsize.String(wp)) + c.Total()
	if err := im.fit.Add(ctx, wp, n, jb); err != nil {
		return err
	}
	im.counted = append(im.counted, jb)
	return nil
}

// held checks a file the second pass read against the first pass's
// count of it: a file that grew since is refused, so that no more is held
// than was counted.
func (im *treeImport) held(rel, wp, content string) error {
	i := im.next
	im.next++
	if i >= len(im.counted) || satchel.EntryBytes(wp, content) > im.counted[i] {
		return &satchel.Error{Kind: satchel.ErrConflict, Msg: fmt.Sprintf("cannot import %s: it changed while it was imported", rel)}
	}
	return nil
}

// accept returns the workspace path of rel, or "" (reported) when it is
// not imported.
func (im *treeImport) accept(rel string) string {
	p := rel
	if im.prefix != "" {
		p = im.prefix + "/" + rel
	}
	if err := vpath.Validate(p); err != nil {
		im.skip(rel, err.Error())
		return ""
	}
	return p
}

// add queues a file, committing the batch when it is full.
func (im *treeImport) add(ctx context.Context, p, content string) error {
	if im.index == nil {
		im.index = map[string]int{}
	}
	if i, ok := im.index[p]; ok {
		im.pending[i].content = content // an archive may hold a path twice: the last wins
	} else {
		im.index[p] = len(im.pending)
		im.pending = append(im.pending, pendingFile{p, content})
	}
	if im.batch > 0 && len(im.pending) >= im.batch {
		return im.flush(ctx)
	}
	return nil
}

// flush commits the queued files as one commit.
func (im *treeImport) flush(ctx context.Context) error {
	if len(im.pending) == 0 {
		return nil
	}
	err := im.ws.Batch(ctx, func(ctx context.Context, b *satchel.Batch) error {
		b.Summarize("import " + filesUnder(len(im.pending), im.prefix))
		for _, f := range im.pending {
			if err := b.Write(ctx, f.path, f.content); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, f := range im.pending {
		im.imported = append(im.imported, f.path)
	}
	im.pending, im.index = im.pending[:0], nil
	return nil
}

// filesUnder is "112 files under docs/", or "1 file" without a prefix.
func filesUnder(n int, prefix string) string {
	s := nouns(n, "file", "files")
	if prefix != "" {
		s += " under " + prefix + "/"
	}
	return s
}

// tooBig refuses a file over the per-file limit before reading it.
func (im *treeImport) tooBig(rel string, size int64) error {
	if size > im.limit {
		return &satchel.Error{Kind: satchel.ErrLimitExceeded,
			Msg: errs.FileLimitMessage(rel, "is", size, im.limit)}
	}
	return nil
}

func (im *treeImport) dir(ctx context.Context, src, root string) error {
	type hostFile struct {
		host, path, rel string
		size            int64
	}
	var files []hostFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			if im.exclude.Match(rel, true) {
				return filepath.SkipDir
			}
			return nil
		case im.exclude.Match(rel, false):
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			im.skip(rel, "a symbolic link")
			return nil
		case !d.Type().IsRegular():
			im.skip(rel, "not a regular file")
			return nil
		}
		if wp := im.accept(rel); wp != "" {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			files = append(files, hostFile{host: p, path: wp, rel: rel, size: fi.Size()})
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The sizes first: the least the files can come to, before a byte is
	// read; then their exact count, reading each without holding it.
	for _, f := range files {
		if err := im.fit.AddAtLeast(ctx, f.path, f.size); err != nil {
			return err
		}
	}
	stop := im.a.progress("check", len(files), &im.done)
	for _, f := range files {
		err := im.withHost(f.host, f.rel, func(r io.Reader, size int64) error {
			return im.count(ctx, f.path, f.rel, r)
		})
		if err != nil {
			stop()
			return err
		}
		im.done.Add(1)
	}
	stop()
	im.done.Store(0)
	stop = im.a.progress("import", len(files), &im.done)
	defer stop()
	for _, f := range files {
		content, err := im.readHost(f.host, f.rel)
		if err != nil {
			return err
		}
		if err := im.held(f.rel, f.path, content); err != nil {
			return err
		}
		if err := im.add(ctx, f.path, content); err != nil {
			return err
		}
		im.done.Add(1)
	}
	return nil
}

// readHost reads a regular file without following a link put in its
// place since the walk, and no more than the per-file limit allows.
func (im *treeImport) readHost(host, rel string) (string, error) {
	var content string
	err := im.withHost(host, rel, func(r io.Reader, size int64) error {
		// A file may grow while it is read: never hold more than the limit.
		var err error
		content, err = bounded.ReadString(r, im.limit, size, rel, "the per-file limit")
		return err
	})
	return content, err
}

// withHost opens a regular file without following a link put in its
// place since the walk, refuses it from its size if it is over the
// per-file limit, and calls fn with it.
func (im *treeImport) withHost(host, rel string, fn func(r io.Reader, size int64) error) error {
	li, err := os.Lstat(host)
	if err != nil {
		return fmt.Errorf("cannot import %s: %w", host, err)
	}
	f, err := os.Open(host)
	if err != nil {
		return fmt.Errorf("cannot import %s: %w", host, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !li.Mode().IsRegular() || !os.SameFile(li, fi) {
		return fmt.Errorf("cannot import %s: no longer a regular file", host)
	}
	if err := im.tooBig(rel, fi.Size()); err != nil {
		return err
	}
	return fn(f, fi.Size())
}

type countingReader struct {
	r    io.Reader
	done *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.done.Add(int64(n))
	return n, err
}

func (im *treeImport) archive(ctx context.Context, src, root string, size int64) error {
	// The first pass counts the files without holding them; the second
	// reads and commits them.
	err := im.eachInArchive(src, root, size, "check", func(rel, wp string, h *tar.Header, r io.Reader) error {
		if err := im.tooBig(rel, h.Size); err != nil {
			return err
		}
		if err := im.fit.AddAtLeast(ctx, wp, h.Size); err != nil {
			return err
		}
		return im.count(ctx, wp, rel, r)
	})
	if err != nil {
		return err
	}
	im.quiet = true
	return im.eachInArchive(src, root, size, "import", func(rel, wp string, h *tar.Header, r io.Reader) error {
		if err := im.tooBig(rel, h.Size); err != nil {
			return err
		}
		content, err := bounded.ReadString(r, im.limit, h.Size, rel, "the per-file limit")
		if err != nil {
			return fmt.Errorf("cannot import %s: %w", src, err)
		}
		if err := im.held(rel, wp, content); err != nil {
			return err
		}
		return im.add(ctx, wp, content)
	})
}

// eachInArchive calls fn for each regular file of the archive that is
// imported, with its workspace path and its content to read.
func (im *treeImport) eachInArchive(src, root string, size int64, stage string, fn func(rel, wp string, h *tar.Header, r io.Reader) error) error {
	f, err := os.Open(root)
	if err != nil {
		return err
	}
	defer f.Close()
	im.done.Store(0)
	stop := im.a.progress(stage, int(size), &im.done)
	defer stop()
	br := bufio.NewReader(countingReader{f, &im.done})
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("cannot import %s: %w", src, err)
		}
		defer gz.Close()
		r = gz
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cannot import %s: %w", src, err)
		}
		rel := strings.TrimPrefix(h.Name, "./")
		for strings.HasPrefix(rel, "./") {
			rel = strings.TrimPrefix(rel, "./")
		}
		if rel == "" || rel == "." {
			continue
		}
		if h.Typeflag == tar.TypeDir {
			continue
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if im.exclude.Excluded(strings.TrimSuffix(rel, "/")) {
			continue
		}
		switch h.Typeflag {
		case tar.TypeReg:
		case tar.TypeSymlink:
			im.skip(rel, "a symbolic link")
			continue
		case tar.TypeLink:
			im.skip(rel, "a hard link")
			continue
		case tar.TypeChar, tar.TypeBlock:
			im.skip(rel, "a device")
			continue
		case tar.TypeFifo:
			im.skip(rel, "a named pipe")
			continue
		default:
			im.skip(rel, "not a regular file")
			continue
		}
		wp := im.accept(rel)
		if wp == "" {
			continue
		}
		if err := fn(rel, wp, h, tr); err != nil {
			return err
		}
	}
}
