package spill

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/satchel-dev/satchel/internal/errs"
)

// validWorkspacePath checks DESIGN §2.1's rules and returns the first that
// p breaks, or "".
func validWorkspacePath(p string) string {
	switch {
	case p == "":
		return "empty"
	case len(p) > 1024:
		return "too long"
	case strings.HasPrefix(p, "/"):
		return "absolute"
	case !utf8.ValidString(p):
		return "not UTF-8"
	case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "control character"
	case strings.Contains(p, "\\"):
		return "backslash"
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return "empty segment"
		case seg == "." || seg == "..":
			return "dot segment"
		case strings.HasSuffix(seg, ".") || strings.HasSuffix(seg, " "):
			return "segment ends in a dot or a space"
		}
		base, _, _ := strings.Cut(seg, ".")
		switch strings.ToUpper(base) {
		case "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
			"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9":
			return "reserved device name"
		}
	}
	return ""
}

// memThread is a thread's files, as the root package would give them.
type memThread struct {
	mu       sync.Mutex
	files    map[string]string
	writeErr error
}

var errMissing = errs.New(errs.ErrNotFound, "file not found")

func (m *memThread) write(ctx context.Context, path, content string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.writeErr != nil {
		return m.writeErr
	}
	if reason := validWorkspacePath(path); reason != "" {
		return errs.New(errs.ErrInvalidPath, "invalid path %q: %s", path, reason)
	}
	if m.files == nil {
		m.files = map[string]string{}
	}
	m.files[path] = content
	return nil
}

func (m *memThread) read(ctx context.Context, path string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.files[path]
	if !ok {
		return "", errMissing
	}
	return s, nil
}

func newWorkspace() (*Workspace, *memThread) {
	m := &memThread{}
	return NewWorkspace(m.write, m.read), m
}

func TestWorkspaceSaveFetch(t *testing.T) {
	w, m := newWorkspace()
	big := strings.Repeat("ligne numéro ✓\n", 300000)
	for _, name := range []string{"grep.txt", "", "../x", ".hidden", "a/b", strings.Repeat("é", 150), "nul\x00", "trailing...", "CON", "nul.txt", "a ."} {
		loc := save(t, w, "ignored owner", name, big)
		p := string(loc)
		if reason := validWorkspacePath(p); reason != "" {
			t.Fatalf("name %q: locator %q is not a valid path: %s", name, p, reason)
		}
		file, ok := strings.CutPrefix(p, "spill/")
		if !ok || !isSpillFileName(file) || strings.Contains(file, "/") {
			t.Fatalf("name %q: locator %q is not spill/<random>-<safe_name>", name, p)
		}
		if got, err := w.Fetch(context.Background(), loc); err != nil || got != big {
			t.Fatalf("Fetch(%s): %d bytes, %v", loc, len(got), err)
		}
	}
	if len(m.files) != 11 {
		t.Fatalf("%d files, want 11", len(m.files))
	}
}

func TestWorkspaceNamesNeverCollide(t *testing.T) {
	w, m := newWorkspace()
	for range 1000 {
		save(t, w, "", "same", "x")
	}
	if len(m.files) != 1000 {
		t.Fatalf("1000 saves made %d files", len(m.files))
	}
}

func TestWorkspaceErrors(t *testing.T) {
	w, m := newWorkspace()
	for _, bad := range []Locator{"", "x.txt", "spill/x.txt", "../spill/AAAAAAAAAAAA-x", "spill/AAAAAAAAAAAA-x/y", "spill/AAAAAAAAAAAA-.x", "spill/AAAAAAAAAAAA-x.", "/spill/AAAAAAAAAAAA-x"} {
		if _, err := w.Fetch(context.Background(), bad); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("Fetch(%q): %v, want kind ErrInvalidArgument", bad, err)
		}
	}
	// The read's error comes back unchanged.
	if _, err := w.Fetch(context.Background(), "spill/AAAAAAAAAAAA-x.txt"); err != errMissing {
		t.Fatalf("Fetch of a missing spill: %v, want the read's error", err)
	}
	m.writeErr = errs.New(errs.ErrLimitExceeded, "workspace is full")
	if _, err := w.Save(context.Background(), "", "n", "x"); !errors.Is(err, errs.ErrLimitExceeded) {
		t.Fatalf("Save with a failing write: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Save(ctx, "", "n", "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Save canceled: %v", err)
	}
}

func TestWorkspaceHint(t *testing.T) {
	w, _ := newWorkspace()
	rnd, part := fixedRand(1)
	w.rand = rnd
	loc := save(t, w, "", "result", "x")
	if want := Locator("spill/" + part + "-result"); loc != want {
		t.Fatalf("locator %s, want %s", loc, want)
	}
	tests := []struct {
		text   string
		window int
		want   string
	}{
		{"", 0, `Read it with read_file (path "spill/AQEBAQEBAQEB-result").`},
		{"one", 0, `Read it with read_file (path "spill/AQEBAQEBAQEB-result", start_line 1, end_line 1; the file has 1 line).`},
		{"a\nb\n", 0, `Read it with read_file (path "spill/AQEBAQEBAQEB-result", start_line 1, end_line 2; the file has 2 lines).`},
		{"a\r\nb\r\nc", 0, `Read it with read_file (path "spill/AQEBAQEBAQEB-result", start_line 1, end_line 3; the file has 3 lines).`},
		{"\n\n\n", 0, `Read it with read_file (path "spill/AQEBAQEBAQEB-result", start_line 1, end_line 3; the file has 3 lines).`},
		// 10 lines of 9 bytes; numbered, each costs 9 + "10| " (4) + "\n" = 14 bytes.
		{strings.Repeat("123456789\n", 10), 14 * 4, `Read it with read_file (path "spill/AQEBAQEBAQEB-result", start_line 1, end_line 4; the file has 10 lines).`},
		{strings.Repeat("123456789\n", 10), 14*4 - 1, `Read it with read_file (path "spill/AQEBAQEBAQEB-result", start_line 1, end_line 3; the file has 10 lines).`},
		// A first line longer than the window is still one line to read.
		{strings.Repeat("x", 100) + "\nshort", 10, `Read it with read_file (path "spill/AQEBAQEBAQEB-result", start_line 1, end_line 1; the file has 2 lines).`},
	}
	for _, tt := range tests {
		w.Window = tt.window
		if got := w.Hint(loc, tt.text); got != tt.want {
			t.Errorf("Hint(%q) window %d =\n%s\nwant\n%s", tt.text, tt.window, got, tt.want)
		}
	}
	w.Tool, w.Window = "ws_read_file", 0
	if got := w.Hint(loc, "a"); !strings.HasPrefix(got, "Read it with ws_read_file (") {
		t.Fatalf("Hint with Tool set: %s", got)
	}
}
