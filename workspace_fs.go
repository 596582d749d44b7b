package satchel

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/satchel-dev/satchel/internal/engine"
)

// FS is the files of one commit as an io/fs file system, so that Go
// programs can read a workspace with fs.WalkDir, fs.ReadFile,
// template.ParseFS or http.FS. It implements fs.ReadDirFS, fs.ReadFileFS,
// fs.StatFS and fs.GlobFS, and never changes: it shows the commit it was
// made from, whatever is written after.
//
// Directories are implicit, as in the workspace: a directory exists while
// a file is below it. Files have mode 0444, directories fs.ModeDir|0555;
// a directory's modification time is the zero time. Every call reads with
// the context FS was made with; an error of the store comes back wrapped
// in an *fs.PathError.
type FS struct {
	ctx  context.Context
	view engine.View
}

var (
	_ fs.ReadDirFS  = (*FS)(nil)
	_ fs.ReadFileFS = (*FS)(nil)
	_ fs.StatFS     = (*FS)(nil)
	_ fs.GlobFS     = (*FS)(nil)
)

// FS returns the files of the snapshot's commit as a file system whose
// calls read with ctx.
func (s *Snapshot) FS(ctx context.Context) *FS { return &FS{ctx: ctx, view: s.v()} }

// FS returns the files of the workspace's head commit, as it is now, as a
// file system whose calls read with ctx. Later writes do not show in it:
// call FS again to see them.
func (w *Workspace) FS(ctx context.Context) (*FS, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return nil, err
		}
		return rw.FS(ctx)
	}
	v, err := w.view(ctx)
	if err != nil {
		return nil, err
	}
	return &FS{ctx: ctx, view: v}, nil
}

// Open implements fs.FS.
func (f *FS) Open(name string) (fs.File, error) {
	ent, isDir, err := f.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if isDir {
		entries, err := f.readDir("open", name)
		if err != nil {
			return nil, err
		}
		return &dirFile{info: dirInfo(name), entries: entries}, nil
	}
	content, err := f.view.Content(f.ctx, &ent)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &file{Reader: strings.NewReader(content), info: fileInfo(&ent)}, nil
}

// ReadFile implements fs.ReadFileFS.
func (f *FS) ReadFile(name string) ([]byte, error) {
	ent, isDir, err := f.lookup("readfile", name)
	if err != nil {
		return nil, err
	}
	if isDir {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: errIsDir}
	}
	content, err := f.view.Content(f.ctx, &ent)
	if err != nil {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: err}
	}
	return []byte(content), nil
}

// Stat implements fs.StatFS.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	ent, isDir, err := f.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	if isDir {
		return dirInfo(name), nil
	}
	return fileInfo(&ent), nil
}

// ReadDir implements fs.ReadDirFS: the entries of a directory, sorted by
// name.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	_, isDir, err := f.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !isDir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errNotDir}
	}
	return f.readDir("readdir", name)
}

// Glob implements fs.GlobFS, with path.Match's patterns (not the
// workspace's Glob, whose ** crosses directories).
func (f *FS) Glob(pattern string) ([]string, error) {
	// fs.Glob over a file system without a Glob method walks ReadDir.
	return fs.Glob(readDirOnly{f}, pattern)
}

type readDirOnly struct{ f *FS }

func (r readDirOnly) Open(name string) (fs.File, error)          { return r.f.Open(name) }
func (r readDirOnly) ReadDir(name string) ([]fs.DirEntry, error) { return r.f.ReadDir(name) }

var (
	errIsDir  = errors.New("is a directory")
	errNotDir = errors.New("not a directory")
)

// lookup finds name: a file's entry, or that it is a directory.
func (f *FS) lookup(op, name string) (ent engine.Entry, isDir bool, err error) {
	if !fs.ValidPath(name) {
		return ent, false, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return ent, true, nil
	}
	ent, ok, err := f.view.Get(f.ctx, name)
	if err != nil {
		return ent, false, &fs.PathError{Op: op, Path: name, Err: err}
	}
	if ok {
		return ent, false, nil
	}
	prefix := name + "/"
	found := false
	err = f.view.ScanPaths(f.ctx, prefix, afterPrefix(prefix), func(string) (bool, error) {
		found = true
		return false, nil
	})
	if err != nil {
		return ent, false, &fs.PathError{Op: op, Path: name, Err: err}
	}
	if !found {
		return ent, false, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return ent, true, nil
}

// afterPrefix is the least string greater than every string starting with
// prefix, which ends in "/": the scan bound of a directory.
func afterPrefix(prefix string) string { return prefix[:len(prefix)-1] + "0" }

// readDir lists the directory name, which exists: its files, and its
// subdirectories, each found once by skipping past it.
func (f *FS) readDir(op, name string) ([]fs.DirEntry, error) {
	prefix := ""
	if name != "." {
		prefix = name + "/"
	}
	to := ""
	if prefix != "" {
		to = afterPrefix(prefix)
	}
	var out []fs.DirEntry
	from := prefix
	for {
		var sub string
		err := f.view.Scan(f.ctx, from, to, func(e *engine.Entry) (bool, error) {
			rest := e.Path[len(prefix):]
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				sub = rest[:i]
				return false, nil
			}
			out = append(out, fs.FileInfoToDirEntry(fileInfo(e)))
			return true, nil
		})
		if err != nil {
			return nil, &fs.PathError{Op: op, Path: name, Err: err}
		}
		if sub == "" {
			break
		}
		out = append(out, fs.FileInfoToDirEntry(dirInfo(prefix+sub)))
		from = afterPrefix(prefix + sub + "/")
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// info is an fs.FileInfo of a file or a directory.
type info struct {
	name    string
	size    int64
	dir     bool
	modTime time.Time
}

func fileInfo(e *engine.Entry) info {
	return info{name: path.Base(e.Path), size: e.Size, modTime: time.UnixMicro(e.ModTime).UTC()}
}

func dirInfo(name string) info { return info{name: path.Base(name), dir: true} }

func (i info) Name() string       { return i.name }
func (i info) Size() int64        { return i.size }
func (i info) ModTime() time.Time { return i.modTime }
func (i info) IsDir() bool        { return i.dir }
func (i info) Sys() any           { return nil }
func (i info) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

// file is an open file: its content, read, seeked or read at.
type file struct {
	*strings.Reader
	info info
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return nil }

// dirFile is an open directory.
type dirFile struct {
	info    info
	entries []fs.DirEntry
	read    int
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dirFile) Close() error               { return nil }
func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errIsDir}
}

// ReadDir implements fs.ReadDirFile.
func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.read:]
	if n <= 0 {
		d.read = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	if n > len(rest) {
		n = len(rest)
	}
	d.read += n
	return rest[:n], nil
}
