package collection

import (
	"github.com/satchel-dev/satchel/internal/filerules"
	"sort"
	"strings"

	"github.com/satchel-dev/satchel/internal/errs"
)

// Field types of an entity schema.
const (
	TypeString   = "string"
	TypeNumber   = "number"
	TypeBoolean  = "boolean"
	TypeDatetime = "datetime"
	TypeEnum     = "enum"
	TypeArray    = "array"
	TypeObject   = "object"
	TypeRef      = "ref"
)

// fieldTypes lists the types in the order messages name them.
var fieldTypes = []string{TypeString, TypeNumber, TypeBoolean, TypeDatetime, TypeEnum, TypeArray, TypeObject, TypeRef}

// MaxNameLen is the longest store name: "store__" + 48 + "__remove" is 63,
// so every tool name fits the 64 characters that model APIs allow.
const MaxNameLen = 48

// Store is one loaded store definition (stores/<name>.json). A Store is
// immutable after LoadProject returns it and safe for concurrent use.
type Store struct {
	// Name is the store's name, equal to its file name without ".json".
	Name string
	// EntityName names one document ("ResearchNote"); it defaults to the
	// store name in CamelCase.
	EntityName string
	// Key is the key template, such as "{company_id}:{topic}".
	Key string
	// Description is the optional "description" of the definition (an
	// extension of ours): it is added to the tool descriptions.
	Description string
	// Fields are the top-level fields of the entity schema; FieldNames
	// lists them in declaration order.
	Fields     map[string]*Field
	FieldNames []string
	// HistoryVersions is how many previous versions are kept per document.
	HistoryVersions int
	// TTL is the expiry rule, or nil when documents never expire.
	TTL *TTL
	// Deletable registers the remove tool.
	Deletable bool
	// Shared makes one collection that every scope reads; agents never
	// write to it.
	Shared bool
	// Indexes are the field paths (a top-level field, or a dotted path into
	// object fields) that queries should find through an index.
	Indexes []string
	// File is the definition's path relative to the project directory,
	// such as "stores/research-notes.json".
	File string

	key        []keyPart // the parsed Key
	root       *node     // the compiled validator of the entity schema
	schemaPath string    // "entity.schema" or "schema", for messages
}

// Field is the definition of one field of an entity schema.
type Field struct {
	// Type is one of the Type* constants.
	Type string
	// Nullable fields may be null or absent; others must be present.
	Nullable bool
	// Description is the optional "description" (an extension of ours),
	// copied into the tools' JSON Schemas.
	Description string
	// Min and Max bound a number, inclusively; nil means unbounded.
	Min, Max *float64
	// Values are the allowed strings of an enum, in declaration order.
	Values   []string
	valueSet map[string]struct{} // Values as a set, made by the loader
	// Item is the definition of an array's elements.
	Item *Field
	// Fields are an object's fields; FieldNames lists them in declaration
	// order.
	Fields     map[string]*Field
	FieldNames []string
	// Store is the store a ref points into: a ref holds the key of a
	// document of that store.
	Store string
}

// TTL is a store's expiry rule: the first override whose condition matches
// a document gives its time to live, else Default. Times are in seconds; a
// Default of 0 means documents that match no override never expire.
type TTL struct {
	Default   int64
	Overrides []Override
}

// Override is one entry of ttl.override.
type Override struct {
	// Condition is the condition as written, such as "status = 'done'".
	Condition string
	// Cond is the parsed condition: one field, and =, != or IN.
	Cond Cond
	// TTL is the time to live in seconds of a matching document.
	TTL int64
}

// Access is what an agent may do with a store.
type Access string

// The two access words of agent.json.
const (
	// AccessRead grants get, query and list.
	AccessRead Access = "read"
	// AccessRW adds set and remove (remove only on a deletable store, and
	// neither on a shared one).
	AccessRW Access = "rw"
)

// Agent is one loaded agents/<name>/agent.json.
type Agent struct {
	// Name identifies the agent: its directory name.
	Name string
	// Label is the display label (agent.json's "name"); it defaults to Name.
	Label string
	// Stores maps each granted store to its access.
	Stores map[string]Access
	// Files are the agent's file rules (agent.json's "files"); nil when
	// it has none (every path rw).
	Files filerules.Rules
	// File is the definition's path relative to the project directory.
	File string
	// Review makes the agent's changes wait for review (agent.json's
	// "review": true): its sessions and runs never change their thread
	// directly (satchel.ForReview).
	Review bool
}

// Project is every store and agent definition of a project directory.
type Project struct {
	// Stores maps a name to its store; StoreNames lists them sorted.
	Stores     map[string]*Store
	StoreNames []string
	// Agents maps a name to its agent; AgentNames lists them sorted.
	Agents     map[string]*Agent
	AgentNames []string
	// Skipped says, one line each, which entries of stores/ and agents/
	// were not read: special files such as FIFOs.
	Skipped []string
	// Warnings are problems that do not stop the load, one a line as
	// "FILE: PATH: message", such as an "rw" grant on a shared store.
	Warnings []string
}

// Store returns the store called name, or an error of kind ErrNotFound.
func (p *Project) Store(name string) (*Store, error) {
	if s, ok := p.Stores[name]; ok {
		return s, nil
	}
	return nil, errs.New(errs.ErrNotFound, "store %q not found%s", name, knownList("stores", p.StoreNames))
}

// Agent returns the agent called name, or an error of kind ErrNotFound.
func (p *Project) Agent(name string) (*Agent, error) {
	if a, ok := p.Agents[name]; ok {
		return a, nil
	}
	return nil, errs.New(errs.ErrNotFound, "agent %q not found%s", name, knownList("agents", p.AgentNames))
}

// knownList renders " (stores: a, b)" for a message, or " (no stores are defined)".
func knownList(what string, names []string) string {
	if len(names) == 0 {
		return " (no " + what + " are defined)"
	}
	return " (" + what + ": " + strings.Join(names, ", ") + ")"
}

// ValidName reports whether name is a valid store or agent name: lowercase
// letters, digits, '-' and '_', starting with a letter, at most MaxNameLen
// characters.
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameLen || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

const nameRule = "a name is lowercase letters, digits, - and _, starting with a letter, at most 48 characters"

// validFieldName reports whether name may name a field: letters, digits,
// '_' and '-', starting with a letter or '_', at most 64 characters. The
// rule keeps field paths unambiguous in queries ("metadata.source") and
// safe to spell inside SQL JSON paths.
func validFieldName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case (c >= '0' && c <= '9' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// ToolPrefix returns "store__<name>__" with '-' turned into '_'.
func ToolPrefix(store string) string {
	return "store__" + strings.ReplaceAll(store, "-", "_") + "__"
}

// camel turns "research-notes" into "ResearchNotes".
func camel(name string) string {
	var b strings.Builder
	up := true
	for _, r := range name {
		if r == '-' || r == '_' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}

// Field returns the definition at a dotted path ("metadata.source"), or nil.
func (s *Store) Field(path string) *Field {
	f, _ := s.lookup(path)
	return f
}

// lookup resolves a dotted path and reports whether any step of it is
// nullable (so the value may be null even when the leaf is not nullable).
func (s *Store) lookup(path string) (f *Field, nullable bool) {
	fields := s.Fields
	for {
		name, rest, more := strings.Cut(path, ".")
		f = fields[name]
		if f == nil {
			return nil, false
		}
		nullable = nullable || f.Nullable
		if !more {
			return f, nullable
		}
		if f.Type != TypeObject {
			return nil, false
		}
		fields, path = f.Fields, rest
	}
}

// leafPaths lists every path a query may name, in declaration order:
// top-level fields and dotted paths into object fields.
func (s *Store) leafPaths() []string {
	var out []string
	var walk func(prefix string, names []string, fields map[string]*Field)
	walk = func(prefix string, names []string, fields map[string]*Field) {
		for _, n := range names {
			f := fields[n]
			out = append(out, prefix+n)
			if f.Type == TypeObject {
				walk(prefix+n+".", f.FieldNames, f.Fields)
			}
		}
	}
	walk("", s.FieldNames, s.Fields)
	return out
}

// scalar reports whether values of type t can be compared and sorted.
func scalar(t string) bool {
	switch t {
	case TypeString, TypeNumber, TypeBoolean, TypeDatetime, TypeEnum, TypeRef:
		return true
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// HasValue reports whether s is one of an enum's Values.
func (f *Field) HasValue(s string) bool {
	if f.valueSet != nil {
		_, ok := f.valueSet[s]
		return ok
	}
	return contains(f.Values, s)
}
