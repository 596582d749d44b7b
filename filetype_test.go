package satchel_test

import (
	"context"
	"testing"

	"github.com/satchel-dev/satchel"
)

func TestFileType(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"hello\n", satchel.TypeText},
		{"", satchel.TypeText},
		{"é ☃", satchel.TypeText},
		{"a\x00b", satchel.TypeBinary},
		{"\xff\xfe", satchel.TypeBinary},
		{"\x89PNG\r\n\x1a\n....", "image/png"},
		{"\xff\xd8\xff\xe0", "image/jpeg"},
		{"GIF89a...", "image/gif"},
		{"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"},
		{"RIFF\x10\x00\x00\x00WAVEfmt ", satchel.TypeBinary},
		{"%PDF-1.7", "application/pdf"},
	} {
		if got := satchel.FileType(c.in); got != c.want {
			t.Errorf("FileType(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestGrepSkipsBinary: grep does not search binary files, and counts them.
func TestGrepSkipsBinary(t *testing.T) {
	ctx := context.Background()
	st, _ := satchel.Open(ctx, "memory:")
	defer st.Close()
	ws, _ := st.Workspace(ctx, "s", "t")
	must(t, ws.Write(ctx, "a.txt", "match\n"))
	must(t, ws.Write(ctx, "b.bin", "match\x00\n"))
	must(t, ws.Write(ctx, "c.bin", "match\xff\n"))
	res, err := ws.Grep(ctx, "match", "", satchel.GrepOptions{})
	if err != nil || len(res.Matches) != 1 || res.Matches[0].Path != "a.txt" || res.SkippedBinary != 2 {
		t.Fatalf("grep = %+v, %v", res, err)
	}
	fi, err := ws.Stat(ctx, "b.bin")
	if err != nil || fi.Type != satchel.TypeBinary {
		t.Fatalf("stat = %+v, %v", fi, err)
	}
	r, err := ws.ReadWith(ctx, "c.bin", satchel.ReadOptions{Binary: true, Numbered: true})
	if err != nil || !r.Binary || r.Data != "match\xff\n" || r.Size != 7 || r.Text != "" {
		t.Fatalf("ReadWith Binary = %+v, %v", r, err)
	}
	if got, err := ws.Read(ctx, "c.bin"); err != nil || got != "match\xff\n" {
		t.Fatalf("Read of a binary file = %q, %v", got, err)
	}
}

// FuzzFileType: a sniffed type never panics, and text is never binary.
func FuzzFileType(f *testing.F) {
	for _, s := range []string{"", "a", "\x89PNG\r\n\x1a\n", "RIFF1234WEBP", "\x00", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		typ := satchel.FileType(s)
		if typ == satchel.TypeText && satchel.IsBinary(s) {
			t.Fatalf("%q is binary but typed as text", s)
		}
		if satchel.IsImage(typ) && len(s) < 3 {
			t.Fatalf("%q typed as %s", s, typ)
		}
	})
}
