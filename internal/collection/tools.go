package collection

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Tool operations.
const (
	OpGet    = "get"
	OpSet    = "set"
	OpQuery  = "query"
	OpList   = "list"
	OpRemove = "remove"
)

// ToolSpec describes one generated tool: its name, the description a model
// reads, the JSON Schemas (draft 2020-12) of its input and output, and the
// MCP annotations.
type ToolSpec struct {
	// Name is store__<store with - turned into _>__<op>.
	Name        string
	Description string
	// InputSchema and OutputSchema are JSON Schemas of the arguments and
	// the structured result.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// Store and Op say what the tool does: Op is one of the Op* constants.
	Store string
	Op    string
	// ReadOnly, Destructive and Idempotent are the MCP tool annotations
	// readOnlyHint, destructiveHint and idempotentHint.
	ReadOnly, Destructive, Idempotent bool
}

// ToolsFor returns exactly the tools the agent is granted, store by store
// in name order, each in the order get, set, query, list, remove: read
// grants get, query and list; rw adds set, and remove when the store is
// deletable; a shared store never gives set or remove to an agent. An
// unknown agent is an error of kind ErrNotFound.
func (p *Project) ToolsFor(agent string) ([]ToolSpec, error) {
	a, err := p.Agent(agent)
	if err != nil {
		return nil, err
	}
	var out []ToolSpec
	for _, name := range p.StoreNames {
		if access, ok := a.Stores[name]; ok {
			out = append(out, p.Stores[name].Tools(access)...)
		}
	}
	return out, nil
}

// Tools returns the store's tools for an access: get, query and list for
// AccessRead; with AccessRW also set and (when deletable) remove, unless
// the store is shared.
func (s *Store) Tools(access Access) []ToolSpec {
	write := access == AccessRW && !s.Shared
	ops := []string{OpGet}
	if write {
		ops = append(ops, OpSet)
	}
	ops = append(ops, OpQuery, OpList)
	if write && s.Deletable {
		ops = append(ops, OpRemove)
	}
	out := make([]ToolSpec, 0, len(ops))
	for _, op := range ops {
		out = append(out, s.tool(op))
	}
	return out
}

// jobj is a JSON object that keeps its members in order.
type jobj []jkv

type jkv struct {
	k string
	v any
}

func (o jobj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshal(m.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(m.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without the escaping of <, > and &, which would
// make descriptions hard to read in an editor.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func mustJSON(v any) json.RawMessage {
	b, err := marshal(v)
	if err != nil {
		panic("docs: " + err.Error()) // only our own static values reach here
	}
	return b
}

// docSchema is the JSON Schema of a document of the store.
func (s *Store) docSchema() jobj {
	o := objectSchema(s.Fields, s.FieldNames, false)
	return append(jobj{{"title", s.EntityName}}, o...)
}

func objectSchema(fields map[string]*Field, names []string, nullable bool) jobj {
	props := make(jobj, 0, len(names))
	required := []string{}
	for _, n := range names {
		f := fields[n]
		props = append(props, jkv{n, fieldSchema(f)})
		if !f.Nullable {
			required = append(required, n)
		}
	}
	return jobj{{"type", jsonTypes("object", nullable)}, {"properties", props}, {"required", required}, {"additionalProperties", false}}
}

func jsonTypes(t string, nullable bool) any {
	if nullable {
		return []string{t, "null"}
	}
	return t
}

func fieldSchema(f *Field) jobj {
	var o jobj
	switch f.Type {
	case TypeString:
		o = jobj{{"type", jsonTypes("string", f.Nullable)}}
	case TypeNumber:
		o = jobj{{"type", jsonTypes("number", f.Nullable)}}
		if f.Min != nil {
			o = append(o, jkv{"minimum", *f.Min})
		}
		if f.Max != nil {
			o = append(o, jkv{"maximum", *f.Max})
		}
	case TypeBoolean:
		o = jobj{{"type", jsonTypes("boolean", f.Nullable)}}
	case TypeDatetime:
		o = jobj{{"type", jsonTypes("string", f.Nullable)}, {"format", "date-time"}}
	case TypeEnum:
		vals := make([]any, 0, len(f.Values)+1)
		for _, v := range f.Values {
			vals = append(vals, v)
		}
		if f.Nullable {
			vals = append(vals, nil)
		}
		o = jobj{{"type", jsonTypes("string", f.Nullable)}, {"enum", vals}}
	case TypeArray:
		o = jobj{{"type", jsonTypes("array", f.Nullable)}, {"items", fieldSchema(f.Item)}}
	case TypeObject:
		o = objectSchema(f.Fields, f.FieldNames, f.Nullable)
	case TypeRef:
		o = jobj{{"type", jsonTypes("string", f.Nullable)}, {"minLength", 1}}
	}
	desc := f.Description
	if f.Type == TypeRef {
		desc = strings.TrimSpace(desc + " The key of a document of store " + strconv.Quote(f.Store) + ".")
	}
	if desc != "" {
		o = append(jobj{{"description", desc}}, o...)
	}
	return o
}

// describeType renders a field's type for a description: "number 0 to 1",
// "array of string", "string or null".
func describeType(f *Field, depth int) string {
	var t string
	switch f.Type {
	case TypeNumber:
		switch {
		case f.Min != nil && f.Max != nil:
			t = fmt.Sprintf("number %v to %v", *f.Min, *f.Max)
		case f.Min != nil:
			t = fmt.Sprintf("number, at least %v", *f.Min)
		case f.Max != nil:
			t = fmt.Sprintf("number, at most %v", *f.Max)
		default:
			t = "number"
		}
	case TypeDatetime:
		t = "RFC 3339 datetime"
	case TypeEnum:
		t = "one of " + quoteList(f.Values)
	case TypeArray:
		t = "array of " + describeType(f.Item, depth+1)
	case TypeObject:
		if depth > 1 {
			t = "object"
			break
		}
		parts := make([]string, len(f.FieldNames))
		for i, n := range f.FieldNames {
			parts[i] = n + ": " + describeType(f.Fields[n], depth+1)
		}
		t = "object {" + strings.Join(parts, "; ") + "}"
	case TypeRef:
		t = "key of a " + f.Store + " document"
	default:
		t = f.Type
	}
	if f.Nullable {
		t += ", or null"
	}
	return t
}

func (s *Store) fieldList() string {
	parts := make([]string, len(s.FieldNames))
	for i, n := range s.FieldNames {
		parts[i] = n + " (" + describeType(s.Fields[n], 0) + ")"
	}
	return strings.Join(parts, ", ")
}

// keyHelp says how the key is built.
func (s *Store) keyHelp() string {
	var fields, seps []string
	for i, p := range s.key {
		if p.field != "" {
			fields = append(fields, p.field)
		} else if i > 0 && i < len(s.key)-1 {
			seps = append(seps, strconv.Quote(p.lit))
		}
	}
	h := "The key is built from the document as " + s.Key
	if len(seps) > 0 {
		h += " (so " + joinAnd(fields, "and") + " must not contain " + joinAnd(seps, "or") + ")"
	}
	return h + "."
}

// joinAnd renders a, b and c.
func joinAnd(items []string, word string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + word + " " + items[len(items)-1]
}

func (s *Store) what() string {
	return s.EntityName + " documents of store " + s.Name
}

func (s *Store) sharedNote() string {
	if s.Shared {
		return " This store is shared and read-only: every scope sees the same documents."
	}
	return ""
}

// descNote is the definition's own description, as a sentence of its
// own (it may be written without a final period).
func (s *Store) descNote() string {
	d := strings.TrimSpace(s.Description)
	if d == "" {
		return ""
	}
	if !strings.HasSuffix(d, ".") && !strings.HasSuffix(d, "!") && !strings.HasSuffix(d, "?") {
		d += "."
	}
	return " About this store: " + d
}

func (s *Store) ttlHelp() string {
	if s.TTL == nil {
		return ""
	}
	var parts []string
	for _, o := range s.TTL.Overrides {
		parts = append(parts, fmt.Sprintf("%d seconds when %s", o.TTL, o.Condition))
	}
	if s.TTL.Default > 0 {
		parts = append(parts, fmt.Sprintf("%d seconds otherwise", s.TTL.Default))
	} else {
		parts = append(parts, "never otherwise")
	}
	return " Documents expire after " + strings.Join(parts, ", ") + " (the first matching condition wins), counted from their last set."
}

// sortable lists the fields a query may sort on.
func (s *Store) sortable() []string {
	var out []string
	for _, p := range s.leafPaths() {
		if scalar(s.Field(p).Type) {
			out = append(out, p)
		}
	}
	return out
}

// queryExamples builds example where clauses from the store's own fields.
func (s *Store) queryExamples() []string {
	var eq, rng, in, null string
	for _, p := range s.leafPaths() {
		f, nullable := s.lookup(p)
		switch f.Type {
		case TypeString, TypeRef:
			if eq == "" {
				eq = p + " = 'abc'"
			} else if in == "" {
				in = p + " IN ['abc', 'def']"
			}
		case TypeEnum:
			if in == "" && len(f.Values) > 1 {
				in = p + " IN " + "[" + quoteList(f.Values[:2]) + "]"
			} else if eq == "" {
				eq = p + " = " + quoteList(f.Values[:1])
			}
		case TypeNumber:
			if rng == "" {
				v := 0.0
				switch {
				case f.Min != nil && f.Max != nil:
					v = (*f.Min + *f.Max) / 2
				case f.Min != nil:
					v = *f.Min
				case f.Max != nil:
					v = *f.Max
				}
				rng = p + " >= " + strconv.FormatFloat(v, 'g', -1, 64)
			}
		case TypeDatetime:
			if rng == "" {
				rng = p + " > '2026-01-31T09:30:00Z'"
			}
		case TypeBoolean:
			if eq == "" {
				eq = p + " = true"
			}
		}
		if nullable && null == "" && scalar(f.Type) {
			null = p + " = null"
		}
	}
	var ex []string
	switch {
	case eq != "" && rng != "":
		ex = append(ex, eq+" AND "+rng)
	case eq != "":
		ex = append(ex, eq)
	case rng != "":
		ex = append(ex, rng)
	}
	for _, e := range []string{in, null} {
		if e != "" {
			ex = append(ex, e)
		}
	}
	return ex
}

const (
	pagingHelp     = "limit is 1 to 100 (default 20). When more documents follow, next_cursor is set: pass it back as cursor, with the same where and sort, for the next page; it is null on the last page."
	listPagingHelp = "limit is 1 to 100 (default 20). When more documents follow, next_cursor is set: pass it back as cursor for the next page; it is null on the last page."
)

func (s *Store) queryHelp() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Find %s.%s%s\n\n", s.what(), s.descNote(), s.sharedNote())
	b.WriteString("where: conditions `field op value` joined by AND (no OR, NOT or parentheses); empty matches every document.\n")
	b.WriteString("- ops: =, != and IN ['a', 'b'] (any of a list); <, <=, >, >= on numbers and datetimes only.\n")
	b.WriteString("- values: 'single-quoted strings' (write '' for a quote inside), numbers, true, false, null. A datetime is a quoted RFC 3339 string and compares as a point in time.\n")
	b.WriteString("- null: field = null matches null or missing fields; field != v also matches null; <, >, ... never match null.\n")
	var comparable, other []string
	for _, p := range s.leafPaths() {
		if f := s.Field(p); scalar(f.Type) {
			comparable = append(comparable, p+" ("+describeType(f, 2)+")")
		} else {
			other = append(other, p)
		}
	}
	fmt.Fprintf(&b, "- fields (a field inside an object is written with a dot): %s", strings.Join(comparable, ", "))
	if len(other) > 0 {
		fmt.Fprintf(&b, "; %s only with = null or != null", joinAnd(other, "and"))
	}
	b.WriteString(".\n")
	if ex := s.queryExamples(); len(ex) > 0 {
		b.WriteString("- examples: " + strings.Join(ex, " | ") + "\n")
	}
	fmt.Fprintf(&b, "sort: a field, or -field for descending order; the default is the key (%s), and the key breaks ties. null sorts first (last with -field).\n", s.Key)
	b.WriteString(pagingHelp)
	return b.String()
}

func (s *Store) tool(op string) ToolSpec {
	t := ToolSpec{Name: ToolPrefix(s.Name) + op, Store: s.Name, Op: op}
	doc := s.docSchema()
	// A stored document may predate the store's current definition: the
	// read tools return it as it was stored, and say in does_not_fit why
	// it does not fit (DESIGN §3).
	stored := jobj{{"anyOf", []any{doc, jobj{{"type", "object"}, {"description", storedHelp}}}}}
	keyProp := jobj{{"type", "string"}, {"description", "The document's key, " + s.Key + "."}}
	docs := jobj{{"type", "array"}, {"items", stored}}
	misfits := jobj{{"type", "object"}, {"additionalProperties", jobj{{"type", "array"}, {"items", jobj{{"type", "string"}}}}}, {"description", misfitsHelp}}
	cursor := jobj{{"type", []string{"string", "null"}}, {"description", "Pass as cursor to get the next page; null on the last page."}}
	limit := jobj{{"type", "integer"}, {"minimum", 1}, {"maximum", MaxLimit}, {"default", DefaultLimit}, {"description", "Documents per page."}}
	cursorIn := jobj{{"type", "string"}, {"description", "next_cursor of the previous page."}}
	obj := func(props jobj, required ...string) json.RawMessage {
		if required == nil {
			required = []string{}
		}
		return mustJSON(jobj{{"type", "object"}, {"properties", props}, {"required", required}, {"additionalProperties", false}})
	}
	switch op {
	case OpGet:
		t.ReadOnly, t.Idempotent = true, true
		t.Description = fmt.Sprintf("Get one of the %s by its key. %s Returns found: false when there is none.", s.what(), s.keyHelp())
		props := jobj{{"key", keyProp}}
		if s.HistoryVersions > 0 {
			t.Description += fmt.Sprintf(" With history: true it also returns the previous versions, newest first (up to %d are kept).", s.HistoryVersions)
			props = append(props, jkv{"history", jobj{{"type", "boolean"}, {"default", false}, {"description", "Also return the previous versions, newest first."}}})
		}
		t.Description += s.descNote() + s.sharedNote()
		t.InputSchema = obj(props, "key")
		version := jobj{{"type", "object"}, {"properties", jobj{{"version", jobj{{"type", "integer"}}}, {"document", stored}}}, {"required", []string{"version", "document"}}}
		t.OutputSchema = obj(jobj{
			{"found", jobj{{"type", "boolean"}}},
			{"key", jobj{{"type", "string"}}},
			{"version", jobj{{"type", "integer"}}},
			{"document", stored},
			{"does_not_fit", jobj{{"type", "array"}, {"items", jobj{{"type", "string"}}}, {"description", misfitHelp}}},
			{"history", jobj{{"type", "array"}, {"items", version}}},
		}, "found")
	case OpSet:
		t.Destructive = true
		hist := "the replaced document is not kept"
		if s.HistoryVersions > 0 {
			hist = fmt.Sprintf("the previous %d versions are kept in its history", s.HistoryVersions)
		}
		t.Description = fmt.Sprintf("Create or replace one of the %s.%s Pass the whole document: every field is required unless it may be null (then it may be left out), and unknown fields are refused; every problem is reported at once, with its field path. %s Setting a key that exists replaces that document (%s). Datetimes are RFC 3339 and are stored in UTC. Returns the key and the new version.%s\nFields: %s.",
			s.what(), s.descNote(), s.keyHelp(), hist, s.ttlHelp(), s.fieldList())
		t.InputSchema = mustJSON(doc)
		if s.Fields[KeyArg] == nil {
			t.Description += keyHelp
			t.InputSchema = mustJSON(withProp(doc, KeyArg, keyArgSchema))
		}
		t.OutputSchema = obj(jobj{{"key", jobj{{"type", "string"}}}, {"version", jobj{{"type", "integer"}}}}, "key", "version")
	case OpQuery:
		t.ReadOnly, t.Idempotent = true, true
		t.Description = s.queryHelp()
		sorts := []string{}
		for _, p := range s.sortable() {
			sorts = append(sorts, p, "-"+p)
		}
		t.InputSchema = obj(jobj{
			{"where", jobj{{"type", "string"}, {"description", "Conditions joined by AND; examples: " + strings.Join(s.queryExamples(), " | ")}}},
			{"sort", jobj{{"type", "string"}, {"enum", sorts}, {"description", "A field, or -field for descending order; default the key."}}},
			{"limit", limit},
			{"cursor", cursorIn},
		})
		t.OutputSchema = obj(jobj{{"documents", docs}, {"next_cursor", cursor}, {"does_not_fit", misfits}}, "documents", "next_cursor")
	case OpList:
		t.ReadOnly, t.Idempotent = true, true
		t.Description = fmt.Sprintf("List the %s in key order (%s).%s%s %s", s.what(), s.Key, s.descNote(), s.sharedNote(), listPagingHelp)
		t.InputSchema = obj(jobj{{"limit", limit}, {"cursor", cursorIn}})
		t.OutputSchema = obj(jobj{{"documents", docs}, {"next_cursor", cursor}, {"does_not_fit", misfits}}, "documents", "next_cursor")
	case OpRemove:
		t.Destructive, t.Idempotent = true, true
		t.Description = fmt.Sprintf("Remove one of the %s by its key. %s Returns removed: false when there was none.%s", s.what(), s.keyHelp(), s.descNote())
		t.Description += keyHelp
		t.InputSchema = obj(jobj{{"key", keyProp}, {KeyArg, keyArgSchema}}, "key")
		t.OutputSchema = obj(jobj{{"removed", jobj{{"type", "boolean"}}}}, "removed")
	}
	return t
}

const (
	storedHelp  = "A document stored before the store's definition changed, as it was stored; does_not_fit says why it does not fit the current definition."
	misfitHelp  = "Only when the document was stored before the store's definition changed and does not fit it now: what does not fit, with field paths. Setting it again takes the current fields."
	misfitsHelp = "Only when some documents were stored before the store's definition changed and do not fit it now: by key, what does not fit, with field paths."
)

// KeyArg is the optional argument of the set and remove tools that makes a
// call idempotent (satchel.IdempotencyKey). A store with a field of that
// name keeps the field: its set tool then takes no key.
const KeyArg = "idempotency_key"

var keyArgSchema = jobj{{"type", "string"}, {"description", "Optional: a key of your choosing (1 to 128 printable ASCII characters, no spaces) that makes this call safe to retry: the same call again with the same key returns the first result and changes nothing; the same key with different arguments is refused."}}

const keyHelp = " With idempotency_key, a retry (after a lost answer, say) returns the first call's result instead of applying twice."

// withProp returns the object schema o with one more property.
func withProp(o jobj, name string, schema jobj) jobj {
	out := make(jobj, len(o))
	copy(out, o)
	for i, kv := range out {
		if kv.k == "properties" {
			props := append(append(jobj{}, kv.v.(jobj)...), jkv{name, schema})
			out[i] = jkv{"properties", props}
		}
	}
	return out
}
