package engine

import (
	"context"
	"sync"
	"testing"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
)

// headPackBackend is a memory backend read as a server is (packs cached
// by the engine), with a backend.HeadPackReader. It counts the packs
// HeadPack sent and the engine's Pack reads.
type headPackBackend struct {
	*memory.Backend
	hidePartsAppender
	hidePartsReader
	mu        sync.Mutex
	sent      int // packs HeadPack returned
	packReads int
}

func (h *headPackBackend) HeadPack(ctx context.Context, thread, known int64) (backend.Commit, bool, string, error) {
	c, found, err := h.Backend.Head(ctx, thread)
	if err != nil || !found || c.ID == known {
		return c, found, "", err
	}
	pack, err := h.Backend.Pack(ctx, c.ID)
	if pack != "" {
		h.mu.Lock()
		h.sent++
		h.mu.Unlock()
	}
	return c, found, pack, err
}

func (h *headPackBackend) Pack(ctx context.Context, id int64) (string, error) {
	h.mu.Lock()
	h.packReads++
	h.mu.Unlock()
	return h.Backend.Pack(ctx, id)
}

func (h *headPackBackend) counts() (sent, packReads int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, p := h.sent, h.packReads
	h.sent, h.packReads = 0, 0
	return s, p
}

// headOnly hides the HeadPackReader of a headPackBackend.
type headOnly struct {
	*headPackBackend
	hideHeadPack
}

type hideHeadPack struct{}

func (hideHeadPack) HeadPack() {}

// TestReadOfAnotherProcessesCommit: an engine reading a commit that
// another engine (process) wrote gets the head's pack with the head and
// reads no pack on its own; it is sent again only when the head moved,
// and never for the engine's own commits. Without the capability the
// same read costs a Pack read.
func TestReadOfAnotherProcessesCommit(t *testing.T) {
	ctx := context.Background()
	m := memory.New()
	th, err := m.Thread(ctx, "s", "shared", true)
	if err != nil {
		t.Fatal(err)
	}
	hb := &headPackBackend{Backend: m}
	writer, reader := New(hb, Options{}), New(hb, Options{})
	read := func(e *Engine, path string) string {
		t.Helper()
		snap, _, _, err := e.Head(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		ent, ok, err := snap.Get(ctx, path)
		if err != nil || !ok {
			t.Fatalf("Get %s: %v, %v", path, ok, err)
		}
		c, err := snap.Content(ctx, &ent)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	expect := func(what string, wantSent, wantReads int) {
		t.Helper()
		if sent, reads := hb.counts(); sent != wantSent || reads != wantReads {
			t.Errorf("%s: %d packs sent with the head and %d Pack reads, want %d and %d", what, sent, reads, wantSent, wantReads)
		}
	}

	put(t, writer, th.ID, map[string]string{"log.txt": "one\n"})
	hb.counts()
	if got := read(reader, "log.txt"); got != "one\n" {
		t.Fatalf("read %q", got)
	}
	expect("first read of the other's commit", 1, 0)
	read(reader, "log.txt")
	expect("second read of the same head", 0, 0)
	put(t, writer, th.ID, map[string]string{"log.txt": "one\ntwo\n"})
	hb.counts()
	if got := read(reader, "log.txt"); got != "one\ntwo\n" {
		t.Fatalf("read %q after the other's second commit", got)
	}
	expect("read after the head moved", 1, 0)
	read(writer, "log.txt")
	expect("the writer reading its own commit", 0, 0)

	// Without the capability, a new engine reads the head, then its pack.
	plain := New(headOnly{headPackBackend: hb}, Options{})
	if _, ok := backend.Backend(headOnly{}).(backend.HeadPackReader); ok {
		t.Fatal("the HeadPackReader is not hidden")
	}
	hb.counts()
	read(plain, "log.txt")
	if _, reads := hb.counts(); reads == 0 {
		t.Error("without HeadPack a read of a new head read no pack: the test shows nothing")
	}
}
