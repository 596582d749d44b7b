package spill

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/internal/errs"
)

func age(t *testing.T, path string, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

func TestPrune(t *testing.T) {
	f := newFS(t)
	oldA := save(t, f, "a", "old", "x")
	newA := save(t, f, "a", "new", "x")
	oldB := save(t, f, "b", "old", "x")
	save(t, f, "c", "new", "x")
	age(t, string(oldA), 48*time.Hour)
	age(t, string(oldB), 48*time.Hour)
	sessB := filepath.Dir(string(oldB))
	age(t, sessB, 48*time.Hour) // b's session has nothing young: it goes too

	// Things that do not have the layout stay, however old.
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	sessA := filepath.Dir(string(oldA))
	keep := []string{
		filepath.Join(f.Root(), "notes.txt"),                          // a file in root
		filepath.Join(sessA, "notes.txt"),                             // a file of another shape
		filepath.Join(f.Root(), "session-not-hex"),                    // a directory of another shape
		filepath.Join(f.Root(), "session-not-hex", "AAAAAAAAAAAA-x"),  // a spill-like file in it
		filepath.Join(sessA, "AAAAAAAAAAAA-dir"),                      // a directory with a spill name
		filepath.Join(sessA, "AAAAAAAAAAAA-dir", "BBBBBBBBBBBB-deep"), // a deeper file
	}
	for _, p := range keep {
		if filepath.Base(p) == "session-not-hex" || filepath.Base(p) == "AAAAAAAAAAAA-dir" {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(sessA, "CCCCCCCCCCCC-link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	linkedSess := filepath.Join(f.Root(), SessionDir("linked"))
	linkedDir := t.TempDir()
	victim := filepath.Join(linkedDir, "DDDDDDDDDDDD-victim")
	if err := os.WriteFile(victim, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(linkedDir, linkedSess); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(slices.Clone(keep), outside, victim, linkedDir) {
		age(t, p, 48*time.Hour)
	}

	removed, err := Prune(f.Root(), 24*time.Hour)
	if err != nil || removed != 2 {
		t.Fatalf("Prune = %d, %v; want 2 removed", removed, err)
	}
	for _, p := range []string{string(oldA), string(oldB), sessB} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s not removed: %v", p, err)
		}
	}
	for _, p := range append(keep, string(newA), sessA, link, outside, linkedSess, victim) {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "precious" {
		t.Fatal("symlink target changed")
	}

	// Zero removes every spill file; session directories that are young
	// stay even when empty.
	if removed, err := Prune(f.Root(), 0); err != nil || removed != 2 {
		t.Fatalf("Prune(0) = %d, %v; want 2", removed, err)
	}
	if _, err := f.Fetch(context.Background(), newA); !os.IsNotExist(err) {
		t.Fatalf("young spill kept by Prune(0): %v", err)
	}
	// A Save after a prune still works.
	save(t, f, "c", "again", "x")
}

func TestPruneArguments(t *testing.T) {
	if _, err := Prune(t.TempDir(), -time.Second); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("negative duration: %v", err)
	}
	if n, err := Prune(filepath.Join(t.TempDir(), "missing"), time.Hour); n != 0 || err != nil {
		t.Fatalf("missing root: %d, %v", n, err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Prune(file, time.Hour); err == nil {
		t.Fatal("root that is a file: no error")
	}
}
