package loadtest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel/internal/bench"
)

const (
	// Clients is the number of concurrent clients of each process.
	Clients = 16
	// Shared is the number of shared threads every process writes.
	Shared = 4
)

// The mixes a client process runs.
const (
	// Mixed: 30% of operations on the Shared shared threads, the rest on
	// the client's own thread.
	Mixed = "mixed"
	// Private: the same operations, each on the client's own thread; it
	// separates the cost of conflicts from the capacity of the machine.
	Private = "private"
	// Hot: every operation an append to one shared thread's log.
	Hot = "hot"
)

// validMix reports whether mix is one of Mixed, Private, Hot.
func validMix(mix string) bool { return mix == Mixed || mix == Private || mix == Hot }

// op is operation k of client j of process p: the same in the client that
// makes it and in the check that replays it.
type op struct {
	kind   string // write, edit, append (private); sappend, slot, swrite (shared); read
	path   string
	text   string
	shared int // the shared thread, for s* kinds
}

func opFor(p, j, k int, mix string) op {
	o := opFor1(p, j, k)
	switch mix {
	case Private:
		// The private mix: the same operations, each on the client's own thread.
		switch o.kind {
		case "sappend":
			o.kind = "append"
		case "swrite":
			o.kind, o.path = "write", "own.md"
		case "slot":
			o.kind, o.path, o.text = "append", "slots.txt", "slot\n"
		}
	case Hot:
		return op{kind: "sappend", path: "log.txt", text: fmt.Sprintf("p%d c%d k%d\n", p, j, k)}
	}
	return o
}

func opFor1(p, j, k int) op {
	m := bench.NewMulberry32(uint32(p*Clients+j)*0x9E3779B1 + uint32(k+1)*0x85EBCA77)
	r := m.Next() % 20
	s := int(m.Next() % Shared)
	f := "f" + strconv.Itoa(int(m.Next()%20)) + ".md"
	switch {
	case r < 5:
		return op{kind: "write", path: f, text: content(m, fmt.Sprintf("header p%d c%d k%d\n", p, j, k), 500+int(m.Next()%3500))}
	case r < 8:
		return op{kind: "edit", path: f, text: fmt.Sprintf("edited p%d c%d k%d\n", p, j, k)}
	case r < 10:
		return op{kind: "append", path: "log.txt", text: fmt.Sprintf("p%d c%d k%d\n", p, j, k)}
	case r < 13:
		return op{kind: "sappend", path: "log.txt", text: fmt.Sprintf("p%d c%d k%d\n", p, j, k), shared: s}
	case r < 15:
		return op{kind: "slot", path: "slots.md", shared: p*Clients + j}
	case r < 16:
		return op{kind: "swrite", path: fmt.Sprintf("own/p%d-c%d.md", p, j), text: content(m, fmt.Sprintf("p%d c%d k%d\n", p, j, k), 200+int(m.Next()%1000)), shared: s}
	default:
		return op{kind: "read", path: f, shared: s}
	}
}

// slotThread is the shared thread holding the slot of client id.
func slotThread(id int) int { return id % Shared }

func slotLine(id, n int) string { return fmt.Sprintf("slot %d: %d\n", id, n) }

func content(m *bench.Mulberry32, header string, size int) string {
	var b strings.Builder
	b.WriteString(header)
	for n := 1; b.Len() < size; n++ {
		b.WriteString("line " + strconv.Itoa(n) + ": ")
		for range 50 {
			b.WriteByte("abcdefghijklmnopqrstuvwxyz"[m.Next()%26])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	return s
}

// applyPrivate applies a private op to the model of a client's thread.
func (o op) applyPrivate(files map[string]string) {
	switch o.kind {
	case "write":
		files[o.path] = o.text
	case "edit":
		if c, ok := files[o.path]; ok {
			files[o.path] = o.text + strings.TrimPrefix(c, firstLine(c))
		}
	case "append":
		files[o.path] += o.text
	}
}
