package collection

import (
	"strconv"
)

// fits is the fast path of Misfit: it reads a stored document's JSON in
// place, without decoding it, and reports true only when the document
// surely fits the object node root as Validate would judge it. Whatever it
// is not sure of (an escape in a string, a number it would have to round,
// a document that does not fit) is false, and Misfit then decodes and
// validates the document to say why. Reads check every document they
// return, so this keeps the check a fraction of a read
// (BenchmarkMisfitW2, decision 0123).
func fits(root *node, doc []byte) bool {
	f := fitter{b: doc}
	if !f.object(root) {
		return false
	}
	f.space()
	return f.i == len(f.b)
}

type fitter struct {
	b []byte
	i int
}

func (f *fitter) space() {
	for f.i < len(f.b) {
		switch f.b[f.i] {
		case ' ', '\t', '\n', '\r':
			f.i++
		default:
			return
		}
	}
}

// next skips spaces and returns the next byte, 0 at the end.
func (f *fitter) next() byte {
	f.space()
	if f.i >= len(f.b) {
		return 0
	}
	return f.b[f.i]
}

// str reads a string without escapes and returns its bytes.
func (f *fitter) str() ([]byte, bool) {
	if f.next() != '"' {
		return nil, false
	}
	start := f.i + 1
	for j := start; j < len(f.b); j++ {
		switch c := f.b[j]; {
		case c == '"':
			f.i = j + 1
			return f.b[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

func (f *fitter) literal(lit string) bool {
	if len(f.b)-f.i < len(lit) || string(f.b[f.i:f.i+len(lit)]) != lit {
		return false
	}
	f.i += len(lit)
	return true
}

func (f *fitter) object(n *node) bool {
	if len(n.fields) > 64 || f.next() != '{' {
		return false
	}
	f.i++
	var seen uint64
	if f.next() == '}' {
		f.i++
	} else {
		for {
			name, ok := f.str()
			if !ok || f.next() != ':' {
				return false
			}
			f.i++
			idx := -1
			for k := range n.fields {
				if string(name) == n.fields[k].name {
					idx = k
					break
				}
			}
			if idx < 0 || seen&(1<<idx) != 0 || !f.value(n.fields[idx].n) {
				return false // an unknown field, a duplicate, a value that does not fit
			}
			seen |= 1 << idx
			c := f.next()
			f.i++
			if c == '}' {
				break
			}
			if c != ',' {
				return false
			}
		}
	}
	for k, fl := range n.fields {
		if !fl.n.nullable && seen&(1<<k) == 0 {
			return false
		}
	}
	return true
}

func (f *fitter) value(n *node) bool {
	switch f.next() {
	case 'n':
		return n.nullable && f.literal("null")
	case 't':
		return n.typ == TypeBoolean && f.literal("true")
	case 'f':
		return n.typ == TypeBoolean && f.literal("false")
	case '"':
		s, ok := f.str()
		if !ok {
			return false
		}
		switch n.typ {
		case TypeString:
			return true
		case TypeRef:
			return len(s) > 0
		case TypeDatetime:
			return validDatetime(string(s))
		case TypeEnum:
			return n.hasValue(string(s))
		}
		return false
	case '[':
		if n.typ != TypeArray {
			return false
		}
		f.i++
		if f.next() == ']' {
			f.i++
			return true
		}
		for {
			if !f.value(n.item) {
				return false
			}
			c := f.next()
			f.i++
			if c == ']' {
				return true
			}
			if c != ',' {
				return false
			}
		}
	case '{':
		return n.typ == TypeObject && f.object(n)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if n.typ != TypeNumber {
			return false
		}
		start := f.i
		for f.i < len(f.b) && (f.b[f.i] >= '0' && f.b[f.i] <= '9' || f.b[f.i] == '-' || f.b[f.i] == '.') {
			f.i++
		}
		num := f.b[start:f.i]
		if len(num) > 15 || !isJSONNumber(string(num)) {
			return false // an exponent, or digits a float64 would round: decoded instead
		}
		if n.min > -1e300 || n.max < 1e300 {
			x, err := strconv.ParseFloat(string(num), 64)
			return err == nil && x >= n.min && x <= n.max
		}
		return true
	}
	return false
}
