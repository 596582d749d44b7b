package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// oversizedError is an incoming message over the transport's bound
// (MaxMessageBytes: satchel serve's --max-request-bytes). It is answered
// with a JSON-RPC error for its id, or id null when the id could not be
// read, and the session goes on.
type oversizedError struct {
	id    []byte // the JSON of the message's id (a number or a string); nil: unknown
	size  int64  // the message's bytes
	limit int64
}

func (e *oversizedError) Error() string {
	return fmt.Sprintf("request of %s is over --max-request-bytes %s; write it in parts with append_file", sizeText(e.size, false), sizeText(e.limit, true))
}

// response is the line that answers the message.
func (e *oversizedError) response() []byte {
	return errorLine(e.id, jsonrpc.CodeInvalidRequest, e.Error())
}

// sizeText writes n bytes in the largest binary unit it reaches, with one
// decimal ("10.0 MiB"), or none when whole is set and n is a whole number
// of that unit ("8 MiB"); under 1 KiB, in bytes.
func sizeText(n int64, whole bool) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	u, unit := int64(1<<10), units[0]
	for _, next := range units[1:] {
		if n < u<<10 {
			break
		}
		u, unit = u<<10, next
	}
	if whole && n%u == 0 {
		return fmt.Sprintf("%d %s", n/u, unit)
	}
	return fmt.Sprintf("%.1f %s", float64(n)/float64(u), unit)
}

// maxIDBytes bounds the id idFinder keeps: a longer one is not read.
const maxIDBytes = 256

// idFinder reads the top-level "id" of a JSON object fed to it in
// pieces, keeping nothing of the rest: the id of a message too large to
// hold. It checks no syntax; what it returns is checked to be the JSON
// of a string or a number.
type idFinder struct {
	depth           int
	inString, esc   bool
	state           int // at the top level: what the next token is (below)
	key             []byte
	keyLong         bool
	isID            bool
	val             []byte
	valBad, invalid bool
	found           []byte
}

const (
	wantKey = iota
	inKey
	wantColon
	inValue
)

// feed scans the next piece of the object.
func (f *idFinder) feed(p []byte) {
	for _, b := range p {
		f.byte(b)
	}
}

func (f *idFinder) byte(b byte) {
	capture := f.depth == 1 && f.state == inValue && f.isID
	if f.inString {
		switch {
		case f.esc:
			f.esc = false
		case b == '\\':
			f.esc = true
		case b == '"':
			f.inString = false
		}
		if f.depth == 1 && f.state == inKey {
			if !f.inString {
				f.state = wantColon
				return
			}
			if len(f.key) < 8 {
				f.key = append(f.key, b)
			} else {
				f.keyLong = true
			}
		}
		if capture {
			f.keep(b)
		}
		return
	}
	switch b {
	case '"':
		f.inString = true
		if f.depth == 1 && f.state == wantKey {
			f.state, f.key, f.keyLong = inKey, f.key[:0], false
			return
		}
		if capture {
			f.keep(b)
		}
	case '{', '[':
		if capture {
			f.valBad = true // an id is a string or a number
		}
		f.depth++
		if f.depth == 1 {
			if b != '{' {
				f.invalid = true
			}
			f.state = wantKey
		}
	case '}', ']':
		if f.depth == 1 {
			f.endValue()
		}
		f.depth--
	case ':':
		if f.depth == 1 && f.state == wantColon {
			f.state = inValue
			f.isID = !f.keyLong && string(f.key) == "id"
			f.val, f.valBad = f.val[:0], false
		}
	case ',':
		if f.depth == 1 {
			f.endValue()
			f.state = wantKey
		}
	case ' ', '\t', '\r', '\n':
	default:
		if capture {
			f.keep(b)
		}
	}
}

func (f *idFinder) keep(b byte) {
	if len(f.val) >= maxIDBytes {
		f.valBad = true
		return
	}
	f.val = append(f.val, b)
}

// endValue ends the value of a top-level member.
func (f *idFinder) endValue() {
	if f.state == inValue && f.isID && !f.valBad && len(f.val) > 0 {
		f.found = append([]byte(nil), f.val...)
	}
	f.isID = false
}

// id returns the JSON of the id found, or nil: none, one that is not a
// string or a number, or the value fed was not an object.
func (f *idFinder) id() []byte {
	if f.invalid || f.found == nil {
		return nil
	}
	var v any
	if json.Unmarshal(f.found, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		if _, err := jsonrpc.MakeID(v); err != nil {
			return nil
		}
		return f.found
	}
	return nil
}
