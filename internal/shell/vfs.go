package shell

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// vfs is the run's view of the workspace: the files of the commit the run
// started from (base, read only) under an overlay of what the run wrote,
// kept in memory until the run ends and its changes are committed at once.
// Directories are implicit, as in the workspace, except those mkdir made
// during the run, which exist until the run ends (they are not committed).
type vfs struct {
	mu      sync.Mutex
	base    fs.FS
	files   map[string]*node
	dirs    map[string]bool
	pending int64 // bytes held by the overlay's files
	lim     *limits
	now     time.Time
}

// A node is a file the run wrote or deleted.
type node struct {
	data []byte
	del  bool
}

func newVFS(base fs.FS, lim *limits, now time.Time) *vfs {
	return &vfs{base: base, files: map[string]*node{}, dirs: map[string]bool{}, lim: lim, now: now}
}

// rel turns a shell path (absolute, or relative to dir) into a workspace
// path: "." is the root.
func rel(dir, p string) string {
	if !strings.HasPrefix(p, "/") {
		p = dir + "/" + p
	}
	p = path.Clean(p)
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return "."
	}
	return p
}

// abs is the shell's spelling of workspace path p.
func abs(p string) string {
	if p == "." {
		return "/"
	}
	return "/" + p
}

var errIsDir = errors.New("Is a directory")
var errNotDir = errors.New("Not a directory")

// readFile returns the content of file p. The slice must not be changed.
func (v *vfs) readFile(p string) ([]byte, error) {
	v.mu.Lock()
	n, ok := v.files[p]
	v.mu.Unlock()
	if ok && !n.del {
		return n.data, nil
	}
	if !ok && p != "." {
		b, err := fs.ReadFile(v.base, p)
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !isDirErr(err) {
			return nil, err
		}
	}
	if v.isDir(p) {
		return nil, errIsDir
	}
	return nil, fs.ErrNotExist
}

func isDirErr(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return strings.Contains(pe.Err.Error(), "directory")
	}
	return false
}

// stat describes p: a file, a directory, or fs.ErrNotExist.
func (v *vfs) stat(p string) (fs.FileInfo, error) {
	if p == "." {
		return dirInfo{name: "/"}, nil
	}
	v.mu.Lock()
	n, ok := v.files[p]
	v.mu.Unlock()
	if ok && !n.del {
		return fileInfo{name: path.Base(p), size: int64(len(n.data)), mod: v.now}, nil
	}
	if !ok {
		if fi, err := fs.Stat(v.base, p); err == nil && !fi.IsDir() {
			return fi, nil
		}
	}
	if v.isDir(p) {
		return dirInfo{name: path.Base(p)}, nil
	}
	return nil, fs.ErrNotExist
}

// isDir reports whether directory p exists: made by mkdir in this run,
// or holding a file that is not deleted.
func (v *vfs) isDir(p string) bool {
	if p == "." {
		return true
	}
	prefix := p + "/"
	v.mu.Lock()
	if v.dirs[p] {
		v.mu.Unlock()
		return true
	}
	deleted := false
	for q, n := range v.files {
		if strings.HasPrefix(q, prefix) {
			if !n.del {
				v.mu.Unlock()
				return true
			}
			deleted = true
		}
	}
	v.mu.Unlock()
	fi, err := fs.Stat(v.base, p)
	if err != nil || !fi.IsDir() {
		return false
	}
	if !deleted {
		return true
	}
	live := false
	_ = fs.WalkDir(v.base, p, func(q string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		v.mu.Lock()
		n, ok := v.files[q]
		v.mu.Unlock()
		if !ok || !n.del {
			live = true
			return fs.SkipAll
		}
		return nil
	})
	return live
}

// readDir lists directory p, sorted by name.
func (v *vfs) readDir(p string) ([]fs.DirEntry, error) {
	if !v.isDir(p) {
		if _, err := v.stat(p); err == nil {
			return nil, errNotDir
		}
		return nil, fs.ErrNotExist
	}
	seen := map[string]fs.DirEntry{}
	prefix := p + "/"
	if p == "." {
		prefix = ""
	}
	if ents, err := fs.ReadDir(v.base, p); err == nil {
		for _, e := range ents {
			seen[e.Name()] = e
		}
	}
	v.mu.Lock()
	for q, n := range v.files {
		rest, ok := strings.CutPrefix(q, prefix)
		if !ok {
			continue
		}
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			if !n.del {
				seen[rest[:i]] = fs.FileInfoToDirEntry(dirInfo{name: rest[:i]})
			}
			continue
		}
		if n.del {
			delete(seen, rest)
		} else {
			seen[rest] = fs.FileInfoToDirEntry(fileInfo{name: rest, size: int64(len(n.data)), mod: v.now})
		}
	}
	for d := range v.dirs {
		if rest, ok := strings.CutPrefix(d, prefix); ok && rest != "" {
			name, _, _ := strings.Cut(rest, "/")
			seen[name] = fs.FileInfoToDirEntry(dirInfo{name: name})
		}
	}
	v.mu.Unlock()
	out := make([]fs.DirEntry, 0, len(seen))
	for name, e := range seen {
		if e.IsDir() && !v.isDir(prefix+name) {
			continue // every file below it was deleted
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// create opens file p for writing, truncated or appended to.
func (v *vfs) create(p string, appendTo bool) (*wfile, error) {
	if p == "." || v.isDir(p) {
		return nil, errIsDir
	}
	if err := v.lim.checkPath(p); err != nil {
		return nil, err
	}
	if dir := path.Dir(p); dir != "." {
		if _, err := v.stat(dir); err == nil && !v.isDir(dir) {
			return nil, errNotDir
		}
	}
	var data []byte
	if appendTo {
		old, err := v.readFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		data = old[:len(old):len(old)]
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if n, ok := v.files[p]; ok && !n.del {
		v.pending -= int64(len(n.data))
	}
	if err := v.grow(p, int64(len(data))); err != nil {
		return nil, err
	}
	v.files[p] = &node{data: data}
	return &wfile{v: v, path: p}, nil
}

// grow accounts for n more bytes in file p, within the limits. v.mu is held.
func (v *vfs) grow(p string, n int64) error {
	if v.pending+n > v.lim.memory {
		return v.lim.fail(&LimitError{Msg: "sh: the run's pending writes are over the memory limit (" + sizeText(v.lim.memory) + "): the run was stopped"})
	}
	v.pending += n
	return nil
}

// writeFile replaces file p's content.
func (v *vfs) writeFile(p string, data []byte) error {
	f, err := v.create(p, false)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return err
}

// remove deletes file p.
func (v *vfs) remove(p string) error {
	if _, err := v.readFile(p); err != nil {
		return err
	}
	if err := v.lim.checkPath(p); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if n, ok := v.files[p]; ok && !n.del {
		v.pending -= int64(len(n.data))
	}
	v.files[p] = &node{del: true}
	return nil
}

// mkdir makes directory p and its parents exist for the rest of the run.
func (v *vfs) mkdir(p string) error {
	for q := p; q != "."; q = path.Dir(q) {
		if fi, err := v.stat(q); err == nil && !fi.IsDir() {
			return errNotDir
		}
	}
	if err := v.lim.checkPath(p); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for q := p; q != "."; q = path.Dir(q) {
		v.dirs[q] = true
	}
	return nil
}

// walk lists every file under directory p (or p itself if a file), sorted.
func (v *vfs) walk(p string, fn func(q string, isDir bool) error) error {
	fi, err := v.stat(p)
	if err != nil {
		return err
	}
	if err := fn(p, fi.IsDir()); err != nil || !fi.IsDir() {
		return err
	}
	ents, err := v.readDir(p)
	if err != nil {
		return err
	}
	for _, e := range ents {
		q := e.Name()
		if p != "." {
			q = p + "/" + q
		}
		if err := v.walk(q, fn); err != nil {
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			return err
		}
	}
	return nil
}

// A Change is one file the run changed: its new content, or deleted.
type Change struct {
	Path    string
	Content string
	Deleted bool
}

// changes returns what the run changed against the base, sorted by path.
func (v *vfs) changes() []Change {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []Change
	for p, n := range v.files {
		old, err := fs.ReadFile(v.base, p)
		had := err == nil
		switch {
		case n.del && had:
			out = append(out, Change{Path: p, Deleted: true})
		case !n.del && (!had || string(old) != string(n.data)):
			out = append(out, Change{Path: p, Content: string(n.data)})
		}
	}
	slices.SortFunc(out, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// wfile is a file open for writing: each write lands in the overlay.
type wfile struct {
	v    *vfs
	path string
}

func (f *wfile) Read([]byte) (int, error) { return 0, io.EOF }
func (f *wfile) Close() error             { return nil }
func (f *wfile) Write(b []byte) (int, error) {
	v := f.v
	v.mu.Lock()
	defer v.mu.Unlock()
	n, ok := v.files[f.path]
	if !ok || n.del {
		// deleted while open: the writes land in a new file, as the
		// workspace has no unlinked files.
		n = &node{}
		v.files[f.path] = n
	}
	if int64(len(n.data)+len(b)) > v.lim.fileBytes {
		return 0, v.lim.fail(&LimitError{Msg: "sh: file " + f.path + " is over the largest file size (" + sizeText(v.lim.fileBytes) + "): the run was stopped"})
	}
	if err := v.grow(f.path, int64(len(b))); err != nil {
		return 0, err
	}
	if cap(n.data)-len(n.data) < len(b) {
		// Grow by a quarter, not by doubling: a file held in memory
		// takes at most 1.25 times its size (and the old copy until the
		// collector frees it).
		grown := make([]byte, len(n.data), len(n.data)+len(b)+max(len(n.data)/4, 4<<10))
		copy(grown, n.data)
		n.data = grown
	}
	n.data = append(n.data, b...)
	return len(b), nil
}

type fileInfo struct {
	name string
	size int64
	mod  time.Time
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) Mode() fs.FileMode  { return 0o644 }
func (i fileInfo) ModTime() time.Time { return i.mod }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }

type dirInfo struct{ name string }

func (i dirInfo) Name() string       { return i.name }
func (i dirInfo) Size() int64        { return 0 }
func (i dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o755 }
func (i dirInfo) ModTime() time.Time { return time.Time{} }
func (i dirInfo) IsDir() bool        { return true }
func (i dirInfo) Sys() any           { return nil }

// A ContentScanner is a base file system that reads the files under a
// directory at once, in path order ("." is the root): grep -r uses it
// where the run changed nothing under the directory.
type ContentScanner interface {
	ScanContent(dir string, fn func(path, content string) (bool, error)) error
}

// scanContent calls fn with every file under directory p and its
// content, in path order, when the base can read them at once and the
// run changed nothing under p; ok is false when it cannot.
func (v *vfs) scanContent(p string, fn func(q string, data []byte) (bool, error)) (ok bool, err error) {
	sc, can := v.base.(ContentScanner)
	if !can {
		return false, nil
	}
	prefix := p + "/"
	v.mu.Lock()
	for q := range v.files {
		if p == "." || strings.HasPrefix(q, prefix) {
			v.mu.Unlock()
			return false, nil
		}
	}
	v.mu.Unlock()
	return true, sc.ScanContent(p, func(q, content string) (bool, error) {
		return fn(q, unsafe.Slice(unsafe.StringData(content), len(content)))
	})
}
