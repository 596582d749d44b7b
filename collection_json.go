package satchel

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/satchel-dev/satchel/internal/jsonquote"
	"io"
	"math"
	"slices"
	"strconv"
)

// The JSON of documents. A set encodes each document once, and that text
// is what every read returns; decoding keeps numbers as json.Number (the
// text the caller sent), so a document reads back as it was written, with
// only its datetimes normalized. The encoder is encoding/json's output for
// these values (object members sorted by name, no HTML escaping), written
// by hand for the few types a decoded document holds: it is several times
// faster than reflection, and a set of the memory backend costs little
// more than this encoding.

// decodeJSON decodes data, which must be one JSON value, keeping numbers
// as json.Number.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return v, nil
}

var errTrailing = errors.New("unexpected data after the JSON value")

// appendJSON appends the JSON of v. It handles what decodeJSON and
// copyDoc produce; other values go through encoding/json.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return appendString(b, x), nil
	case json.Number:
		if x == "" {
			return append(b, '0'), nil
		}
		return append(b, x...), nil
	case float64:
		return appendFloat(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendJSON(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSON(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// appendFloat formats f as encoding/json does.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendString quotes s as encoding/json does with HTML escaping off:
// invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029 are escaped.
func appendString(b []byte, s string) []byte { return jsonquote.Append(b, s, false) }

// copyDoc deep-copies a document built in Go, so that the caller may keep
// changing its maps and slices after a set. It also turns the slices and
// maps of concrete types that Go code writes naturally ([]string,
// map[string]string, ...) into the []any and map[string]any that
// validation expects; ok is false for any other type, which the caller
// then converts through encoding/json.
func copyDoc(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, string, json.Number, float64, float32,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return x, true
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := copyDoc(e)
			if !ok {
				return nil, false
			}
			m[k] = c
		}
		return m, true
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			c, ok := copyDoc(e)
			if !ok {
				return nil, false
			}
			a[i] = c
		}
		return a, true
	case []string:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = e
		}
		return a, true
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = e
		}
		return m, true
	case []map[string]any:
		a := make([]any, len(x))
		for i, e := range x {
			c, _ := copyDoc(e)
			a[i] = c
		}
		return a, true
	}
	return nil, false
}

// plainDoc reports whether v holds only what decoding JSON gives (maps,
// []any and scalars), which validation takes as it is.
func plainDoc(v any) bool {
	switch x := v.(type) {
	case nil, bool, string, json.Number, float64,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	case map[string]any:
		for _, e := range x {
			if !plainDoc(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plainDoc(e) {
				return false
			}
		}
		return true
	}
	return false
}
