package satchel_test

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/satchel-dev/satchel"
)

// TestFS: a workspace at the head and at an older commit passes
// testing/fstest's checks of an io/fs file system, each with its own files.
func TestFS(t *testing.T) {
	for _, dsn := range []string{"memory:", filepath.Join(t.TempDir(), "fs.db")} {
		t.Run(dsn, func(t *testing.T) {
			ctx := context.Background()
			st, err := satchel.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ws, err := st.Workspace(ctx, "acme", "main")
			if err != nil {
				t.Fatal(err)
			}
			old := map[string]string{
				"a.txt": "a\n", "a/b.md": "# b\n", "a/c/d.md": "d", "a-z/e.md": "e\n", "z.md": "",
				"notes/2026/01/plan.md": "1. read\n2. think\n",
			}
			for p, c := range old {
				if err := ws.Write(ctx, p, c); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := ws.Checkpoint(ctx, "v1"); err != nil {
				t.Fatal(err)
			}
			if err := ws.Write(ctx, "a/c/new.md", "new"); err != nil {
				t.Fatal(err)
			}
			if err := ws.Delete(ctx, "z.md"); err != nil {
				t.Fatal(err)
			}

			head, err := ws.FS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := fstest.TestFS(head, "a.txt", "a/b.md", "a/c/d.md", "a/c/new.md", "a-z/e.md", "notes/2026/01/plan.md"); err != nil {
				t.Error("head:", err)
			}
			snap, err := ws.At(ctx, "v1")
			if err != nil {
				t.Fatal(err)
			}
			v1 := snap.FS(ctx)
			if err := fstest.TestFS(v1, "a.txt", "a/b.md", "a/c/d.md", "a-z/e.md", "z.md", "notes/2026/01/plan.md"); err != nil {
				t.Error("v1:", err)
			}
			// The commit's files, no more and no fewer.
			var seen []string
			_ = fs.WalkDir(v1, ".", func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					seen = append(seen, p)
				}
				return err
			})
			if len(seen) != len(old) {
				t.Errorf("v1 walks %q, want the %d files of v1", seen, len(old))
			}
			for _, p := range seen {
				b, err := fs.ReadFile(v1, p)
				if err != nil || string(b) != old[p] {
					t.Errorf("v1 %s = %q, %v; want %q", p, b, err, old[p])
				}
			}
			if _, err := v1.Stat("a/c/new.md"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("v1 has a file written after it: %v", err)
			}
			for _, bad := range []string{"../a.txt", "/a.txt", "a//b.md", "a/"} {
				if _, err := head.Open(bad); !errors.Is(err, fs.ErrInvalid) {
					t.Errorf("Open(%q): %v, want fs.ErrInvalid", bad, err)
				}
			}
			if _, err := head.ReadFile("a"); err == nil {
				t.Error("ReadFile of a directory succeeded")
			}
			if _, err := head.ReadDir("a.txt"); err == nil {
				t.Error("ReadDir of a file succeeded")
			}
			if got, err := head.Glob("a/*/*.md"); err != nil || len(got) != 2 {
				t.Errorf("Glob(a/*/*.md) = %q, %v", got, err)
			}
		})
	}
}

// FuzzFSOpen: any name is either opened, absent, or refused as invalid,
// as fs.ValidPath decides; nothing panics.
func FuzzFSOpen(f *testing.F) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		f.Fatal(err)
	}
	ws, _ := st.Workspace(ctx, "acme", "main")
	for _, p := range []string{"a.md", "a/b.md", "a/c/d.md", "a-b/c.md"} {
		if err := ws.Write(ctx, p, p); err != nil {
			f.Fatal(err)
		}
	}
	fsys, err := ws.FS(ctx)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{".", "a", "a/", "a.md", "a/b.md", "../a.md", "/a", "a//b", "a/./b", "a0", "a/c", "\x00", "a/c/d.md/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		file, err := fsys.Open(name)
		switch {
		case !fs.ValidPath(name):
			if !errors.Is(err, fs.ErrInvalid) {
				t.Errorf("Open(%q): %v, want fs.ErrInvalid", name, err)
			}
		case err == nil:
			info, err := file.Stat()
			if err != nil || (info.Name() != filepath.Base(name) && name != ".") {
				t.Errorf("Open(%q).Stat() = %v, %v", name, info, err)
			}
			file.Close()
		case !errors.Is(err, fs.ErrNotExist):
			t.Errorf("Open(%q): %v", name, err)
		}
		if _, err := fsys.Glob(name); err != nil && !errors.Is(err, path.ErrBadPattern) {
			t.Errorf("Glob(%q): %v", name, err)
		}
	})
}
