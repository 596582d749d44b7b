package collection

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/satchel-dev/satchel/internal/errs"
)

// MaxQueryLen bounds the text of a where clause, in bytes.
const MaxQueryLen = 8192

// ValueKind is the kind of a literal in a query.
type ValueKind int

// Kinds of query literals.
const (
	KindString ValueKind = iota + 1
	KindNumber
	KindBool
	KindNull
)

// Value is one literal of a condition.
type Value struct {
	Kind ValueKind
	// Str is a string's text. After Store.CheckQuery, a value compared with
	// a datetime field holds the canonical form (CanonicalDatetime).
	Str string
	// Num is a number's value.
	Num float64
	// Bool is a boolean's value.
	Bool bool
	// Pos is the value's 1-based position (in characters) in the query.
	Pos int

	raw string    // a number's text as written
	t   time.Time // the instant, when compared with a datetime field
}

// Cond is one condition `field op value` of a query.
type Cond struct {
	// Field is a field path: a top-level field or a dotted path into object
	// fields ("metadata.source").
	Field string
	// Op is "=", "!=", "IN", "<", "<=", ">" or ">=".
	Op string
	// Values holds the one value of the operator, or the list of IN.
	Values []Value
	// Pos is the condition's 1-based position in the query.
	Pos int

	typ string // the field's type, set by Store.CheckQuery ("" before)
}

// Query is a parsed where clause: conditions that must all hold.
// The zero Query (no conditions) matches every document.
type Query struct {
	Conds []Cond

	checked *Store // the store CheckQuery checked this query against
}

// queryError is the message of every parse and check error of a query.
func queryError(pos int, format string, args ...any) error {
	return errs.New(errs.ErrInvalidArgument, "invalid query at position %d: %s", pos, fmt.Sprintf(format, args...))
}

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tOp
	tLBrack
	tRBrack
	tComma
)

type token struct {
	kind tokKind
	text string // the source text (the unquoted text of a string)
	pos  int    // 1-based character position
	num  float64
}

type lexer struct {
	src string
	off int
}

func (l *lexer) pos(off int) int { return utf8.RuneCountInString(l.src[:off]) + 1 }

func isIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' || c == '-' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }

// next returns the next token, or an error for text no token can start with.
func (l *lexer) next() (token, error) {
	s := l.src
	for l.off < len(s) && (s[l.off] == ' ' || s[l.off] == '\t' || s[l.off] == '\n' || s[l.off] == '\r') {
		l.off++
	}
	start := l.off
	pos := l.pos(start)
	if start == len(s) {
		return token{kind: tEOF, pos: pos}, nil
	}
	c := s[start]
	switch {
	case isIdentStart(c):
		i := start
		for {
			for i < len(s) && isIdentChar(s[i]) {
				i++
			}
			if i+1 < len(s) && s[i] == '.' && isIdentStart(s[i+1]) {
				i++
				continue
			}
			break
		}
		l.off = i
		return token{kind: tIdent, text: s[start:i], pos: pos}, nil
	case c == '\'':
		var b strings.Builder
		i := start + 1
		for {
			j := strings.IndexByte(s[i:], '\'')
			if j < 0 {
				return token{}, queryError(pos, "unterminated string (a string ends with ', and a ' inside it is written '')")
			}
			b.WriteString(s[i : i+j])
			i += j + 1
			if i < len(s) && s[i] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			break
		}
		l.off = i
		return token{kind: tString, text: b.String(), pos: pos}, nil
	case c == '-' || isDigit(c):
		i := start
		if s[i] == '-' {
			i++
		}
		digits := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		ok := i > digits && !(s[digits] == '0' && i-digits > 1)
		if ok && i < len(s) && s[i] == '.' {
			i++
			f := i
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			ok = i > f
		}
		if ok && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
			i++
			if i < len(s) && (s[i] == '+' || s[i] == '-') {
				i++
			}
			e := i
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			ok = i > e
		}
		if ok && i < len(s) && (isIdentChar(s[i]) || s[i] == '.') {
			ok = false
		}
		if !ok {
			end := i
			for end < len(s) && (isIdentChar(s[end]) || s[end] == '.' || s[end] == '+') {
				end++
			}
			return token{}, queryError(pos, "invalid number %q (numbers are written like 42, -3.5 or 1e6)", s[start:end])
		}
		f, err := strconv.ParseFloat(s[start:i], 64)
		if err != nil || math.IsInf(f, 0) {
			return token{}, queryError(pos, "number %s is out of range", s[start:i])
		}
		l.off = i
		return token{kind: tNumber, text: s[start:i], pos: pos, num: f}, nil
	case c == '[':
		l.off++
		return token{kind: tLBrack, text: "[", pos: pos}, nil
	case c == ']':
		l.off++
		return token{kind: tRBrack, text: "]", pos: pos}, nil
	case c == ',':
		l.off++
		return token{kind: tComma, text: ",", pos: pos}, nil
	case c == '=':
		if strings.HasPrefix(s[start:], "==") {
			return token{}, queryError(pos, "use = to compare, not ==")
		}
		l.off++
		return token{kind: tOp, text: "=", pos: pos}, nil
	case c == '!':
		if strings.HasPrefix(s[start:], "!=") {
			l.off += 2
			return token{kind: tOp, text: "!=", pos: pos}, nil
		}
	case c == '<' || c == '>':
		if strings.HasPrefix(s[start:], "<>") {
			return token{}, queryError(pos, "use != for \"not equal\", not <>")
		}
		l.off++
		if l.off < len(s) && s[l.off] == '=' {
			l.off++
		}
		return token{kind: tOp, text: s[start:l.off], pos: pos}, nil
	case c == '"':
		return token{}, queryError(pos, "strings are written in single quotes, like 'text', not double quotes")
	case c == '(' || c == ')':
		return token{}, queryError(pos, "parentheses are not supported: a query is conditions joined by AND")
	}
	r, _ := utf8.DecodeRuneInString(s[start:])
	return token{}, queryError(pos, "unexpected character %q", r)
}

// describe renders a token for "found ..." in a message.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "the end of the query"
	case tString:
		return "'" + strings.ReplaceAll(t.text, "'", "''") + "'"
	}
	return strconv.Quote(t.text)
}

const expectValue = "expected a value (a 'quoted' string, a number, true, false or null)"

// ParseQuery parses a where clause: conditions `field op value` joined by
// AND. It checks the syntax only; Store.CheckQuery (or Store.ParseQuery)
// checks the fields and values against a store. An empty (or blank) clause
// is a query with no conditions. Errors are of kind ErrInvalidArgument and
// give the 1-based character position of the problem.
func ParseQuery(src string) (*Query, error) {
	if len(src) > MaxQueryLen {
		return nil, errs.New(errs.ErrInvalidArgument, "invalid query: longer than %d bytes", MaxQueryLen)
	}
	if !utf8.ValidString(src) {
		return nil, errs.New(errs.ErrInvalidArgument, "invalid query: not valid UTF-8")
	}
	l := &lexer{src: src}
	q := &Query{}
	t, err := l.next()
	if err != nil {
		return nil, err
	}
	if t.kind == tEOF {
		return q, nil
	}
	for {
		c, err := parseCond(l, t)
		if err != nil {
			return nil, err
		}
		q.Conds = append(q.Conds, c)
		t, err = l.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tEOF {
			return q, nil
		}
		if t.kind != tIdent || !strings.EqualFold(t.text, "AND") {
			if t.kind == tIdent && strings.EqualFold(t.text, "OR") {
				return nil, queryError(t.pos, "OR is not supported: use field IN [a, b] for alternatives on one field, or run one query for each")
			}
			return nil, queryError(t.pos, "expected AND or the end of the query, found %s", t.describe())
		}
		if t, err = l.next(); err != nil {
			return nil, err
		}
	}
}

// parseCond parses one condition whose first token is t.
func parseCond(l *lexer, t token) (Cond, error) {
	if t.kind != tIdent || isKeyword(t.text) {
		if t.kind == tIdent && strings.EqualFold(t.text, "NOT") {
			return Cond{}, queryError(t.pos, "NOT is not supported: use != for \"not equal\"")
		}
		return Cond{}, queryError(t.pos, "expected a field name, found %s", t.describe())
	}
	c := Cond{Field: t.text, Pos: t.pos}
	op, err := l.next()
	if err != nil {
		return Cond{}, err
	}
	switch {
	case op.kind == tOp:
		c.Op = op.text
		v, err := parseValue(l)
		if err != nil {
			return Cond{}, err
		}
		c.Values = []Value{v}
		return c, nil
	case op.kind == tIdent && strings.EqualFold(op.text, "IN"):
		c.Op = "IN"
		lb, err := l.next()
		if err != nil {
			return Cond{}, err
		}
		if lb.kind != tLBrack {
			return Cond{}, queryError(lb.pos, "expected [ after IN (a list such as IN ['a', 'b']), found %s", lb.describe())
		}
		for {
			v, err := parseValue(l)
			if err != nil {
				return Cond{}, err
			}
			c.Values = append(c.Values, v)
			sep, err := l.next()
			if err != nil {
				return Cond{}, err
			}
			if sep.kind == tRBrack {
				return c, nil
			}
			if sep.kind != tComma {
				return Cond{}, queryError(sep.pos, "expected , or ] in the IN list, found %s", sep.describe())
			}
		}
	}
	return Cond{}, queryError(op.pos, "expected an operator (=, !=, <, <=, >, >= or IN), found %s", op.describe())
}

func isKeyword(s string) bool {
	for _, k := range [...]string{"AND", "OR", "NOT", "IN", "TRUE", "FALSE", "NULL"} {
		if strings.EqualFold(s, k) {
			return true
		}
	}
	return false
}

func parseValue(l *lexer) (Value, error) {
	t, err := l.next()
	if err != nil {
		return Value{}, err
	}
	switch t.kind {
	case tString:
		return Value{Kind: KindString, Str: t.text, Pos: t.pos}, nil
	case tNumber:
		return Value{Kind: KindNumber, Num: t.num, raw: t.text, Pos: t.pos}, nil
	case tIdent:
		switch {
		case strings.EqualFold(t.text, "true"):
			return Value{Kind: KindBool, Bool: true, Pos: t.pos}, nil
		case strings.EqualFold(t.text, "false"):
			return Value{Kind: KindBool, Pos: t.pos}, nil
		case strings.EqualFold(t.text, "null"):
			return Value{Kind: KindNull, Pos: t.pos}, nil
		}
	}
	return Value{}, queryError(t.pos, "%s, found %s", expectValue, t.describe())
}

// String renders the value as a query literal.
func (v Value) String() string {
	switch v.Kind {
	case KindString:
		return "'" + strings.ReplaceAll(v.Str, "'", "''") + "'"
	case KindNumber:
		if v.raw != "" {
			return v.raw
		}
		return strconv.FormatFloat(v.Num, 'g', -1, 64)
	case KindBool:
		return strconv.FormatBool(v.Bool)
	}
	return "null"
}

// String renders the condition in the query language.
func (c Cond) String() string {
	if c.Op == "IN" {
		parts := make([]string, len(c.Values))
		for i, v := range c.Values {
			parts[i] = v.String()
		}
		return c.Field + " IN [" + strings.Join(parts, ", ") + "]"
	}
	return c.Field + " " + c.Op + " " + c.Values[0].String()
}

// String renders the query in the query language; parsing it again gives
// the same query.
func (q *Query) String() string {
	parts := make([]string, len(q.Conds))
	for i, c := range q.Conds {
		parts[i] = c.String()
	}
	return strings.Join(parts, " AND ")
}

// ParseQuery parses src and checks it against the store (see CheckQuery).
func (s *Store) ParseQuery(src string) (*Query, error) {
	q, err := ParseQuery(src)
	if err != nil {
		return nil, err
	}
	if err := s.CheckQuery(q); err != nil {
		return nil, err
	}
	return q, nil
}

// CheckQuery checks a parsed query against the store's schema and prepares
// it for Match and SQL: every field must exist and be comparable (string,
// number, boolean, datetime, enum or ref; arrays and objects only with
// = null and != null), <, <=, > and >= apply to numbers and datetimes only,
// each value must fit the field's type (an enum value must be one of its
// values), and datetime values are rewritten into CanonicalDatetime.
// Errors are of kind ErrInvalidArgument.
func (s *Store) CheckQuery(q *Query) error {
	for i := range q.Conds {
		if err := s.checkCond(&q.Conds[i]); err != nil {
			return err
		}
	}
	q.checked = s
	return nil
}

func (s *Store) checkCond(c *Cond) error {
	f, _ := s.lookup(c.Field)
	if f == nil {
		return queryError(c.Pos, "unknown field %q (fields: %s)", c.Field, strings.Join(s.leafPaths(), ", "))
	}
	c.typ = f.Type
	if !scalar(f.Type) {
		for _, v := range c.Values {
			if v.Kind != KindNull || c.Op == "IN" {
				return queryError(c.Pos, "%s is %s field: it can only be compared with = null or != null", c.Field, article(f.Type))
			}
		}
		return nil
	}
	ranged := c.Op != "=" && c.Op != "!=" && c.Op != "IN"
	if ranged && f.Type != TypeNumber && f.Type != TypeDatetime {
		return queryError(c.Pos, "%s compares numbers and datetimes only, and %s is %s field", c.Op, c.Field, article(f.Type))
	}
	for i := range c.Values {
		v := &c.Values[i]
		if v.Kind == KindNull {
			if ranged {
				return queryError(v.Pos, "%s cannot compare with null: use %s = null or %s != null", c.Op, c.Field, c.Field)
			}
			continue
		}
		switch f.Type {
		case TypeString, TypeRef:
			if v.Kind != KindString {
				return queryError(v.Pos, "%s is a string field: expected a 'quoted' string or null, found %s", c.Field, v)
			}
		case TypeEnum:
			if v.Kind != KindString || !f.HasValue(v.Str) {
				return queryError(v.Pos, "%s is an enum field: expected one of %s, found %s", c.Field, quoteList(f.Values), v)
			}
		case TypeNumber:
			if v.Kind != KindNumber {
				return queryError(v.Pos, "%s is a number field: expected a number, found %s%s", c.Field, v, unquoted(v, func(s string) bool {
					_, err := strconv.ParseFloat(s, 64)
					return err == nil
				}))
			}
		case TypeBoolean:
			if v.Kind != KindBool {
				return queryError(v.Pos, "%s is a boolean field: expected true or false, found %s%s", c.Field, v, unquoted(v, func(s string) bool { return s == "true" || s == "false" }))
			}
		case TypeDatetime:
			t, ok := time.Time{}, false
			if v.Kind == KindString {
				t, ok = parseDatetime(v.Str)
			}
			if !ok {
				return queryError(v.Pos, "%s is a datetime field: expected a quoted RFC 3339 datetime such as '2026-01-31T09:30:00Z', found %s", c.Field, v)
			}
			v.t, v.Str = t, t.Format(CanonicalDatetime)
		}
	}
	return nil
}

// unquoted is the hint for a number or boolean written as a quoted
// string ('5'): how to write it, " (write it unquoted: 5)", or "".
func unquoted(v *Value, is func(string) bool) string {
	if v.Kind == KindString && is(v.Str) {
		return " (write it unquoted: " + v.Str + ")"
	}
	return ""
}

func article(typ string) string {
	switch typ {
	case TypeArray, TypeObject, TypeEnum:
		return "an " + typ
	}
	return "a " + typ
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// quoteList renders ['a', 'b'] in the query language's quoting.
func quoteList(vals []string) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = Value{Kind: KindString, Str: v}.String()
	}
	return strings.Join(parts, ", ")
}

// Match reports whether doc satisfies every condition. Semantics, the same
// in every backend:
//
//   - An absent field, and every field under an absent or null object, is
//     null.
//   - field = null matches null; field != null matches any other value.
//   - field != v is exactly NOT (field = v): it matches a null field too,
//     so = and != split the documents in two.
//   - field IN [...] matches when field = one of the values (null included,
//     when the list names null).
//   - <, <=, >, >= on a null field are false.
//   - Datetimes compare as instants, numbers as float64, strings byte-wise.
//
// Match works on an unchecked query too, comparing by the kinds of its
// values (datetimes are then plain strings).
func (q *Query) Match(doc map[string]any) bool {
	for i := range q.Conds {
		if !q.Conds[i].match(doc) {
			return false
		}
	}
	return true
}

// lookupPath returns the value at a dotted path, or nil when any step is
// absent, null or not an object.
func lookupPath(doc map[string]any, path string) any {
	var cur any = doc
	for {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		name, rest, more := strings.Cut(path, ".")
		cur = m[name]
		if !more {
			return cur
		}
		path = rest
	}
}

func (c *Cond) match(doc map[string]any) bool {
	v := lookupPath(doc, c.Field)
	switch c.Op {
	case "=":
		return c.equal(v, &c.Values[0])
	case "!=":
		return !c.equal(v, &c.Values[0])
	case "IN":
		for i := range c.Values {
			if c.equal(v, &c.Values[i]) {
				return true
			}
		}
		return false
	}
	cmp, ok := c.compare(v, &c.Values[0])
	if !ok {
		return false
	}
	switch c.Op {
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	case ">=":
		return cmp >= 0
	}
	return false
}

func (c *Cond) equal(v any, val *Value) bool {
	if val.Kind == KindNull {
		return v == nil
	}
	cmp, ok := c.compare(v, val)
	return ok && cmp == 0
}

// compare orders a document value against a literal; ok is false when
// they cannot be compared (null, or different kinds).
func (c *Cond) compare(v any, val *Value) (int, bool) {
	if v == nil {
		return 0, false
	}
	switch val.Kind {
	case KindString:
		s, ok := v.(string)
		if !ok {
			return 0, false
		}
		if c.typ == TypeDatetime {
			t, ok := parseDatetime(s)
			if !ok {
				return 0, false
			}
			return t.Compare(val.t), true
		}
		return strings.Compare(s, val.Str), true
	case KindNumber:
		f, ok := toFloat(v)
		if !ok {
			return 0, false
		}
		switch {
		case f < val.Num:
			return -1, true
		case f > val.Num:
			return 1, true
		}
		return 0, true
	case KindBool:
		b, ok := v.(bool)
		if !ok {
			return 0, false
		}
		return boolCmp(b, val.Bool), true
	}
	return 0, false
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// toFloat converts the number representations a document may hold.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		return float64(n), true
	case int32:
		return float64(n), true
	case int16:
		return float64(n), true
	case int8:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint8:
		return float64(n), true
	}
	return 0, false
}
