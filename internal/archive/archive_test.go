package archive

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel/internal/errs"
)

// sample writes an archive of one blob and two records.
func sample(t testing.TB) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	name, err := w.Blob("hello\n")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := w.Blob("hello\n"); again != name || w.Blobs() != 1 {
		t.Fatalf("a blob written twice: %s then %s, %d blobs", name, again, w.Blobs())
	}
	if err := w.Record(Thread{Type: TypeThread, Scope: "acme", Name: "main", Created: Time(time.Unix(1, 0)), Head: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Record(Commit{Type: TypeCommit, Scope: "acme", Thread: "main", Seq: 1, Changes: []Change{{Path: "a.md", Blob: name, Size: 6}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	var types []string
	blobs, err := Read(bytes.NewReader(sample(t)), true, map[string]BlobLoc{}, func(typ string, rec []byte) error {
		types = append(types, typ)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(types, ",") != "thread,commit" || len(blobs) != 1 {
		t.Fatalf("read records %v and %d blobs, want thread,commit and 1", types, len(blobs))
	}
	for _, loc := range blobs {
		if got := string(sample(t)[loc.Off : loc.Off+loc.Size]); got != "hello\n" {
			t.Fatalf("the blob lies at %+v, holding %q", loc, got)
		}
	}
}

func TestCorrupt(t *testing.T) {
	good := sample(t)
	for name, b := range map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)/2],
		"bit flip":  flip(good, bytes.Index(good, []byte(`"main"`))+1),
		"blob flip": flip(good, bytes.Index(good, []byte("hello\n"))),
	} {
		_, err := Read(bytes.NewReader(b), true, map[string]BlobLoc{}, func(string, []byte) error { return nil })
		if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "export") {
			t.Errorf("%s: Read = %v, want a corrupt export file", name, err)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 1
	return c
}

func TestTime(t *testing.T) {
	at := time.Date(2026, 12, 6, 8, 0, 0, 123456789, time.FixedZone("x", 3600))
	got, err := ParseTime(Time(at))
	if err != nil || !got.Equal(at.Truncate(time.Microsecond)) {
		t.Fatalf("ParseTime(Time(%v)) = %v, %v", at, got, err)
	}
	if _, err := ParseTime("yesterday"); err == nil {
		t.Fatal("ParseTime(yesterday) = nil error")
	}
}

// FuzzRead: any bytes are read to the end or refused with a typed error,
// never a panic.
func FuzzRead(f *testing.F) {
	good := sample(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := Read(bytes.NewReader(b), true, map[string]BlobLoc{}, func(string, []byte) error { return nil })
		if err != nil && !errors.Is(err, errs.ErrInvalidArgument) {
			t.Fatalf("Read = %v, not ErrInvalidArgument", err)
		}
	})
}
