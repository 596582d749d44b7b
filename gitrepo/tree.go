package gitrepo

import (
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
}

func newDir() *dir {
	return &dir{files: map[string]plumbing.Hash{}, dirs: map[string]*dir{}, dirty: true}
}

// set puts blob h at path (a valid satchel path: slash-separated, no
// empty or dot components).
func (d *dir) set(path string, h plumbing.Hash) {
	d.dirty = true
	for {
		i := strings.IndexByte(path, '/')
		if i < 0 {
			d.files[path] = h
			return
		}
		name := path[:i]
		sub := d.dirs[name]
		if sub == nil {
			sub = newDir()
			d.dirs[name] = sub
		}
		sub.dirty = true
		d, path = sub, path[i+1:]
	}
}

// remove deletes the file at path and the directories it leaves empty;
// it reports whether d is empty afterwards.
func (d *dir) remove(path string) bool {
	d.dirty = true
	i := strings.IndexByte(path, '/')
	if i < 0 {
		delete(d.files, path)
	} else if sub := d.dirs[path[:i]]; sub != nil {
		if sub.remove(path[i+1:]) {
			delete(d.dirs, path[:i])
		}
	}
	return len(d.files) == 0 && len(d.dirs) == 0
}

// encode stores the tree objects of the directories changed since the
// last encode and returns d's hash; added lists the objects stored.
func (d *dir) encode(s storer.EncodedObjectStorer, added *[]plumbing.Hash) (plumbing.Hash, error) {
	if !d.dirty {
		return d.hash, nil
	}
	t := object.Tree{Entries: make([]object.TreeEntry, 0, len(d.files)+len(d.dirs))}
	for name, h := range d.files {
		t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	for name, sub := range d.dirs {
		h, err := sub.encode(s, added)
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
