package collection

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel/internal/bounded"
	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/filerules"
)

// MaxTTL is the longest time to live, in seconds: 100 years.
const MaxTTL = 100 * 365 * 24 * 3600

// LoadProject reads the definitions of the project directory dir:
// dir/stores/*.json and dir/agents/*/agent.json. Either directory may be
// missing (no stores, no agents). Every error of every file is reported at
// once, as one *errs.ValidationError (What "project") whose violations name
// the file (relative to dir, like "stores/research-notes.json"), the field
// path (like "entity.schema.metadata.fields.analyst.type") and what is
// wrong.
//
// A dir that does not exist is an error of kind ErrNotFound.
func LoadProject(dir string) (*Project, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, errs.New(errs.ErrNotFound, "project directory not found: %s", dir)
	}
	return LoadProjectFS(os.DirFS(dir))
}

// LoadProjectFS is LoadProject over any file system, such as an embedded
// one or a testing/fstest.MapFS.
func LoadProjectFS(fsys fs.FS) (*Project, error) {
	l := &loader{fsys: fsys}
	p := &Project{Stores: map[string]*Store{}, Agents: map[string]*Agent{}}
	defined := map[string]bool{} // every store name seen, even in a broken file

	files := l.readDir("stores")
	tools := map[string]string{} // tool prefix -> the store that took it
	var stores []*Store
	for _, e := range files {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		file := "stores/" + e.Name()
		data, ok := l.readFile(file)
		if !ok {
			continue
		}
		s := l.store(file, data)
		if s == nil || s.Name == "" {
			continue
		}
		if defined[s.Name] {
			l.add(file, "name", "two stores are named %q", s.Name)
			continue
		}
		defined[s.Name] = true
		if s.Shared {
			l.shared = append(l.shared, s.Name)
		}
		tp := ToolPrefix(s.Name)
		if other, ok := tools[tp]; ok {
			l.add(file, "name", "store %q gets the same tool names as store %q (%s*): rename one of them", s.Name, other, tp)
			continue
		}
		tools[tp] = s.Name
		stores = append(stores, s)
	}
	storeNames := sortedKeys(defined)
	for _, s := range stores {
		l.checkRefs(s, defined, storeNames)
	}

	for _, e := range l.readDir("agents") {
		if e.Type()&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeSocket|fs.ModeIrregular) != 0 {
			l.skipped = append(l.skipped, fmt.Sprintf("agents/%s: skipped: %s, not a directory", e.Name(), bounded.FileKind(e.Type())))
			continue
		}
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if a := l.agent(e.Name(), defined, storeNames); a != nil {
			p.Agents[a.Name] = a
		}
	}

	if len(l.viol) > 0 {
		return nil, &errs.ValidationError{What: "project", Violations: l.viol}
	}
	for _, s := range stores {
		s.compile()
		p.Stores[s.Name] = s
	}
	p.StoreNames = sortedKeys(p.Stores)
	p.AgentNames = sortedKeys(p.Agents)
	p.Skipped = l.skipped
	p.Warnings = l.warnings
	return p, nil
}

type loader struct {
	fsys     fs.FS
	viol     []errs.Violation
	skipped  []string
	shared   []string // the shared stores
	warnings []string
}

// MaxDefinitionBytes bounds one definition file: a store or an agent.
const MaxDefinitionBytes = 4 << 20

// readFile reads a definition file. A special file (a FIFO would block
// the load forever, a device might never end) is skipped and noted; a
// file over MaxDefinitionBytes is a violation, refused before it is read.
func (l *loader) readFile(file string) ([]byte, bool) {
	fi, err := fs.Stat(l.fsys, file)
	if err != nil {
		l.add(file, "", "cannot read the file: %v", err)
		return nil, false
	}
	if !fi.Mode().IsRegular() {
		l.skipped = append(l.skipped, fmt.Sprintf("%s: skipped: %s, not a regular file", file, bounded.FileKind(fi.Mode())))
		return nil, false
	}
	if fi.Size() > MaxDefinitionBytes {
		l.add(file, "", "the file is %d bytes, over the limit of %d bytes for a definition", fi.Size(), MaxDefinitionBytes)
		return nil, false
	}
	f, err := l.fsys.Open(file)
	if err != nil {
		l.add(file, "", "cannot read the file: %v", err)
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxDefinitionBytes+1))
	if err != nil {
		l.add(file, "", "cannot read the file: %v", err)
		return nil, false
	}
	if len(data) > MaxDefinitionBytes {
		l.add(file, "", "the file is over the limit of %d bytes for a definition", MaxDefinitionBytes)
		return nil, false
	}
	return data, true
}

func (l *loader) add(file, path, format string, args ...any) {
	l.viol = append(l.viol, errs.Violation{File: file, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// readDir lists a directory sorted by name; a missing one is empty.
func (l *loader) readDir(dir string) []fs.DirEntry {
	entries, err := fs.ReadDir(l.fsys, dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.add(dir, "", "cannot read the directory: %v", err)
	}
	return entries
}

func join(p, key string) string {
	if p == "" {
		return key
	}
	return p + "." + key
}

func index(p string, i int) string { return p + "[" + strconv.Itoa(i) + "]" }

// fileCtx checks one definition file.
type fileCtx struct {
	*loader
	file string
}

func (c fileCtx) add(path, format string, args ...any) { c.loader.add(c.file, path, format, args...) }

// object checks that v is an object whose keys are all allowed, reporting
// each unknown key. It returns false when v is not an object.
func (c fileCtx) object(path string, v *jval, what string, allowed ...string) bool {
	if v.kind != jObject {
		c.add(path, "%s must be an object, not %s", what, v.kind)
		return false
	}
	for _, m := range v.obj {
		if !contains(allowed, m.key) {
			c.add(join(path, m.key), "unknown key %q (allowed here: %s)", m.key, strings.Join(allowed, ", "))
		}
	}
	return true
}

func (c fileCtx) str(path string, v *jval) (string, bool) {
	if v.kind != jString {
		c.add(path, "must be a string, not %s", v.kind)
		return "", false
	}
	return v.str, true
}

func (c fileCtx) boolean(path string, v *jval) bool {
	if v.kind != jBool {
		c.add(path, "must be true or false, not %s", v.kind)
		return false
	}
	return v.b
}

// integer checks a whole number in [lo, hi].
func (c fileCtx) integer(path string, v *jval, lo, hi int64, rule string) (int64, bool) {
	if v.kind == jNumber {
		f, err := strconv.ParseFloat(string(v.num), 64)
		if err == nil && f == math.Trunc(f) && f >= float64(lo) && f <= float64(hi) {
			return int64(f), true
		}
	}
	c.add(path, "must be %s, not %s", rule, describeJSON(v))
	return 0, false
}

func describeJSON(v *jval) string {
	switch v.kind {
	case jNumber:
		return string(v.num)
	case jString:
		return strconv.Quote(v.str)
	case jBool:
		return strconv.FormatBool(v.b)
	}
	return v.kind.String()
}

var storeKeys = []string{"$schema", "name", "description", "entity", "key", "schema", "history", "ttl", "deletable", "shared", "indexes"}

// store checks one store file. It returns the store when the file was
// readable enough to know its name (even with violations), else nil.
func (l *loader) store(file string, data []byte) *Store {
	c := fileCtx{l, file}
	root, err := parseJSON(data)
	if err != nil {
		c.add("", "%v", err)
		return nil
	}
	if !c.object("", root, "a store definition", storeKeys...) {
		return nil
	}
	s := &Store{File: file}
	base := strings.TrimSuffix(path.Base(file), ".json")
	if v := root.get("name"); v != nil {
		if name, ok := c.str("name", v); ok {
			switch {
			case !ValidName(name):
				c.add("name", "%q is not a valid store name: %s", name, nameRule)
			case name != base:
				c.add("name", "name %q differs from the file name %q: rename the file to stores/%s.json or remove name", name, base+".json", name)
			default:
				s.Name = name
			}
		}
	} else if ValidName(base) {
		s.Name = base
	} else {
		c.add("", "the file name %q is not a valid store name (%s): rename the file", base+".json", nameRule)
	}
	if v := root.get("$schema"); v != nil {
		c.str("$schema", v)
	}
	if v := root.get("description"); v != nil {
		s.Description, _ = c.str("description", v)
	}

	ent, flatKey, flatSchema := root.get("entity"), root.get("key"), root.get("schema")
	var keyV, schemaV *jval
	var keyPath, schemaPath string
	switch {
	case ent != nil && (flatKey != nil || flatSchema != nil):
		c.add("entity", "give either entity or a top-level key and schema, not both")
	case ent != nil:
		if c.object("entity", ent, "entity", "name", "key", "schema") {
			if v := ent.get("name"); v != nil {
				if n, ok := c.str("entity.name", v); ok {
					if n == "" {
						c.add("entity.name", "must not be empty")
					}
					s.EntityName = n
				}
			}
			keyV, schemaV, keyPath, schemaPath = ent.get("key"), ent.get("schema"), "entity.key", "entity.schema"
			if keyV == nil {
				c.add("entity.key", "missing: the key template, such as \"{id}\", is required")
			}
			if schemaV == nil {
				c.add("entity.schema", "missing: the schema (the document's fields) is required")
			}
		}
	case flatKey != nil || flatSchema != nil:
		keyV, schemaV, keyPath, schemaPath = flatKey, flatSchema, "key", "schema"
		if keyV == nil {
			c.add("key", "missing: a top-level schema needs a top-level key template, such as \"{id}\"")
		}
		if schemaV == nil {
			c.add("schema", "missing: a top-level key needs a top-level schema")
		}
	default:
		c.add("entity", "missing: a store needs entity {\"name\", \"key\", \"schema\"} (or a top-level key and schema)")
	}
	if s.EntityName == "" && s.Name != "" {
		s.EntityName = camel(s.Name)
	}
	s.schemaPath = schemaPath
	// broken are the top-level fields whose definitions are refused: the
	// checks that name a field (key, ttl, indexes) stay quiet about those
	// and check the others, so that every error is reported at once.
	broken := map[string]bool{}
	if schemaV != nil {
		s.Fields, s.FieldNames, _ = c.fieldsOf(schemaPath, schemaV, 0, broken)
	}
	known := func(name string) bool {
		top, _, _ := strings.Cut(name, ".")
		return s.Fields != nil && !broken[top]
	}
	if keyV != nil {
		if k, ok := c.str(keyPath, keyV); ok {
			s.Key = k
			if s.Fields != nil {
				s.key = c.keyTemplate(keyPath, k, s, known)
			}
		}
	}
	if v := root.get("history"); v != nil {
		if c.object("history", v, "history", "versions") {
			if n := v.get("versions"); n != nil {
				h, _ := c.integer("history.versions", n, 0, math.MaxInt32, "a whole number of versions, 0 or more")
				s.HistoryVersions = int(h)
			} else {
				c.add("history.versions", "missing: history needs versions, the number of previous versions to keep")
			}
		}
	}
	if v := root.get("ttl"); v != nil {
		s.TTL = c.ttl(v, s, known)
	}
	if v := root.get("deletable"); v != nil {
		s.Deletable = c.boolean("deletable", v)
	}
	if v := root.get("shared"); v != nil {
		s.Shared = c.boolean("shared", v)
	}
	if v := root.get("indexes"); v != nil {
		s.Indexes = c.indexes(v, s, known)
	}
	return s
}

var commonFieldKeys = []string{"type", "nullable", "description"}

var typeKeys = map[string][]string{
	TypeString:   nil,
	TypeNumber:   {"min", "max"},
	TypeBoolean:  nil,
	TypeDatetime: nil,
	TypeEnum:     {"values"},
	TypeArray:    {"item"},
	TypeObject:   {"fields"},
	TypeRef:      {"store"},
}

// fields checks an object of field definitions. ok is false when any
// field is broken, so checks that depend on the schema can stay quiet.
func (c fileCtx) fields(path string, v *jval, depth int) (map[string]*Field, []string, bool) {
	return c.fieldsOf(path, v, depth, nil)
}

// fieldsOf is fields, adding to broken (when not nil) the names of the
// fields whose definitions are refused.
func (c fileCtx) fieldsOf(path string, v *jval, depth int, broken map[string]bool) (map[string]*Field, []string, bool) {
	if v.kind != jObject {
		c.add(path, "must be an object of field definitions, such as {\"id\": {\"type\": \"string\"}}, not %s", v.kind)
		return nil, nil, false
	}
	if len(v.obj) == 0 {
		c.add(path, "must define at least one field")
		return nil, nil, false
	}
	fields := make(map[string]*Field, len(v.obj))
	names := make([]string, 0, len(v.obj))
	ok := true
	for _, m := range v.obj {
		p := join(path, m.key)
		if !validFieldName(m.key) {
			c.add(p, "%q is not a valid field name: letters, digits, _ and -, starting with a letter or _, at most 64 characters", m.key)
			ok = false
			if broken != nil {
				broken[m.key] = true
			}
			continue
		}
		f, fok := c.field(p, m.val, depth)
		ok = ok && fok
		if !fok && broken != nil {
			broken[m.key] = true
		}
		fields[m.key] = f
		names = append(names, m.key)
	}
	return fields, names, ok
}

// field checks one field definition.
func (c fileCtx) field(path string, v *jval, depth int) (*Field, bool) {
	f := &Field{}
	if v.kind != jObject {
		c.add(path, "a field definition must be an object, such as {\"type\": \"string\"}, not %s", v.kind)
		return f, false
	}
	if depth > 16 {
		c.add(path, "fields are nested deeper than 16 levels")
		return f, false
	}
	tv := v.get("type")
	ok := true
	if tv == nil {
		c.add(join(path, "type"), "missing: a field needs a type (%s)", strings.Join(fieldTypes, ", "))
		ok = false
	} else if t, tok := c.str(join(path, "type"), tv); !tok {
		ok = false
	} else if _, known := typeKeys[t]; !known {
		c.add(join(path, "type"), "unknown type %q (types: %s)", t, strings.Join(fieldTypes, ", "))
		ok = false
	} else {
		f.Type = t
	}
	for _, m := range v.obj {
		if contains(commonFieldKeys, m.key) {
			continue
		}
		if f.Type == "" {
			if !anyTypeHas(m.key) {
				c.add(join(path, m.key), "unknown key %q", m.key)
			}
			continue
		}
		if !contains(typeKeys[f.Type], m.key) {
			if owner := typeWith(m.key); owner != "" {
				c.add(join(path, m.key), "%s is not allowed on %s field (it belongs to %s fields)", m.key, article(f.Type), owner)
			} else {
				allowed := append(append([]string{}, commonFieldKeys...), typeKeys[f.Type]...)
				c.add(join(path, m.key), "unknown key %q (allowed on %s field: %s)", m.key, article(f.Type), strings.Join(allowed, ", "))
			}
			ok = false
		}
	}
	if n := v.get("nullable"); n != nil {
		f.Nullable = c.boolean(join(path, "nullable"), n)
	}
	if d := v.get("description"); d != nil {
		f.Description, _ = c.str(join(path, "description"), d)
	}
	switch f.Type {
	case TypeNumber:
		for _, k := range []string{"min", "max"} {
			n := v.get(k)
			if n == nil {
				continue
			}
			x, err := strconv.ParseFloat(string(n.num), 64)
			if n.kind != jNumber || err != nil || math.IsInf(x, 0) {
				c.add(join(path, k), "must be a number, not %s", describeJSON(n))
				ok = false
				continue
			}
			if k == "min" {
				f.Min = &x
			} else {
				f.Max = &x
			}
		}
		if f.Min != nil && f.Max != nil && *f.Min > *f.Max {
			c.add(join(path, "min"), "min %v is greater than max %v", *f.Min, *f.Max)
			ok = false
		}
	case TypeEnum:
		vals := v.get("values")
		switch {
		case vals == nil:
			c.add(join(path, "values"), "missing: an enum needs values, such as [\"open\", \"done\"]")
			ok = false
		case vals.kind != jArray:
			c.add(join(path, "values"), "must be an array of strings, not %s", vals.kind)
			ok = false
		case len(vals.arr) == 0:
			c.add(join(path, "values"), "must not be empty")
			ok = false
		default:
			f.valueSet = make(map[string]struct{}, len(vals.arr))
			for i, e := range vals.arr {
				s, sok := c.str(index(join(path, "values"), i), e)
				if !sok {
					ok = false
					continue
				}
				if _, dup := f.valueSet[s]; dup {
					c.add(index(join(path, "values"), i), "%q is listed twice", s)
					ok = false
					continue
				}
				f.valueSet[s] = struct{}{}
				f.Values = append(f.Values, s)
			}
		}
	case TypeArray:
		item := v.get("item")
		if item == nil {
			c.add(join(path, "item"), "missing: an array needs item, the definition of its elements, such as {\"type\": \"string\"}")
			ok = false
		} else {
			var iok bool
			f.Item, iok = c.field(join(path, "item"), item, depth+1)
			ok = ok && iok
		}
	case TypeObject:
		fs := v.get("fields")
		if fs == nil {
			c.add(join(path, "fields"), "missing: an object needs fields, its field definitions")
			ok = false
		} else {
			var fok bool
			f.Fields, f.FieldNames, fok = c.fields(join(path, "fields"), fs, depth+1)
			ok = ok && fok
		}
	case TypeRef:
		st := v.get("store")
		if st == nil {
			c.add(join(path, "store"), "missing: a ref needs store, the store whose document keys it holds")
			ok = false
		} else if name, sok := c.str(join(path, "store"), st); sok {
			f.Store = name // checked against the project's stores in checkRefs
		} else {
			ok = false
		}
	}
	return f, ok
}

func anyTypeHas(key string) bool { return typeWith(key) != "" }

func typeWith(key string) string {
	for _, t := range fieldTypes {
		if contains(typeKeys[t], key) {
			return t
		}
	}
	return ""
}

// keyPart is a literal text or a {field} of a key template.
type keyPart struct {
	lit   string
	field string
}

// keyFieldTypes are the types a key template may use.
var keyFieldTypes = []string{TypeString, TypeNumber, TypeBoolean, TypeEnum, TypeRef}

func (c fileCtx) keyTemplate(path, tmpl string, s *Store, known func(string) bool) []keyPart {
	var parts []keyPart
	bad := false
	fail := func(format string, args ...any) {
		c.add(path, format, args...)
		bad = true
	}
	if tmpl == "" {
		fail("must not be empty: a key template names fields, such as \"{id}\"")
		return nil
	}
	rest, pos := tmpl, 1
	nfields := 0
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			parts = append(parts, keyPart{lit: rest})
			break
		}
		if open > 0 {
			parts = append(parts, keyPart{lit: rest[:open]})
		}
		p := pos + len([]rune(rest[:open]))
		if rest[open] == '}' {
			fail("unexpected } at position %d of %q", p, tmpl)
			return nil
		}
		end := strings.IndexAny(rest[open+1:], "{}")
		if end < 0 || rest[open+1+end] == '{' {
			fail("unclosed { at position %d of %q", p, tmpl)
			return nil
		}
		name := rest[open+1 : open+1+end]
		switch f := s.Fields[name]; {
		case name != "" && !known(name):
			bad = true // its definition is refused already
		case name == "":
			fail("empty {} at position %d of %q: write a field name inside", p, tmpl)
		case strings.Contains(name, "."):
			fail("{%s}: key fields must be top-level fields", name)
		case f == nil:
			fail("{%s} names no field of the schema (fields: %s)", name, strings.Join(s.FieldNames, ", "))
		case !contains(keyFieldTypes, f.Type):
			fail("{%s} is %s field: key fields must be string, number, boolean, enum or ref", name, article(f.Type))
		}
		if len(parts) > 0 && parts[len(parts)-1].field != "" {
			fail("{%s}{%s} need literal text between them, such as {%s}:{%s}, or different documents could get one key", parts[len(parts)-1].field, name, parts[len(parts)-1].field, name)
		}
		parts = append(parts, keyPart{field: name})
		nfields++
		pos = p + len([]rune(name)) + 2
		rest = rest[open+end+2:]
	}
	if nfields == 0 && !bad {
		fail("%q uses no field: a key template names fields, such as \"{id}\"", tmpl)
	}
	if bad {
		return nil
	}
	return parts
}

func (c fileCtx) ttl(v *jval, s *Store, known func(string) bool) *TTL {
	const secs = "a whole number of seconds from 1 to 3153600000 (100 years)"
	if v.kind == jNumber {
		n, ok := c.integer("ttl", v, 1, MaxTTL, secs)
		if !ok {
			return nil
		}
		return &TTL{Default: n}
	}
	if v.kind != jObject {
		c.add("ttl", "must be a number of seconds or {\"default\": S, \"override\": [{\"condition\": \"...\", \"ttl\": S}]}, not %s", v.kind)
		return nil
	}
	if !c.object("ttl", v, "ttl", "default", "override") {
		return nil
	}
	t := &TTL{}
	d, o := v.get("default"), v.get("override")
	if d == nil && o == nil {
		c.add("ttl", "needs default, override or both")
	}
	if d != nil {
		t.Default, _ = c.integer("ttl.default", d, 1, MaxTTL, secs)
	}
	if o == nil {
		return t
	}
	if o.kind != jArray {
		c.add("ttl.override", "must be an array of {\"condition\": \"...\", \"ttl\": S}, not %s", o.kind)
		return t
	}
	for i, e := range o.arr {
		p := index("ttl.override", i)
		if !c.object(p, e, "an override", "condition", "ttl") {
			continue
		}
		var ov Override
		if tv := e.get("ttl"); tv != nil {
			ov.TTL, _ = c.integer(p+".ttl", tv, 1, MaxTTL, secs)
		} else {
			c.add(p+".ttl", "missing: an override needs ttl, in seconds")
		}
		cv := e.get("condition")
		if cv == nil {
			c.add(p+".condition", "missing: an override needs a condition, such as \"status = 'done'\"")
			continue
		}
		src, ok := c.str(p+".condition", cv)
		if !ok {
			continue
		}
		ov.Condition = src
		if cond, err := parseTTLCondition(src, s, known); err != nil {
			c.add(p+".condition", "%v", err)
		} else {
			ov.Cond = cond
		}
		t.Overrides = append(t.Overrides, ov)
	}
	return t
}

// parseTTLCondition parses a ttl override condition: exactly one
// condition on a top-level field with =, != or IN.
func parseTTLCondition(src string, s *Store, known func(string) bool) (Cond, error) {
	const forms = "a ttl condition is one of field = 'v', field != 'v' or field IN ['a', 'b'] (numbers and booleans unquoted: n = 5, done = true)"
	q, err := ParseQuery(src)
	if err != nil {
		return Cond{}, err
	}
	switch {
	case len(q.Conds) == 0:
		return Cond{}, errors.New("empty condition: " + forms)
	case len(q.Conds) > 1:
		return Cond{}, errors.New("AND is not allowed: " + forms)
	}
	cond := q.Conds[0]
	if cond.Op != "=" && cond.Op != "!=" && cond.Op != "IN" {
		return Cond{}, fmt.Errorf("operator %s is not allowed: %s", cond.Op, forms)
	}
	if strings.Contains(cond.Field, ".") {
		return Cond{}, fmt.Errorf("%s: %s on a top-level field", cond.Field, forms)
	}
	if known(cond.Field) {
		if err := s.checkCond(&cond); err != nil {
			return Cond{}, err
		}
	}
	return cond, nil
}

func (c fileCtx) indexes(v *jval, s *Store, known func(string) bool) []string {
	if v.kind != jArray {
		c.add("indexes", "must be an array of field names, not %s", v.kind)
		return nil
	}
	var out []string
	seen := make(map[string]bool, len(v.arr))
	for i, e := range v.arr {
		p := index("indexes", i)
		name, ok := c.str(p, e)
		if !ok {
			continue
		}
		if seen[name] {
			c.add(p, "%q is listed twice", name)
			continue
		}
		seen[name] = true
		out = append(out, name)
		if !known(name) {
			continue
		}
		switch f := s.Field(name); {
		case f == nil:
			c.add(p, "%q names no field (fields: %s)", name, strings.Join(s.leafPaths(), ", "))
		case !scalar(f.Type):
			c.add(p, "%q is %s field: only string, number, boolean, datetime, enum and ref fields can be indexed", name, article(f.Type))
		}
	}
	return out
}

// checkRefs checks that every ref names a store of the project.
func (l *loader) checkRefs(s *Store, defined map[string]bool, names []string) {
	c := fileCtx{l, s.File}
	var walk func(path string, f *Field)
	walk = func(path string, f *Field) {
		switch f.Type {
		case TypeRef:
			if f.Store != "" && !defined[f.Store] {
				c.add(join(path, "store"), "no store is named %q%s", f.Store, knownList("stores", names))
			}
		case TypeArray:
			if f.Item != nil {
				walk(join(path, "item"), f.Item)
			}
		case TypeObject:
			for _, n := range f.FieldNames {
				walk(join(join(path, "fields"), n), f.Fields[n])
			}
		}
	}
	for _, n := range s.FieldNames {
		walk(join(s.schemaPath, n), s.Fields[n])
	}
}

var agentKeys = []string{"$schema", "name", "description", "stores", "review", "files"}

func (l *loader) agent(dir string, defined map[string]bool, storeNames []string) *Agent {
	file := "agents/" + dir + "/agent.json"
	c := fileCtx{l, file}
	if _, err := fs.Stat(l.fsys, file); errors.Is(err, fs.ErrNotExist) {
		c.add("", "missing: the agent directory agents/%s/ needs an agent.json", dir)
		return nil
	}
	data, ok := l.readFile(file)
	if !ok {
		return nil
	}
	a := &Agent{Name: dir, Label: dir, Stores: map[string]Access{}, File: file}
	if !ValidName(dir) {
		c.add("", "the directory name %q is not a valid agent name (%s): rename the directory", dir, nameRule)
	}
	root, err := parseJSON(data)
	if err != nil {
		c.add("", "%v", err)
		return nil
	}
	if !c.object("", root, "an agent definition", agentKeys...) {
		return nil
	}
	if v := root.get("$schema"); v != nil {
		c.str("$schema", v)
	}
	if v := root.get("description"); v != nil {
		c.str("description", v)
	}
	if v := root.get("name"); v != nil {
		if label, ok := c.str("name", v); ok && label != "" {
			a.Label = label
		}
	}
	if v := root.get("review"); v != nil {
		a.Review = c.boolean("review", v)
	}
	if v := root.get("stores"); v != nil {
		if v.kind != jObject {
			c.add("stores", "must be an object of store name to \"read\" or \"rw\", not %s", v.kind)
		}
		for _, m := range v.obj {
			p := "stores." + m.key
			if !defined[m.key] {
				c.add(p, "no store is named %q%s", m.key, knownList("stores", storeNames))
			}
			if m.val.kind != jString || (m.val.str != string(AccessRead) && m.val.str != string(AccessRW)) {
				c.add(p, "access must be \"read\" or \"rw\", not %s", describeJSON(m.val))
				continue
			}
			a.Stores[m.key] = Access(m.val.str)
			if m.val.str == string(AccessRW) && contains(l.shared, m.key) {
				l.warnings = append(l.warnings, fmt.Sprintf("%s: %s: \"rw\" on a shared store; agents only read shared stores", file, p))
			}
		}
	}
	if v := root.get("files"); v != nil {
		a.Files = c.files(v)
	}
	return a
}

// files reads an agent's "files": an array of [GLOB, ACCESS] pairs. Each
// problem is reported at its position (files[1][0]), and so is a pair an
// earlier one makes dead.
func (c fileCtx) files(v *jval) filerules.Rules {
	if v.kind != jArray {
		c.add("files", "must be an array of [GLOB, ACCESS] pairs, such as [[\"notes/**\", \"rw\"], [\"**\", \"read\"]], not %s", v.kind)
		return nil
	}
	if len(v.arr) == 0 {
		c.add("files", "must list at least one [GLOB, ACCESS] pair (leave files out for rw on every path)")
		return nil
	}
	rules := filerules.Rules{}
	at := []int{} // the position of each rule in files
	ok := true
	for i, pv := range v.arr {
		p := index("files", i)
		if pv.kind != jArray || len(pv.arr) != 2 || pv.arr[0].kind != jString || pv.arr[1].kind != jString {
			c.add(p, "must be a [GLOB, ACCESS] pair of two strings, not %s", describeJSON(pv))
			ok = false
			continue
		}
		glob, acc := pv.arr[0].str, pv.arr[1].str
		a, known := filerules.ParseAccess(acc)
		if !known {
			c.add(index(p, 1), "unknown access %q: want \"rw\", \"read\" or \"none\"", acc)
			ok = false
		}
		r, err := filerules.NewRule(glob, a)
		if err != nil {
			c.add(index(p, 0), "%s", errMsg(err))
			ok = false
			continue
		}
		rules = append(rules, r)
		at = append(at, i)
	}
	for _, s := range rules.Shadowed() {
		c.add(index("files", at[s.Index]), "[%q, %q] can never match: files[%d] [%q, %q] matches every path it does",
			rules[s.Index].Glob, v.arr[at[s.Index]].arr[1].str, at[s.By], rules[s.By].Glob, v.arr[at[s.By]].arr[1].str)
	}
	if !ok {
		return nil
	}
	return rules
}

// errMsg is an error's message without its kind.
func errMsg(err error) string {
	var e *errs.Error
	if errors.As(err, &e) {
		return e.Msg
	}
	return err.Error()
}
