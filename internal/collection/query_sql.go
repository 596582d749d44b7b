package collection

import (
	"strconv"
	"strings"
)

// Dialect is the SQL dialect a query compiles to.
type Dialect int

// The SQL dialects of the SQL backends.
const (
	// SQLite: json_extract(doc, '$.a.b'), ? placeholders. Needs SQLite
	// 3.23 or later (row values, TRUE).
	SQLite Dialect = iota + 1
	// Postgres: doc->'a'->>'b' on a jsonb column, $N placeholders.
	Postgres
)

func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

// sqlBuilder accumulates SQL text and its bound arguments. User values
// only ever go to args; the text holds placeholders, operators and JSON
// paths built from schema field names.
type sqlBuilder struct {
	d    Dialect
	b    strings.Builder
	args []any
	next int // the number of the next Postgres placeholder
}

func (s *sqlBuilder) w(parts ...string) {
	for _, p := range parts {
		s.b.WriteString(p)
	}
}

// arg binds v and writes its placeholder.
func (s *sqlBuilder) arg(v any) {
	s.args = append(s.args, v)
	if s.d == Postgres {
		s.b.WriteByte('$')
		s.b.WriteString(strconv.Itoa(s.next))
		s.next++
		return
	}
	s.b.WriteByte('?')
}

// checkColumn panics unless col is a plain (optionally qualified) SQL
// identifier: column names come from backend code, never from users.
func checkColumn(col string) {
	ok := col != ""
	for i := 0; i < len(col) && ok; i++ {
		c := col[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || (i > 0 && (c >= '0' && c <= '9' || c == '.'))
	}
	if !ok {
		panic("docs: invalid SQL column name " + strconv.Quote(col))
	}
}

// sqlString quotes s as an SQL string literal. Only schema field names
// reach it; it escapes quotes all the same.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// simpleSeg reports whether a path segment can be written bare in an
// SQLite JSON path.
func simpleSeg(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isIdentStart(s[i]) && !(i > 0 && isDigit(s[i])) {
			return false
		}
	}
	return s != ""
}

// rawExpr is the SQL expression of the JSON value at path: SQL NULL when
// the value is null or absent. In Postgres it is the text form (->> last).
func rawExpr(d Dialect, col, path string) string {
	segs := strings.Split(path, ".")
	if d == Postgres {
		var b strings.Builder
		b.WriteString(col)
		for i, s := range segs {
			if i == len(segs)-1 {
				b.WriteString("->>")
			} else {
				b.WriteString("->")
			}
			b.WriteString(sqlString(s))
		}
		return b.String()
	}
	var b strings.Builder
	b.WriteString("$")
	for _, s := range segs {
		b.WriteByte('.')
		if simpleSeg(s) {
			b.WriteString(s)
		} else {
			b.WriteString(`"` + strings.ReplaceAll(s, `"`, `\"`) + `"`)
		}
	}
	return "json_extract(" + col + ", " + sqlString(b.String()) + ")"
}

// typedExpr is the expression compared and sorted for a field of type typ:
// in SQLite json_extract already yields TEXT, INTEGER/REAL or 0/1; in
// Postgres text is compared in the "C" collation (byte order, as in Go and
// SQLite), numbers as float8 (as float64 in Go), booleans as boolean.
// Datetimes are text in both: documents and query values hold the
// CanonicalDatetime form, whose text order is time order.
func typedExpr(d Dialect, col, path, typ string) string {
	raw := rawExpr(d, col, path)
	if d != Postgres {
		return raw
	}
	switch typ {
	case TypeNumber:
		return "((" + raw + ")::float8)"
	case TypeBoolean:
		return "((" + raw + ")::boolean)"
	}
	return "(" + raw + `) COLLATE "C"`
}

// keyExpr is the key column, in Postgres compared in the "C" collation.
func keyExpr(d Dialect, keyCol string) string {
	if d == Postgres {
		return keyCol + ` COLLATE "C"`
	}
	return keyCol
}

// sqlArg converts a literal to the argument bound for it.
func sqlArg(d Dialect, v Value) any {
	switch v.Kind {
	case KindNumber:
		return v.Num
	case KindBool:
		if d == SQLite {
			if v.Bool {
				return int64(1)
			}
			return int64(0)
		}
		return v.Bool
	}
	return v.Str
}

// SQL compiles the query to an SQL boolean expression over the JSON column
// jsonCol, with every value bound as an argument: where holds placeholders
// only (? for SQLite; $argStart, $argStart+1, … for Postgres) and args
// their values in order. A query without conditions compiles to "TRUE".
//
// The expressions are the ones IndexExprs returns, so an index on a field
// serves the conditions on it. Conditions keep the null semantics of
// Match: "f != v" compiles to the null-safe IS NOT / IS DISTINCT FROM, and
// "f = null" to IS NULL. Datetime comparisons are text comparisons of the
// canonical form, which is why documents must be stored normalized
// (Store.Prepare does it).
//
// jsonCol must be a column name ([A-Za-z_][A-Za-z0-9_.]*); SQL panics
// otherwise, since column names come from code, not from users.
func (q *Query) SQL(d Dialect, jsonCol string, argStart int) (where string, args []any) {
	checkColumn(jsonCol)
	sb := &sqlBuilder{d: d, next: argStart}
	q.sql(sb, jsonCol)
	return sb.b.String(), sb.args
}

func (q *Query) sql(sb *sqlBuilder, col string) {
	if len(q.Conds) == 0 {
		sb.w("TRUE")
		return
	}
	for i := range q.Conds {
		if i > 0 {
			sb.w(" AND ")
		}
		q.Conds[i].sql(sb, col)
	}
}

// condType is the field's type, or for an unchecked query the type its
// values imply.
func (c *Cond) condType() string {
	if c.typ != "" {
		return c.typ
	}
	for _, v := range c.Values {
		switch v.Kind {
		case KindNumber:
			return TypeNumber
		case KindBool:
			return TypeBoolean
		case KindString:
			return TypeString
		}
	}
	return TypeString
}

func (c *Cond) sql(sb *sqlBuilder, col string) {
	d := sb.d
	raw := rawExpr(d, col, c.Field)
	x := typedExpr(d, col, c.Field, c.condType())
	switch c.Op {
	case "=", "!=":
		v := c.Values[0]
		switch {
		case v.Kind == KindNull && c.Op == "=":
			sb.w(raw, " IS NULL")
		case v.Kind == KindNull:
			sb.w(raw, " IS NOT NULL")
		case c.Op == "=":
			sb.w(x, " = ")
			sb.arg(sqlArg(d, v))
		case d == Postgres:
			sb.w(x, " IS DISTINCT FROM ")
			sb.arg(sqlArg(d, v))
		default:
			sb.w(x, " IS NOT ")
			sb.arg(sqlArg(d, v))
		}
	case "IN":
		var vals []Value
		hasNull := false
		for _, v := range c.Values {
			if v.Kind == KindNull {
				hasNull = true
			} else {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			sb.w(raw, " IS NULL")
			return
		}
		if hasNull {
			sb.w("(")
		}
		sb.w(x, " IN (")
		for i, v := range vals {
			if i > 0 {
				sb.w(", ")
			}
			sb.arg(sqlArg(d, v))
		}
		sb.w(")")
		if hasNull {
			sb.w(" OR ", raw, " IS NULL)")
		}
	default:
		sb.w(x, " ", c.Op, " ")
		sb.arg(sqlArg(d, c.Values[0]))
	}
}

// IndexExprs returns, for each of the store's indexes, the index element
// to put in CREATE INDEX … ON table (…, element): the very expression that
// SQL and Page.SQL compare and sort on, so the planner can use the index.
// In Postgres a nullable path sorts NULLS FIRST, as Page orders it.
func (s *Store) IndexExprs(d Dialect, jsonCol string) []string {
	checkColumn(jsonCol)
	var out []string
	for _, path := range s.Indexes {
		f, nullable := s.lookup(path)
		if f == nil {
			continue
		}
		e := "(" + typedExpr(d, jsonCol, path, f.Type) + ")"
		if d == Postgres && nullable {
			e += " NULLS FIRST"
		}
		out = append(out, e)
	}
	return out
}
