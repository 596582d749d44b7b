package collection

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"

	"github.com/satchel-dev/satchel/internal/errs"
)

// Limits of one page of query or list.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Sort is the order of a query: by a field (Field, a dotted path) or, when
// Field is "", by the key. Desc reverses the order exactly, ties included.
//
// The order is total: ascending puts null (and absent) values first, then
// the values in their order (numbers as float64, strings byte-wise,
// datetimes in time, false before true), and documents with equal values
// in key order. Descending is the same list backwards.
type Sort struct {
	Field string
	Desc  bool
}

// String renders the sort as written in a query: "field", "-field", or ""
// for the key.
func (s Sort) String() string {
	if s.Desc {
		return "-" + s.Field
	}
	return s.Field
}

// ParseSort parses "field" or "-field" (descending); "" is the key order.
// The field must be a string, number, boolean, datetime, enum or ref field
// of the store, or a dotted path to one inside object fields. Errors are of
// kind ErrInvalidArgument.
func (s *Store) ParseSort(src string) (Sort, error) {
	if src == "" {
		return Sort{}, nil
	}
	var st Sort
	st.Field, st.Desc = strings.CutPrefix(src, "-")
	f := s.Field(st.Field)
	if f == nil || !scalar(f.Type) {
		var sortable []string
		for _, p := range s.leafPaths() {
			if scalar(s.Field(p).Type) {
				sortable = append(sortable, p)
			}
		}
		why := "unknown field"
		if f != nil {
			why = st.Field + " is " + article(f.Type) + " field"
		}
		return Sort{}, errs.New(errs.ErrInvalidArgument, "invalid sort %q: %s (sort by one of %s, with - before it for descending order; the default is the key)", src, why, strings.Join(sortable, ", "))
	}
	return st, nil
}

// ParseLimit returns the page size: DefaultLimit when limit is nil, else
// *limit, which must be between 1 and MaxLimit.
func ParseLimit(limit *int) (int, error) {
	if limit == nil {
		return DefaultLimit, nil
	}
	if *limit < 1 || *limit > MaxLimit {
		return 0, errs.New(errs.ErrInvalidArgument, "limit must be between 1 and %d, was %d", MaxLimit, *limit)
	}
	return *limit, nil
}

// Cursor marks where a page ended: the sort value and key of its last
// document. The next page holds the documents after it in the sort order,
// so pages stay correct while documents are added, changed or removed (a
// document that stays in place is shown exactly once; one whose sort value
// changes moves, and is shown where it now is: again, or not at all).
type Cursor struct {
	// Store and Sort tie the cursor to the query it came from.
	Store string
	Sort  string
	// Value is the last document's sort value: nil, a string (datetimes in
	// CanonicalDatetime form), a float64 or a bool; nil for key order.
	Value any
	// Key is the last document's key.
	Key string
}

type cursorJSON struct {
	Store string `json:"st"`
	Sort  string `json:"s,omitempty"`
	Value any    `json:"v,omitempty"`
	Key   string `json:"k"`
}

// EncodeCursor renders a cursor as an opaque string: base64url (without
// padding) of a small JSON object.
func EncodeCursor(c Cursor) string {
	b, err := json.Marshal(cursorJSON{c.Store, c.Sort, c.Value, c.Key})
	if err != nil { // a Value that JSON cannot hold (NaN): sort it as null
		b, _ = json.Marshal(cursorJSON{c.Store, c.Sort, nil, c.Key})
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func badCursor() error {
	return errs.New(errs.ErrInvalidArgument, "invalid cursor: pass next_cursor exactly as the previous page returned it, or no cursor to start from the first page")
}

// DecodeCursor parses a string of EncodeCursor. Errors are of kind
// ErrInvalidArgument.
func DecodeCursor(s string) (Cursor, error) {
	if len(s) > 8192 {
		return Cursor{}, badCursor()
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, badCursor()
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var cj cursorJSON
	if err := dec.Decode(&cj); err != nil || dec.More() {
		return Cursor{}, badCursor()
	}
	c := Cursor{Store: cj.Store, Sort: cj.Sort, Key: cj.Key}
	switch v := cj.Value.(type) {
	case nil, string, bool:
		c.Value = v
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return Cursor{}, badCursor()
		}
		c.Value = f
	default:
		return Cursor{}, badCursor()
	}
	return c, nil
}

// PageRequest is the input of query and list: a where clause, a sort, a
// page size and the cursor of the previous page, as a caller wrote them.
type PageRequest struct {
	Where  string
	Sort   string
	Limit  *int
	Cursor string
}

// Page is a checked PageRequest: what a backend needs to fetch one page.
type Page struct {
	Query *Query
	Sort  Sort
	// Limit is the page size; fetch Limit+1 documents to know whether a
	// next page exists.
	Limit int
	// After is the previous page's cursor, nil on the first page.
	After *Cursor

	store   *Store
	sortTyp string // the sort field's type
	nullOK  bool   // the sort value may be null
}

// Page checks a request against the store. Errors are of kind
// ErrInvalidArgument.
func (s *Store) Page(req PageRequest) (*Page, error) {
	for _, f := range [][2]string{{"where", req.Where}, {"sort", req.Sort}, {"cursor", req.Cursor}} {
		if err := CheckNoNUL(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	q, err := s.ParseQuery(req.Where)
	if err != nil {
		return nil, err
	}
	st, err := s.ParseSort(req.Sort)
	if err != nil {
		return nil, err
	}
	limit, err := ParseLimit(req.Limit)
	if err != nil {
		return nil, err
	}
	p := &Page{Query: q, Sort: st, Limit: limit, store: s}
	if st.Field != "" {
		var f *Field
		f, p.nullOK = s.lookup(st.Field)
		p.sortTyp = f.Type
	}
	if req.Cursor != "" {
		c, err := DecodeCursor(req.Cursor)
		if err != nil {
			return nil, err
		}
		if v, _ := c.Value.(string); strings.IndexByte(c.Key, 0) >= 0 || strings.IndexByte(v, 0) >= 0 {
			return nil, CheckNoNUL("cursor", "\x00")
		}
		if c.Store != s.Name || c.Sort != st.String() || !p.fits(c.Value) {
			return nil, errs.New(errs.ErrInvalidArgument, "invalid cursor: it belongs to another store or sort order; pass the same sort as the page it came from, or no cursor to start again")
		}
		p.After = &c
	}
	return p, nil
}

// fits reports whether a cursor value has the sort field's type.
func (p *Page) fits(v any) bool {
	if v == nil {
		return p.Sort.Field == "" || p.nullOK
	}
	switch p.sortTyp {
	case TypeNumber:
		_, ok := v.(float64)
		return ok
	case TypeBoolean:
		_, ok := v.(bool)
		return ok
	case TypeDatetime:
		s, ok := v.(string)
		return ok && isCanonicalDatetime(s)
	case "":
		return false
	}
	_, ok := v.(string)
	return ok
}

// sortValue is a document's sort value in the form a Cursor holds.
func (p *Page) sortValue(doc map[string]any) any {
	if p.Sort.Field == "" {
		return nil
	}
	v := lookupPath(doc, p.Sort.Field)
	switch p.sortTyp {
	case TypeNumber:
		if f, ok := toFloat(v); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
		return nil
	case TypeDatetime:
		if s, ok := v.(string); ok {
			if c, ok := canonicalDatetime(s); ok {
				return c
			}
		}
		return nil
	case TypeBoolean:
		if b, ok := v.(bool); ok {
			return b
		}
		return nil
	}
	if s, ok := v.(string); ok {
		return s
	}
	return nil
}

// Cursor returns the cursor of a page that ends with the document (key,
// doc): the next_cursor to hand back when more documents follow.
func (p *Page) Cursor(key string, doc map[string]any) string {
	return EncodeCursor(Cursor{Store: p.store.Name, Sort: p.Sort.String(), Value: p.sortValue(doc), Key: key})
}

// compareValues orders two sort values: nil first, then by value.
func compareValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch a := a.(type) {
	case float64:
		b, _ := b.(float64)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	case bool:
		b, _ := b.(bool)
		return boolCmp(a, b)
	case string:
		b, _ := b.(string)
		return strings.Compare(a, b)
	}
	return 0
}

// compareRow orders (value a, key ka) against (value b, key kb) in the
// page's order.
func (p *Page) compareRow(a any, ka string, b any, kb string) int {
	c := compareValues(a, b)
	if c == 0 {
		c = strings.Compare(ka, kb)
	}
	if p.Sort.Desc {
		return -c
	}
	return c
}

// Compare orders two documents in the page's sort order (negative when a
// comes first); sort.Slice and slices.SortFunc can use it.
func (p *Page) Compare(keyA string, docA map[string]any, keyB string, docB map[string]any) int {
	return p.compareRow(p.sortValue(docA), keyA, p.sortValue(docB), keyB)
}

// Match reports whether the document belongs to this page or a later
// one: it matches the query and comes after the cursor. A backend that
// evaluates in Go (the memory backend) keeps the documents that Match,
// sorts them with Compare and takes the first Limit.
func (p *Page) Match(key string, doc map[string]any) bool {
	if !p.Query.Match(doc) {
		return false
	}
	if p.After == nil {
		return true
	}
	return p.compareRow(p.sortValue(doc), key, p.After.Value, p.After.Key) > 0
}

// SQL compiles the page for a table with the JSON column jsonCol and the
// key column keyCol: the WHERE expression (the query AND the keyset
// condition of the cursor), the ORDER BY list, and the arguments of the
// placeholders (numbered from argStart in Postgres). Append
// "LIMIT Limit+1" to learn whether a next page exists. The order matches
// Compare: ascending puts nulls first (Postgres is told NULLS FIRST), and
// the key breaks ties; in Postgres the key compares in the "C" collation,
// so declare the key column COLLATE "C" for its index to serve the order.
func (p *Page) SQL(d Dialect, jsonCol, keyCol string, argStart int) (where, orderBy string, args []any) {
	checkColumn(jsonCol)
	checkColumn(keyCol)
	sb := &sqlBuilder{d: d, next: argStart}
	p.Query.sql(sb, jsonCol)
	if p.After != nil {
		sb.w(" AND ")
		p.keyset(sb, jsonCol, keyCol)
	}
	key := keyExpr(d, keyCol)
	dir := " ASC"
	if p.Sort.Desc {
		dir = " DESC"
	}
	if p.Sort.Field == "" {
		orderBy = key + dir
	} else {
		x := typedExpr(d, jsonCol, p.Sort.Field, p.sortTyp)
		nulls := ""
		if d == Postgres && p.nullOK {
			nulls = " NULLS FIRST"
			if p.Sort.Desc {
				nulls = " NULLS LAST"
			}
		}
		orderBy = x + dir + nulls + ", " + key + dir
	}
	return sb.b.String(), orderBy, sb.args
}

// keyset writes the condition "after the cursor" of the page's order.
func (p *Page) keyset(sb *sqlBuilder, col, keyCol string) {
	d, c := sb.d, p.After
	key := keyExpr(d, keyCol)
	gt := " > "
	if p.Sort.Desc {
		gt = " < "
	}
	if p.Sort.Field == "" {
		sb.w(key, gt)
		sb.arg(c.Key)
		return
	}
	x := typedExpr(d, col, p.Sort.Field, p.sortTyp)
	raw := rawExpr(d, col, p.Sort.Field)
	var v Value
	switch cv := c.Value.(type) {
	case nil:
		// Nulls come first ascending, last descending.
		if p.Sort.Desc {
			sb.w("(", raw, " IS NULL AND ", key, gt)
			sb.arg(c.Key)
			sb.w(")")
		} else {
			sb.w("((", raw, " IS NULL AND ", key, gt)
			sb.arg(c.Key)
			sb.w(") OR ", raw, " IS NOT NULL)")
		}
		return
	case float64:
		v = Value{Kind: KindNumber, Num: cv}
	case bool:
		v = Value{Kind: KindBool, Bool: cv}
	case string:
		v = Value{Kind: KindString, Str: cv}
	}
	orNull := p.Sort.Desc && p.nullOK
	if orNull {
		sb.w("(")
	}
	sb.w("(", x, ", ", key, ")", gt, "(")
	sb.arg(sqlArg(d, v))
	sb.w(", ")
	sb.arg(c.Key)
	sb.w(")")
	if orNull {
		sb.w(" OR ", raw, " IS NULL)")
	}
}
