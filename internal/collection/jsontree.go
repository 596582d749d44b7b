package collection

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// jkind is the JSON type of a jval.
type jkind int

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

func (k jkind) String() string {
	switch k {
	case jNull:
		return "null"
	case jBool:
		return "a boolean"
	case jNumber:
		return "a number"
	case jString:
		return "a string"
	case jArray:
		return "an array"
	default:
		return "an object"
	}
}

// jval is a JSON value that keeps the order of object members, which
// encoding/json's map decoding loses. Definitions are small, so the cost of
// the token API does not matter; declaration order does (it is the order of
// fields in tool schemas and messages).
type jval struct {
	kind jkind
	b    bool
	num  json.Number
	str  string
	arr  []*jval
	obj  []jmember
}

type jmember struct {
	key string
	val *jval
}

// get returns the member named key, or nil.
func (v *jval) get(key string) *jval {
	for _, m := range v.obj {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// smallObject is the size up to which an object's duplicate keys are
// found by a scan of its members; larger ones use a set.
const smallObject = 16

// maxDefDepth bounds the nesting of a definition file, so a hostile file
// cannot exhaust the stack.
const maxDefDepth = 64

// parseJSON decodes one JSON value that must be the whole input. A syntax
// error is reported with its line and column; duplicate keys are errors.
func parseJSON(data []byte) (*jval, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &jparser{dec: dec, data: data}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	off := int(dec.InputOffset())
	for off < len(data) && (data[off] == ' ' || data[off] == '\t' || data[off] == '\n' || data[off] == '\r') {
		off++
	}
	if off < len(data) {
		return nil, fmt.Errorf("invalid JSON at %s: unexpected data after the JSON value", lineCol(data, off))
	}
	return v, nil
}

type jparser struct {
	dec  *json.Decoder
	data []byte
}

// errorf prefixes the decoder's current position as "line L, column C".
func (p *jparser) errorf(format string, args ...any) error {
	off := int(p.dec.InputOffset())
	return fmt.Errorf("invalid JSON at %s: %s", lineCol(p.data, off), fmt.Sprintf(format, args...))
}

func lineCol(data []byte, off int) string {
	if off > len(data) {
		off = len(data)
	}
	line, col := 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return "line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col)
}

func (p *jparser) token() (json.Token, error) {
	t, err := p.dec.Token()
	if err == nil {
		return t, nil
	}
	if errors.Is(err, io.EOF) {
		return nil, p.errorf("unexpected end of input")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return nil, fmt.Errorf("invalid JSON at %s: %s", lineCol(p.data, int(se.Offset)), se.Error())
	}
	return nil, p.errorf("%s", err.Error())
}

func (p *jparser) value(depth int) (*jval, error) {
	if depth > maxDefDepth {
		return nil, p.errorf("nested deeper than %d levels", maxDefDepth)
	}
	t, err := p.token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case nil:
		return &jval{kind: jNull}, nil
	case bool:
		return &jval{kind: jBool, b: t}, nil
	case json.Number:
		return &jval{kind: jNumber, num: t}, nil
	case string:
		return &jval{kind: jString, str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := &jval{kind: jArray}
			for p.dec.More() {
				e, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, e)
			}
			if _, err := p.token(); err != nil { // ']'
				return nil, err
			}
			return v, nil
		case '{':
			v := &jval{kind: jObject}
			var seen map[string]struct{} // for large objects: duplicates in linear time
			for p.dec.More() {
				kt, err := p.token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, p.errorf("expected an object key")
				}
				if len(v.obj) == smallObject {
					seen = make(map[string]struct{}, 2*smallObject)
					for _, m := range v.obj {
						seen[m.key] = struct{}{}
					}
				}
				dup := false
				if seen != nil {
					_, dup = seen[key]
					seen[key] = struct{}{}
				} else {
					dup = v.get(key) != nil
				}
				if dup {
					return nil, p.errorf("duplicate key %q", key)
				}
				e, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.obj = append(v.obj, jmember{key, e})
			}
			if _, err := p.token(); err != nil { // '}'
				return nil, err
			}
			return v, nil
		}
	}
	return nil, p.errorf("unexpected %v", t)
}
