package spill

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/satchel-dev/satchel/internal/errs"
)

// fixedRand returns a random source that makes the next name's random part
// predictable, and that part.
func fixedRand(b byte) (io.Reader, string) {
	r := bytes.Repeat([]byte{b}, 9)
	part, err := randomPart(bytes.NewReader(r))
	if err != nil {
		panic(err)
	}
	return bytes.NewReader(r), part
}

// newFS returns a backend whose root, not yet created, is inside a fresh
// temporary directory.
func newFS(t *testing.T) *FS {
	t.Helper()
	return NewFS(filepath.Join(t.TempDir(), "root"))
}

func save(t *testing.T, b Backend, owner, name, text string) Locator {
	t.Helper()
	loc, err := b.Save(context.Background(), owner, name, text)
	if err != nil {
		t.Fatalf("Save(%q, %q): %v", owner, name, err)
	}
	return loc
}

// entries lists every path under dir, relative to it.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

func TestFSLayoutAndRoundTrip(t *testing.T) {
	f := newFS(t)
	big := strings.Repeat("héllo wörld ✓ 𝄞 <tag> \"quoted\"\n", 4<<20/38+1)
	var binary []byte
	for i := range 4096 {
		binary = append(binary, byte(i))
	}
	for _, text := range []string{"", "x", "no newline at end", big, string(binary), "\r\n\r\n\x00"} {
		loc := save(t, f, "session-1", "out.txt", text)
		sess := filepath.Join(f.Root(), SessionDir("session-1"))
		if filepath.Dir(string(loc)) != sess {
			t.Fatalf("locator %s is not in %s", loc, sess)
		}
		base := filepath.Base(string(loc))
		if !isSpillFileName(base) || !strings.HasSuffix(base, "-out.txt") || len(base) != 12+1+len("out.txt") {
			t.Fatalf("file name %q does not have the layout <12 chars>-out.txt", base)
		}
		got, err := f.Fetch(context.Background(), loc)
		if err != nil {
			t.Fatal(err)
		}
		if got != text {
			t.Fatalf("round trip of %d bytes returned %d bytes, not equal", len(text), len(got))
		}
	}
	if got := SessionDir("abc"); got != "session-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("SessionDir(abc) = %s", got)
	}
}

func TestFSNamesNeverCollide(t *testing.T) {
	f := newFS(t)
	var mu sync.Mutex
	seen := map[Locator]string{}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			text := strings.Repeat(string(rune('a'+i%26)), i+1)
			loc, err := f.Save(context.Background(), "same owner", "same name", text)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if _, dup := seen[loc]; dup {
				t.Errorf("locator %s returned twice", loc)
			}
			seen[loc] = text
		})
	}
	wg.Wait()
	for loc, text := range seen {
		if got, err := f.Fetch(context.Background(), loc); err != nil || got != text {
			t.Fatalf("Fetch(%s) = %d bytes, %v; want %d bytes", loc, len(got), err, len(text))
		}
	}
}

func TestFSHostileOwnersAndNames(t *testing.T) {
	owners := []string{"../../../etc", "", "/", "a/b", "..", "\x00", strings.Repeat("é", 150), "C:\\Windows"}
	names := []string{"../x", ".hidden", "a/b", strings.Repeat("é", 150), "nul\x00byte", "", "../../../../tmp/pwned", "/etc/passwd", "-", "."}
	dir := t.TempDir()
	f := NewFS(filepath.Join(dir, "root"))
	for _, owner := range owners {
		for _, name := range names {
			loc := save(t, f, owner, name, "content")
			wantDir := filepath.Join(f.Root(), SessionDir(owner))
			if filepath.Dir(string(loc)) != wantDir {
				t.Fatalf("owner %q name %q: %s is not in %s", owner, name, loc, wantDir)
			}
			base := filepath.Base(string(loc))
			if got, want := base[13:], SafeName(name); got != want {
				t.Fatalf("owner %q name %q: file %q, want suffix %q", owner, name, base, want)
			}
			if fi, err := os.Lstat(string(loc)); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("owner %q name %q: %s: %v", owner, name, loc, err)
			}
		}
	}
	// Nothing was written beside the root, and inside it only session
	// directories holding spill files.
	if got := entries(t, dir); len(got) != 1+len(owners)*(1+len(names)) {
		t.Fatalf("temporary directory holds %d entries, want %d: %q", len(got), 1+len(owners)*(1+len(names)), got)
	}
	for _, e := range entries(t, f.Root()) {
		sess, file, _ := strings.Cut(e, string(filepath.Separator))
		if !isSessionDir(sess) || (file != "" && !isSpillFileName(file)) {
			t.Fatalf("unexpected entry %q in root", e)
		}
	}
}

func TestFSPlantedFileAtTargetName(t *testing.T) {
	f := newFS(t)
	rnd, part := fixedRand(7)
	f.rand = rnd
	sess := filepath.Join(f.Root(), SessionDir("o"))
	if err := os.MkdirAll(sess, 0o700); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(sess, part+"-out.txt")
	if err := os.WriteFile(planted, []byte("planted"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := f.Save(context.Background(), "o", "out.txt", "new content")
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Save over a planted file: %v, want an error matching fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(planted); string(b) != "planted" {
		t.Fatalf("planted file now holds %q", b)
	}
}

func TestFSPlantedSymlinkAtTargetName(t *testing.T) {
	for _, dangling := range []bool{false, true} {
		t.Run(map[bool]string{false: "to an existing file", true: "dangling"}[dangling], func(t *testing.T) {
			f := newFS(t)
			rnd, part := fixedRand(42)
			f.rand = rnd
			outside := t.TempDir()
			target := filepath.Join(outside, "victim")
			if !dangling {
				if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sess := filepath.Join(f.Root(), SessionDir("o"))
			if err := os.MkdirAll(sess, 0o700); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(sess, part+"-out.txt")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			_, err := f.Save(context.Background(), "o", "out.txt", "attacker wants this written")
			if !errors.Is(err, fs.ErrExist) {
				t.Fatalf("Save over a planted symlink: %v, want an error matching fs.ErrExist", err)
			}
			b, err := os.ReadFile(target)
			switch {
			case dangling && !errors.Is(err, fs.ErrNotExist):
				t.Fatalf("dangling symlink's target was created: %q, %v", b, err)
			case !dangling && string(b) != "precious":
				t.Fatalf("symlink's target now holds %q (%v)", b, err)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Fatalf("planted symlink was replaced: %v", err)
			}
		})
	}
}

func TestFSSessionDirPlanted(t *testing.T) {
	outside := t.TempDir()
	tests := []struct {
		name  string
		plant func(t *testing.T, sess string)
	}{
		{"symlink to a directory", func(t *testing.T, sess string) {
			if err := os.Symlink(outside, sess); err != nil {
				t.Fatal(err)
			}
		}},
		{"regular file", func(t *testing.T, sess string) {
			if err := os.WriteFile(sess, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFS(t)
			if err := os.MkdirAll(f.Root(), 0o700); err != nil {
				t.Fatal(err)
			}
			tt.plant(t, filepath.Join(f.Root(), SessionDir("o")))
			if loc, err := f.Save(context.Background(), "o", "n", "data"); err == nil {
				t.Fatalf("Save succeeded at %s", loc)
			}
			if got := entries(t, outside); len(got) != 0 {
				t.Fatalf("written through the symlink: %q", got)
			}
		})
	}
}

func TestFSSessionDirOfAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	f := newFS(t)
	sess := filepath.Join(f.Root(), SessionDir("o"))
	if err := os.MkdirAll(sess, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(sess, 4321, 4321); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Save(context.Background(), "o", "n", "data"); err == nil || !strings.Contains(err.Error(), "another user") {
		t.Fatalf("Save into another user's session directory: %v", err)
	}
	if got := entries(t, sess); len(got) != 0 {
		t.Fatalf("written: %q", got)
	}
}

func TestFSExistingSessionDirMadePrivate(t *testing.T) {
	f := newFS(t)
	sess := filepath.Join(f.Root(), SessionDir("o"))
	if err := os.MkdirAll(sess, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sess, 0o755); err != nil {
		t.Fatal(err)
	}
	save(t, f, "o", "n", "data")
	if fi, _ := os.Stat(sess); fi.Mode().Perm() != 0o700 {
		t.Fatalf("session directory mode %v, want 0700", fi.Mode().Perm())
	}
}

func TestFSRootIsAFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{file, filepath.Join(file, "sub"), filepath.Join(file, "sub", "deeper")} {
		_, err := NewFS(root).Save(context.Background(), "o", "n", "data")
		if err == nil {
			t.Fatalf("Save with root %s succeeded", root)
		}
		if root == file && !errors.Is(err, errs.ErrInvalidArgument) {
			t.Fatalf("root is a file: %v, want kind ErrInvalidArgument", err)
		}
		if b, _ := os.ReadFile(file); string(b) != "keep" {
			t.Fatalf("file changed: %q", b)
		}
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Fatalf("entries %q", got)
	}
}

func TestFSUnwritableRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which ignores file modes; TestFSRootIsAFile covers a root that cannot be written as root too")
	}
	f := newFS(t)
	if err := os.Mkdir(f.Root(), 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(f.Root(), 0o700) })
	_, err := f.Save(context.Background(), "o", "n", "data")
	if !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("Save into an unwritable root: %v, want fs.ErrPermission", err)
	}
	if got := entries(t, f.Root()); len(got) != 0 {
		t.Fatalf("entries %q", got)
	}
}

func TestFSRootWritableByOthers(t *testing.T) {
	f := newFS(t)
	if err := os.Mkdir(f.Root(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f.Root(), 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Save(context.Background(), "o", "n", "data"); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("Save into a world-writable root: %v, want kind ErrInvalidArgument", err)
	}
	// With the sticky bit, as /tmp, others cannot rename our entries.
	if err := os.Chmod(f.Root(), 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	save(t, f, "o", "n", "data")
}

func TestFSFailingWriteLeavesNothing(t *testing.T) {
	tests := []struct {
		name  string
		write func(f *os.File, b []byte) error
		want  error
	}{
		{"disk full halfway", func(f *os.File, b []byte) error {
			if _, err := f.Write(b[:len(b)/2]); err != nil {
				return err
			}
			return &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
		}, syscall.ENOSPC},
		{"sync fails after a full write", func(f *os.File, b []byte) error {
			if _, err := f.Write(b); err != nil {
				return err
			}
			return &fs.PathError{Op: "sync", Path: f.Name(), Err: syscall.EIO}
		}, syscall.EIO},
		{"write to a closed file", func(f *os.File, b []byte) error {
			f.Close()
			_, err := f.Write(b)
			return err
		}, fs.ErrClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFS(t)
			f.write = tt.write
			loc, err := f.Save(context.Background(), "o", "n", strings.Repeat("data", 1000))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Save = %q, %v; want an error matching %v", loc, err, tt.want)
			}
			if got := entries(t, filepath.Join(f.Root(), SessionDir("o"))); len(got) != 0 {
				t.Fatalf("left behind: %q", got)
			}
		})
	}
}

func TestFSFailingRandomSource(t *testing.T) {
	f := newFS(t)
	f.rand = strings.NewReader("short")
	if _, err := f.Save(context.Background(), "o", "n", "data"); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Save with a failing random source: %v", err)
	}
}

func TestFSCanceled(t *testing.T) {
	f := newFS(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Save(ctx, "o", "n", "data"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Save: %v", err)
	}
	if _, err := os.Stat(f.Root()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("root created by a canceled Save: %v", err)
	}
	if _, err := f.Fetch(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Fetch: %v", err)
	}
}

func TestFSFetchErrorsAreTheOperatingSystems(t *testing.T) {
	f := newFS(t)
	loc := save(t, f, "o", "n", "data")
	if err := os.Remove(string(loc)); err != nil {
		t.Fatal(err)
	}
	_, err := f.Fetch(context.Background(), loc)
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != string(loc) || pe.Err != syscall.ENOENT {
		t.Fatalf("Fetch of a removed spill: %#v, want *fs.PathError{Path: %s, Err: ENOENT}", err, loc)
	}
	// A root that is gone.
	if err := os.RemoveAll(f.Root()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Fetch(context.Background(), loc); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Fetch with the root gone: %v", err)
	}
}

func TestFSFetchPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which ignores file modes, so permission denied cannot happen")
	}
	f := newFS(t)
	loc := save(t, f, "o", "n", "data")
	if err := os.Chmod(string(loc), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Fetch(context.Background(), loc); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("Fetch of an unreadable spill: %v, want fs.ErrPermission", err)
	}
}

func TestFSFetchRefusesOtherPaths(t *testing.T) {
	f := newFS(t)
	loc := save(t, f, "o", "n", "data")
	sess := filepath.Dir(string(loc))
	if err := os.WriteFile(filepath.Join(sess, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"/etc/passwd",
		"relative/" + filepath.Base(string(loc)),
		filepath.Join(f.Root(), "..", "x"),
		string(loc) + "/../../../etc/passwd",
		sess + "/../" + filepath.Base(sess) + "/" + filepath.Base(string(loc)),
		filepath.Join(sess, "notes.txt"),
		sess,
		filepath.Join(f.Root(), "session-abc", filepath.Base(string(loc))),
		filepath.Join(sess, filepath.Base(string(loc)), "x"),
		filepath.Join(NewFS(t.TempDir()).Root(), SessionDir("o"), filepath.Base(string(loc))),
	} {
		if _, err := f.Fetch(context.Background(), Locator(bad)); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("Fetch(%q): %v, want kind ErrInvalidArgument", bad, err)
		}
	}
}

func TestFSFetchDoesNotFollowSymlinksOutOfRoot(t *testing.T) {
	f := newFS(t)
	loc := save(t, f, "o", "n", "data")
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(filepath.Dir(string(loc)), "AAAAAAAAAAAA-secret")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	if got, err := f.Fetch(context.Background(), Locator(link)); err == nil || got != "" {
		t.Fatalf("Fetch through a symlink out of root returned %q, %v", got, err)
	}
}

func TestFSDefaultRoot(t *testing.T) {
	if filepath.Base(DefaultRoot()) != "satchel-spill" || !filepath.IsAbs(DefaultRoot()) {
		t.Fatalf("DefaultRoot() = %s", DefaultRoot())
	}
	if NewFS("").Root() != DefaultRoot() {
		t.Fatalf("NewFS(\"\").Root() = %s", NewFS("").Root())
	}
	t.Chdir(t.TempDir())
	wd, _ := os.Getwd()
	if got := NewFS("rel/dir/").Root(); got != filepath.Join(wd, "rel", "dir") {
		t.Fatalf("NewFS(rel/dir/).Root() = %s", got)
	}
}

func TestFSHint(t *testing.T) {
	f := newFS(t)
	loc := save(t, f, "o", "n", "a\nb\nc\n")
	want := `Read it with read_file (path "` + string(loc) + `", start_line 1, end_line 3; the file has 3 lines).`
	if got := f.Hint(loc, "a\nb\nc\n"); got != want {
		t.Fatalf("Hint = %s\nwant  %s", got, want)
	}
	f.Tool = "host_read"
	if got, want := f.Hint(loc, ""), `Read it with host_read (path "`+string(loc)+`").`; got != want {
		t.Fatalf("Hint = %s\nwant  %s", got, want)
	}
}
