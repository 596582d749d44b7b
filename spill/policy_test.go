package spill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// memBackend keeps spills in a map, with a fixed locator and hint so
// previews are predictable.
type memBackend struct {
	saved   map[Locator]string
	loc     Locator
	hint    string
	saveErr error
	saves   int
}

func (m *memBackend) Save(ctx context.Context, owner, name, text string) (Locator, error) {
	m.saves++
	if m.saveErr != nil {
		return "", m.saveErr
	}
	if m.saved == nil {
		m.saved = map[Locator]string{}
	}
	loc := m.loc
	if loc == "" {
		loc = Locator("mem/" + owner + "/" + name)
	}
	m.saved[loc] = text
	return loc, nil
}

func (m *memBackend) Fetch(ctx context.Context, loc Locator) (string, error) {
	return m.saved[loc], nil
}

func (m *memBackend) Hint(loc Locator, text string) string {
	if m.hint != "" {
		return m.hint
	}
	return readHint("", loc, text, 0)
}

// checkResult checks the invariants of every Result of p.Apply on text.
func checkResult(t *testing.T, p Policy, text string, r Result) {
	t.Helper()
	if !r.Spilled {
		if r.Text != text || r.Locator != "" || r.Head != "" || r.Notice != "" || r.Tail != "" || r.Omitted != 0 {
			t.Fatalf("inline result changed: %+v", r)
		}
		return
	}
	limit := p.maxInline()
	if len(r.Text) > limit {
		t.Fatalf("preview of %d bytes exceeds the cap %d", len(r.Text), limit)
	}
	if !utf8.ValidString(r.Text) {
		t.Fatalf("preview is not valid UTF-8: %q", r.Text)
	}
	if r.Text != r.Head+r.Notice+r.Tail {
		t.Fatalf("Text is not Head+Notice+Tail")
	}
	if !strings.HasPrefix(text, r.Head) || !strings.HasSuffix(text, r.Tail) || len(r.Head)+len(r.Tail) >= len(text) {
		t.Fatalf("head %d and tail %d bytes are not a prefix and a suffix of %d bytes", len(r.Head), len(r.Tail), len(text))
	}
	if r.Omitted != len(text)-len(r.Head)-len(r.Tail) {
		t.Fatalf("Omitted = %d, want %d", r.Omitted, len(text)-len(r.Head)-len(r.Tail))
	}
}

func TestPolicyDecision(t *testing.T) {
	const limit = 1000
	p := Policy{MaxInlineBytes: limit}
	ascii := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name, tool, text string
		spill            bool
	}{
		{"exactly the cap stays inline", "grep", ascii(limit), false},
		{"one byte over spills", "grep", ascii(limit + 1), true},
		{"small stays inline", "grep", "hello", false},
		{"empty stays inline", "grep", "", false},
		{"not UTF-8 stays inline", "grep", ascii(limit) + "\xff", false},
		{"the reader tool's result stays inline", "read_file", ascii(2 * limit), false},
		{"a reader tool of another name spills", "ws_read_file", ascii(2 * limit), true},
		{"already a spill stays inline", "grep", ascii(limit) + "\n\n(Omitted 5 bytes. Full result stored at: x. y)\n\n" + ascii(10), false},
		{"a look-alike without a number spills", "grep", ascii(limit) + "\n\n(Omitted many bytes. Full result stored at: x)", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &memBackend{}
			r := p.Apply(context.Background(), b, "owner", tt.tool, "", tt.text)
			if r.Spilled != tt.spill {
				t.Fatalf("Spilled = %v, want %v", r.Spilled, tt.spill)
			}
			if tt.spill != (b.saves == 1) {
				t.Fatalf("%d saves", b.saves)
			}
			checkResult(t, p, tt.text, r)
			if r.Spilled {
				if got, _ := b.Fetch(context.Background(), r.Locator); got != tt.text {
					t.Fatalf("saved text differs")
				}
				if r.Locator != Locator("mem/owner/"+tt.tool+".txt") {
					t.Fatalf("locator %s: the name should default to the tool's", r.Locator)
				}
			}
		})
	}
	t.Run("custom reader tool", func(t *testing.T) {
		p := Policy{MaxInlineBytes: 10, ReaderTool: "ws_read_file"}
		if r := p.Apply(context.Background(), &memBackend{}, "", "ws_read_file", "", ascii(20)); r.Spilled {
			t.Fatal("the reader tool's result was spilled")
		}
		if r := p.Apply(context.Background(), &memBackend{}, "", "read_file", "", ascii(2000)); !r.Spilled {
			t.Fatal("read_file is not the reader tool here; its result should spill")
		}
	})
	t.Run("default cap", func(t *testing.T) {
		for _, max := range []int{0, -5} {
			p := Policy{MaxInlineBytes: max}
			if r := p.Apply(context.Background(), &memBackend{}, "", "t", "", ascii(65536)); r.Spilled {
				t.Fatal("65536 bytes spilled under the default cap")
			}
			if r := p.Apply(context.Background(), &memBackend{}, "", "t", "", ascii(65537)); !r.Spilled || len(r.Text) > 65536 {
				t.Fatalf("65537 bytes: spilled %v, %d bytes", r.Spilled, len(r.Text))
			}
		}
	})
	t.Run("never twice", func(t *testing.T) {
		p := Policy{MaxInlineBytes: 500}
		first := p.Apply(context.Background(), &memBackend{}, "", "t", "", ascii(5000))
		// A later, smaller cap sees the preview: it is not spilled again.
		b := &memBackend{}
		second := Policy{MaxInlineBytes: 300}.Apply(context.Background(), b, "", "t", "", first.Text)
		if second.Spilled || b.saves != 0 {
			t.Fatalf("a preview was spilled again")
		}
	})
}

func TestPolicyPreview(t *testing.T) {
	const limit = 1000
	p := Policy{MaxInlineBytes: limit}
	b := &memBackend{loc: "spill/AAAAAAAAAAAA-grep.txt", hint: "Read it with read_file."}
	text := strings.Repeat("0123456789", 1000)
	r := p.Apply(context.Background(), b, "", "grep", "", text)
	checkResult(t, p, text, r)
	wantNotice := "\n\n(Omitted " + strconv.Itoa(len(text)-len(r.Head)-len(r.Tail)) +
		" bytes. Full result stored at: spill/AAAAAAAAAAAA-grep.txt. Read it with read_file.)\n\n"
	if r.Notice != wantNotice {
		t.Fatalf("notice %q, want %q", r.Notice, wantNotice)
	}
	// The budget is sized for the longest number; 10000 omitted bytes
	// has as many digits as 10000 bytes, so ASCII fills the cap exactly.
	if len(r.Text) != limit {
		t.Fatalf("preview is %d bytes, want exactly %d", len(r.Text), limit)
	}
	budget := limit - len(r.Notice)
	if len(r.Head) != budget*4/5 || len(r.Tail) != budget-budget*4/5 {
		t.Fatalf("head %d, tail %d: not 4:1 of %d", len(r.Head), len(r.Tail), budget)
	}
	if !IsSpill(r.Text) {
		t.Fatal("IsSpill does not recognise a preview")
	}
}

func TestPolicyPreviewMultibyte(t *testing.T) {
	for _, unit := range []string{"é", "✓", "𝄞", "aé✓𝄞\n"} {
		for limit := 300; limit < 340; limit++ {
			p := Policy{MaxInlineBytes: limit}
			text := strings.Repeat(unit, 2000)
			b := &memBackend{loc: "L", hint: "H"}
			r := p.Apply(context.Background(), b, "", "t", "", text)
			if !r.Spilled {
				t.Fatal("not spilled")
			}
			checkResult(t, p, text, r)
			// 4:1 within one character's slack on each side.
			budget := limit - len(notice(len(text), "L", "H"))
			if d := budget*4/5 - len(r.Head); d < 0 || d >= utf8.UTFMax {
				t.Fatalf("unit %q cap %d: head %d bytes, budget %d", unit, limit, len(r.Head), budget*4/5)
			}
			if d := budget - budget*4/5 - len(r.Tail); d < 0 || d >= utf8.UTFMax {
				t.Fatalf("unit %q cap %d: tail %d bytes, budget %d", unit, limit, len(r.Tail), budget-budget*4/5)
			}
		}
	}
}

func TestPolicyTinyCap(t *testing.T) {
	b := &memBackend{loc: "spill/AAAAAAAAAAAA-x", hint: strings.Repeat("h", 100)}
	text := strings.Repeat("é", 500)
	full := len(notice(len(text), b.loc, b.hint))
	short := len(notice(len(text), b.loc, ""))
	for _, limit := range []int{1, 2, 10, short - 1, short, short + 1, full - 1, full, full + 1, full + 10} {
		p := Policy{MaxInlineBytes: limit}
		r := p.Apply(context.Background(), b, "", "t", "", text)
		checkResult(t, p, text, r)
		switch {
		case limit < short:
			if r.Head != "" || r.Tail != "" || !strings.HasPrefix(notice(len(text), b.loc, ""), r.Notice) {
				t.Fatalf("cap %d: want a cut short notice, got %q", limit, r.Text)
			}
		case limit < full:
			if strings.Contains(r.Notice, "hhh") || !strings.Contains(r.Notice, string(b.loc)) {
				t.Fatalf("cap %d: want the notice without its hint, got %q", limit, r.Notice)
			}
		default:
			if !strings.Contains(r.Notice, b.hint) {
				t.Fatalf("cap %d: want the full notice, got %q", limit, r.Notice)
			}
		}
	}
}

func TestPolicyFailedSpillStaysInlineAndLogs(t *testing.T) {
	var logs bytes.Buffer
	p := Policy{MaxInlineBytes: 10, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	text := strings.Repeat("x", 100)
	r := p.Apply(context.Background(), &memBackend{saveErr: errors.New("disk on fire")}, "o", "grep", "g.txt", text)
	if r.Spilled || r.Text != text {
		t.Fatalf("failed spill: %+v", r)
	}
	for _, want := range []string{"level=WARN", "result kept inline", "disk on fire", "tool=grep", "bytes=100"} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("log %q lacks %q", logs.String(), want)
		}
	}
	logs.Reset()
	if r := p.Apply(context.Background(), nil, "o", "grep", "", text); r.Spilled || r.Text != text || !strings.Contains(logs.String(), "no backend") {
		t.Fatalf("nil backend: %+v, log %q", r, logs.String())
	}
}

func TestPolicyWithBothBackends(t *testing.T) {
	text := strings.Repeat("line of text ✓\n", 10000)
	w, _ := newWorkspace()
	for _, b := range []Backend{newFS(t), w} {
		p := Policy{MaxInlineBytes: 4096}
		r := p.Apply(context.Background(), b, "owner", "grep", "", text)
		checkResult(t, p, text, r)
		// The hint starts at the first line the head did not show whole.
		at := fmt.Sprintf("start_line %d, end_line ", strings.Count(r.Head, "\n")+1)
		if !r.Spilled || strings.Count(r.Head, "\n") < 100 || !strings.Contains(r.Notice, `Read it with read_file (path "`+string(r.Locator)+`", `+at) {
			t.Fatalf("notice %q, want %q", r.Notice, at)
		}
		if got, err := b.Fetch(context.Background(), r.Locator); err != nil || got != text {
			t.Fatalf("Fetch: %d bytes, %v", len(got), err)
		}
	}
}

// TestHintInsideALongLine: a spill of one long line is read on inside it.
func TestHintInsideALongLine(t *testing.T) {
	text := strings.Repeat("x", 10000)
	w, _ := newWorkspace()
	p := Policy{MaxInlineBytes: 4096}
	r := p.Apply(context.Background(), w, "owner", "q", "", text)
	want := fmt.Sprintf("start_line 1, start_char %d, end_line 1;", len(r.Head))
	if !r.Spilled || !strings.Contains(r.Notice, want) {
		t.Fatalf("notice %q, want %q", r.Notice, want)
	}
}

func FuzzPreview(f *testing.F) {
	f.Add(strings.Repeat("a", 100), 50, "spill/AAAAAAAAAAAA-x", "Read it.")
	f.Add(strings.Repeat("é𝄞", 100), 77, "/tmp/é", "")
	f.Add("\n\n(Omitted 1 bytes. Full result stored at: ", 3, "x", "y")
	f.Fuzz(func(t *testing.T, text string, limit int, loc, hint string) {
		if limit < 1 || limit > 1<<16 {
			limit = 1 + (limit&0xffff+0xffff)%(1<<12)
		}
		// Locators and hints come from backends: valid UTF-8.
		loc, hint = strings.ToValidUTF8(loc, "?"), strings.ToValidUTF8(hint, "?")
		p := Policy{MaxInlineBytes: limit}
		r := p.Apply(context.Background(), &memBackend{loc: Locator(loc), hint: hint}, "", "t", "", text)
		checkResult(t, p, text, r)
		spill := len(text) > limit && utf8.ValidString(text) && !IsSpill(text)
		if r.Spilled != spill {
			t.Fatalf("Spilled = %v, want %v", r.Spilled, spill)
		}
	})
}
