package gitrepo

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// dir is one directory of a thread's tree as git sees it, kept between
// commits so that a commit re-encodes only the directories it changed.
type dir struct {
	files map[string]plumbing.Hash
	dirs  map[string]*dir
	hash  plumbing.Hash
	dirty bool
	// lazy is set on a directory whose entries are not read yet: only its
	// hash is known (a tree of the stored map), and fill reads them.
	lazy bool
}

// treeReader reads stored tree objects by hash (the stored git map).
type treeReader func(hash plumbing.Hash) ([]byte, error)

// lazyDir is a directory known by its stored tree's hash.
func lazyDir(h plumbing.Hash) *dir { return &dir{hash: h, lazy: true} }

// fill reads a lazy directory's entries from its stored tree object.
func (d *dir) fill(read treeReader) error {
	if !d.lazy {
		return nil
	}
	if read == nil {
		return fmt.Errorf("tree %s is not loaded", d.hash)
	}
	b, err := read(d.hash)
	if err != nil {
		return err
	}
	o := &plumbing.MemoryObject{}
	o.SetType(plumbing.TreeObject)
	if _, err := o.Write(b); err != nil {
		return err
	}
	var t object.Tree
	if err := t.Decode(o); err != nil {
		return fmt.Errorf("stored tree %s: %w", d.hash, err)
	}
	d.files, d.dirs = map[string]plumbing.Hash{}, map[string]*dir{}
	for _, e := range t.Entries {
		if e.Mode == filemode.Dir {
			d.dirs[e.Name] = lazyDir(e.Hash)
		} else {
			d.files[e.Name] = e.Hash
		}
	}
	d.lazy = false
	return nil
}

func newDir() *dir {
	return &dir{files: map[string]plumbing.Hash{}, dirs: map[string]*dir{}, dirty: true}
}

// set puts blob h at path (a valid satchel path: slash-separated, no
// empty or dot components).
func (d *dir) set(read treeReader, path string, h plumbing.Hash) error {
	if err := d.fill(read); err != nil {
		return err
	}
	d.dirty = true
	for {
		i := strings.IndexByte(path, '/')
		if i < 0 {
			d.files[path] = h
			return nil
		}
		name := path[:i]
		sub := d.dirs[name]
		if sub == nil {
			sub = newDir()
			d.dirs[name] = sub
		}
		if err := sub.fill(read); err != nil {
			return err
		}
		sub.dirty = true
		d, path = sub, path[i+1:]
	}
}

// remove deletes the file at path and the directories it leaves empty;
// it reports whether d is empty afterwards.
func (d *dir) remove(read treeReader, path string) (bool, error) {
	if err := d.fill(read); err != nil {
		return false, err
	}
	d.dirty = true
	i := strings.IndexByte(path, '/')
	if i < 0 {
		delete(d.files, path)
	} else if sub := d.dirs[path[:i]]; sub != nil {
		empty, err := sub.remove(read, path[i+1:])
		if err != nil {
			return false, err
		}
		if empty {
			delete(d.dirs, path[:i])
		}
	}
	return len(d.files) == 0 && len(d.dirs) == 0, nil
}

// encode stores the tree objects of the directories changed since the
// last encode and returns d's hash; added lists the objects stored, and
// trees the tree objects among them.
func (d *dir) encode(s storer.EncodedObjectStorer, added, trees *[]plumbing.Hash) (plumbing.Hash, error) {
	if !d.dirty || d.lazy {
		return d.hash, nil
	}
	t := object.Tree{Entries: make([]object.TreeEntry, 0, len(d.files)+len(d.dirs))}
	for name, h := range d.files {
		t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	for name, sub := range d.dirs {
		h, err := sub.encode(s, added, trees)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	sortEntries(t.Entries)
	o := s.NewEncodedObject()
	if err := t.Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := s.SetEncodedObject(o)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	*added = append(*added, h)
	*trees = append(*trees, h)
	d.hash, d.dirty = h, false
	return h, nil
}

// sortEntries orders a tree's entries as git does: by name, a
// directory's name compared as if it ended with '/'.
func sortEntries(es []object.TreeEntry) { sort.Sort(object.TreeEntrySorter(es)) }

// putBlob stores content as a blob and returns its hash.
func putBlob(s storer.EncodedObjectStorer, content string) (plumbing.Hash, error) {
	o := s.NewEncodedObject()
	o.SetType(plumbing.BlobObject)
	o.SetSize(int64(len(content)))
	w, err := o.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write([]byte(content)); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(o)
}

// putRaw stores an object of type t whose content is b.
func putRaw(s storer.EncodedObjectStorer, t plumbing.ObjectType, b []byte) (plumbing.Hash, error) {
	o := s.NewEncodedObject()
	o.SetType(t)
	o.SetSize(int64(len(b)))
	w, err := o.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(b); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(o)
}
