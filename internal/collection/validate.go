package collection

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"

	sjson "github.com/segmentio/encoding/json"

	"github.com/satchel-dev/satchel/internal/errs"
)

// node is one field of the compiled validator tree: the definition turned
// into what Validate needs at each step, computed once at load.
type node struct {
	typ      string
	nullable bool
	min, max float64 // -Inf / +Inf when unbounded
	values   []string
	set      map[string]struct{} // values as a set, when the loader made one
	item     *node
	fields   []namedNode
	byName   map[string]*node
	store    string
	names    string // "a, b, c": an object's field names, for messages
	hasTime  bool   // a datetime is somewhere at or under this node
}

type namedNode struct {
	name string
	n    *node
}

// compile builds the validator tree of the store's schema.
func (s *Store) compile() {
	s.root = compileObject(s.Fields, s.FieldNames, false)
}

func compileObject(fields map[string]*Field, names []string, nullable bool) *node {
	n := &node{typ: TypeObject, nullable: nullable, byName: make(map[string]*node, len(names)), names: strings.Join(names, ", ")}
	for _, name := range names {
		c := compileField(fields[name])
		n.fields = append(n.fields, namedNode{name, c})
		n.byName[name] = c
		n.hasTime = n.hasTime || c.hasTime
	}
	return n
}

func compileField(f *Field) *node {
	if f.Type == TypeObject {
		return compileObject(f.Fields, f.FieldNames, f.Nullable)
	}
	n := &node{typ: f.Type, nullable: f.Nullable, min: math.Inf(-1), max: math.Inf(1), values: f.Values, set: f.valueSet, store: f.Store}
	if f.Min != nil {
		n.min = *f.Min
	}
	if f.Max != nil {
		n.max = *f.Max
	}
	switch f.Type {
	case TypeArray:
		n.item = compileField(f.Item)
		n.hasTime = n.item.hasTime
	case TypeDatetime:
		n.hasTime = true
	}
	return n
}

// maxViolations bounds the violations one Validate reports; the rest are
// counted in a last one.
const maxViolations = 100

// RefExists reports whether store holds a document with key. Validate calls
// it for every ref value; an error it returns is returned as is.
type RefExists func(store, key string) (bool, error)

// Validate checks the whole document against the store's schema and
// reports every violation, with its field path ("metadata.source",
// "tags[2]"), as one *errs.ValidationError (What "document"):
//
//   - every field must be present, unless it is nullable (absent is null);
//   - null only where nullable; no field the schema does not define;
//   - strings, booleans, numbers (finite, within min and max inclusive),
//     enum values, datetimes (RFC 3339), arrays and objects, all the way
//     down;
//   - a ref must be the key of an existing document of its store, which
//     refExists answers (nil skips that check).
//
// doc is what encoding/json decodes into a map[string]any: numbers may be
// json.Number (json.Decoder.UseNumber, which this package recommends) or
// float64; Go integer types are accepted too. Validate never modifies doc.
func (s *Store) Validate(doc map[string]any, refExists RefExists) error {
	v := validator{refExists: refExists}
	var path [8]seg // deeper documents grow it on the heap
	v.object(path[:0], s.root, doc)
	return v.result()
}

// validateCopy is Validate that also returns, when doc is valid, a copy
// of it normalized as Normalize does, with maps and slices of its own: a
// caller may change doc afterwards without touching the copy. Scalars
// (strings, numbers) are shared, as they are immutable.
func (s *Store) validateCopy(doc map[string]any, refExists RefExists) (map[string]any, error) {
	v := validator{refExists: refExists, copy: true}
	var path [8]seg
	out := v.object(path[:0], s.root, doc)
	if err := v.result(); err != nil {
		return nil, err
	}
	return out, nil
}

func (v *validator) result() error {
	if v.err != nil {
		return v.err
	}
	if v.count > 0 {
		if v.count > maxViolations {
			v.viol = append(v.viol, errs.Violation{Msg: fmt.Sprintf("and %d more violations", v.count-maxViolations)})
		}
		return &errs.ValidationError{What: "document", Violations: v.viol}
	}
	return nil
}

type validator struct {
	refExists RefExists
	// copy makes object and value return a normalized copy of what they
	// check, sharing no map or slice with it (see validateCopy).
	copy  bool
	viol  []errs.Violation
	count int
	err   error // from refExists
}

// seg is one step of a path: a field name, or an index when name is "".
type seg struct {
	name string
	idx  int
}

// pathString is the text of a path: "metadata.source", "tags[2]".
func pathString(path []seg) string {
	var b strings.Builder
	for i, s := range path {
		if s.name == "" {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.idx))
			b.WriteByte(']')
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
	}
	return b.String()
}

// fail records a violation at path.
func (v *validator) fail(path []seg, format string, args ...any) {
	v.count++
	if v.count > maxViolations {
		return
	}
	v.viol = append(v.viol, errs.Violation{Path: pathString(path), Msg: fmt.Sprintf(format, args...)})
}

// jsonType names the JSON type of a decoded value.
func jsonType(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	if _, ok := toFloat(x); ok {
		return "a number"
	}
	if _, ok := x.(json.Number); ok {
		return "a number"
	}
	return fmt.Sprintf("a Go %T (documents hold JSON values only)", x)
}

// object checks the fields of an object node; the caller checked null.
// With v.copy it returns a normalized copy of m (its known fields).
func (v *validator) object(path []seg, n *node, m map[string]any) map[string]any {
	var out map[string]any
	if v.copy {
		// A clone copies the table as it is, which is cheaper than
		// inserting each field; the fields whose values are copied or
		// rewritten are set below.
		out = maps.Clone(m)
	}
	present := 0
	for _, f := range n.fields {
		x, ok := m[f.name]
		if ok {
			present++
		}
		here := append(path, seg{name: f.name})
		switch {
		case !ok && !f.n.nullable:
			v.fail(here, "required field is missing")
		case ok:
			if y, replaced := v.value(here, f.n, x); replaced {
				out[f.name] = y
			}
		}
		if v.err != nil {
			return out
		}
	}
	if present == len(m) {
		return out
	}
	var unknown []string
	for k := range m {
		if _, ok := n.byName[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		v.fail(append(path, seg{name: k}), "unknown field (fields here: %s)", n.names)
	}
	return out
}

// value checks x against n. With v.copy it returns x normalized, in maps
// and slices of its own, and replaced is true when that is not x itself
// (a map, a slice, a datetime rewritten). Without v.copy it returns x.
func (v *validator) value(path []seg, n *node, x any) (y any, replaced bool) {
	if x == nil {
		if !n.nullable {
			v.fail(path, "must not be null (the field is not nullable)")
		}
		return x, false
	}
	if s, ok := x.(string); ok && strings.IndexByte(s, 0) >= 0 {
		v.fail(path, "%s", nulRefusal)
		return x, false
	}
	switch n.typ {
	case TypeString:
		if _, ok := x.(string); !ok {
			v.fail(path, "must be a string, not %s", jsonType(x))
		}
	case TypeBoolean:
		if _, ok := x.(bool); !ok {
			v.fail(path, "must be true or false, not %s", jsonType(x))
		}
	case TypeNumber:
		f, ok := number(x)
		switch {
		case !ok:
			v.fail(path, "must be a number, not %s", jsonType(x))
		case math.IsNaN(f) || math.IsInf(f, 0):
			v.fail(path, "must be a finite number")
		case f < n.min:
			v.fail(path, "must be at least %v, not %v", n.min, x)
		case f > n.max:
			v.fail(path, "must be at most %v, not %v", n.max, x)
		}
	case TypeDatetime:
		s, ok := x.(string)
		switch {
		case !ok:
			v.fail(path, "must be an RFC 3339 datetime (a string such as \"2026-01-31T09:30:00Z\"), not %s", jsonType(x))
		case !v.copy:
			if !validDatetime(s) {
				v.fail(path, "must be an RFC 3339 datetime, such as \"2026-01-31T09:30:00Z\", not %q", s)
			}
		default:
			c, ok := canonicalDatetime(s)
			switch {
			case !ok:
				v.fail(path, "must be an RFC 3339 datetime, such as \"2026-01-31T09:30:00Z\", not %q", s)
			case c != s:
				return c, true
			}
		}
	case TypeEnum:
		s, ok := x.(string)
		if !ok || !n.hasValue(s) {
			what := jsonType(x)
			if ok {
				what = strconv.Quote(s)
			}
			v.fail(path, "must be one of %s, not %s", jsonQuoteList(n.values), what)
		}
	case TypeRef:
		s, ok := x.(string)
		switch {
		case !ok:
			v.fail(path, "must be the key of a document of store %q (a string), not %s", n.store, jsonType(x))
		case s == "":
			v.fail(path, "must be the key of a document of store %q, not empty", n.store)
		case v.refExists != nil:
			found, err := v.refExists(n.store, s)
			if err != nil {
				v.err = err
				return x, false
			}
			if !found {
				v.fail(path, "no document %q in store %q", s, n.store)
			}
		}
	case TypeArray:
		a, ok := x.([]any)
		if !ok {
			v.fail(path, "must be an array, not %s", jsonType(x))
			return x, false
		}
		var out []any
		if v.copy {
			out = make([]any, len(a))
		}
		for i, e := range a {
			y, _ := v.value(append(path, seg{idx: i}), n.item, e)
			if v.copy {
				out[i] = y
			}
			if v.err != nil {
				return x, false
			}
		}
		if v.copy {
			return out, true
		}
	case TypeObject:
		m, ok := x.(map[string]any)
		if !ok {
			v.fail(path, "must be an object, not %s", jsonType(x))
			return x, false
		}
		if v.copy {
			return v.object(path, n, m), true
		}
		v.object(path, n, m)
	}
	return x, false
}

// number converts a document number, checking that a json.Number is a
// JSON number literal (a Go caller can build any json.Number).
func number(x any) (float64, bool) {
	if n, ok := x.(json.Number); ok {
		if !isJSONNumber(string(n)) {
			return 0, false
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return math.Inf(1), true // out of float64's range: refused as not finite
		}
		return f, true
	}
	return toFloat(x)
}

// isJSONNumber reports whether s is a number literal of JSON's grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i == len(s)
}

func jsonQuoteList(vals []string) string {
	parts := make([]string, len(vals))
	for i, s := range vals {
		parts[i] = strconv.Quote(s)
	}
	return strings.Join(parts, ", ")
}

// Normalize returns the document with every datetime rewritten into
// CanonicalDatetime (UTC, nine fractional digits), the form documents are
// stored in so that SQL compares them as text. It never modifies doc: it
// copies the objects and arrays on the way to a datetime that changes, and
// returns doc itself when nothing does. Call it on a valid document.
func (s *Store) Normalize(doc map[string]any) map[string]any {
	out, _ := normObject(s.root, doc, canonicalDatetime)
	return out
}

// Shorten returns the document with every stored datetime in its shortest
// RFC 3339 form in UTC ("2026-01-31T08:30:00Z", the fraction without its
// trailing zeros), the form documents are returned in. Like Normalize it
// never modifies doc; changed is false, and out is doc, when nothing
// changes.
func (s *Store) Shorten(doc map[string]any) (out map[string]any, changed bool) {
	return normObject(s.root, doc, shortDatetime)
}

// HasDatetimes reports whether the store's documents can hold a datetime.
func (s *Store) HasDatetimes() bool { return s.root.hasTime }

func normObject(n *node, m map[string]any, rewrite func(string) (string, bool)) (map[string]any, bool) {
	if !n.hasTime || m == nil {
		return m, false
	}
	var out map[string]any
	for _, f := range n.fields {
		x, ok := m[f.name]
		if !ok || !f.n.hasTime {
			continue
		}
		if y, changed := normValue(f.n, x, rewrite); changed {
			if out == nil {
				out = make(map[string]any, len(m))
				for k, v := range m {
					out[k] = v
				}
			}
			out[f.name] = y
		}
	}
	if out == nil {
		return m, false
	}
	return out, true
}

func normValue(n *node, x any, rewrite func(string) (string, bool)) (any, bool) {
	switch n.typ {
	case TypeDatetime:
		s, ok := x.(string)
		if !ok {
			return x, false
		}
		c, ok := rewrite(s)
		if !ok || c == s {
			return x, false
		}
		return c, true
	case TypeObject:
		m, ok := x.(map[string]any)
		if !ok {
			return x, false
		}
		return normObject(n, m, rewrite)
	case TypeArray:
		a, ok := x.([]any)
		if !ok {
			return x, false
		}
		var out []any
		for i, e := range a {
			if y, changed := normValue(n.item, e, rewrite); changed {
				if out == nil {
					out = append([]any(nil), a...)
				}
				out[i] = y
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	}
	return x, false
}

// hasValue reports whether s is one of an enum's values.
func (n *node) hasValue(s string) bool {
	if n.set != nil {
		_, ok := n.set[s]
		return ok
	}
	return contains(n.values, s)
}

// nulRefusal is the refusal of a string holding U+0000, which PostgreSQL
// cannot store in text or JSON: refused on every backend alike.
const nulRefusal = "must not contain U+0000 (NUL): not every backend can store it"

// CheckNoNUL refuses (ErrInvalidArgument) a request field holding U+0000,
// naming the field.
func CheckNoNUL(field, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return errs.New(errs.ErrInvalidArgument, "%s %s", field, nulRefusal)
	}
	return nil
}

// Misfit says why a stored document does not fit the store's current
// definition, one violation a string ("priority: must be a string, not
// number"), as Validate reports them; nil when it fits. A document stored
// before its store's definition changed (a required field added, a type
// changed, a field removed) is read as it was stored, and Misfit is how a
// reader learns it. Refs are not looked up: a stored document is not
// refused for a document that was removed since.
func (s *Store) Misfit(doc []byte) []string {
	if fits(s.root, doc) {
		return nil
	}
	var m map[string]any
	if _, err := sjson.Parse(doc, &m, sjson.UseNumber); err != nil || m == nil {
		return []string{"not a JSON object"}
	}
	v := validator{}
	var path [8]seg
	v.object(path[:0], s.root, m)
	if v.count == 0 {
		return nil
	}
	if v.count > maxViolations {
		v.viol = append(v.viol, errs.Violation{Msg: fmt.Sprintf("and %d more violations", v.count-maxViolations)})
	}
	out := make([]string, len(v.viol))
	for i, x := range v.viol {
		out[i] = x.String()
	}
	return out
}
