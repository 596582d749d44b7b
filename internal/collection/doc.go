// Package collection is the storage-independent half of satchel's collections
// (DESIGN §1.2, §3): store and agent definitions, document validation,
// keys, expiry, the query language with its SQL compilation, keyset
// pagination, access rules and the generated tool specs. Nothing here
// touches storage; backends store what this package prepares and run
// what it compiles, so every backend behaves the same.
//
// # Definitions
//
// A project directory holds stores/<name>.json, one store each, and
// agents/<name>/agent.json. LoadProject reads both and reports every
// problem of every file at once, as one *errs.ValidationError:
//
//	project failed validation:
//	  stores/research-notes.json: entity.schema.confidence.min: min 2 is greater than max 1
//	  agents/research/agent.json: stores.companies: no store is named "companies" (stores: research-notes)
//
// Unknown keys are errors wherever they appear (never ignored), so a typo
// cannot silently drop a rule. Two extensions of ours are accepted:
// "indexes" (fields that queries find through an index) and
// "description" (on a store or a field: text for the model, copied into
// the tool descriptions and schemas); "$schema" may point an editor at
// StoreDefinitionSchema or AgentDefinitionSchema.
//
// # Documents
//
// A document is a JSON object held as map[string]any, exactly what
// encoding/json decodes. Decode with json.Decoder.UseNumber: numbers then
// stay json.Number, the text the caller sent, so a stored document reads
// back byte for byte (an id like 12345678901234567890 is not rounded to a
// float64, and 1.10 is not rewritten as 1.1). Validation and comparisons
// convert to float64 when they need a value, and float64 and Go integers
// are accepted too, for callers that build documents in Go.
//
// A set runs Store.Prepare, which is four steps that can also be called
// one by one:
//
//   - Validate checks the whole document and lists every violation with
//     its path ("metadata.source", "tags[2]"): unknown fields, missing
//     fields (a nullable field may be absent: absent means null), types,
//     ranges (min and max inclusive), enum values, RFC 3339 datetimes,
//     nested objects and arrays, and refs (through a callback, since only
//     the backend knows which keys exist). It runs on a tree compiled at
//     load time and takes well under a microsecond for a W2 document.
//   - KeyOf fills the key template ("{company_id}:{topic}"). A missing,
//     null or empty key field is refused, and so is a value containing the
//     text that separates two fields of the template, which would make two
//     documents share a key.
//   - Normalize rewrites datetimes into CanonicalDatetime: UTC with nine
//     fractional digits ("2026-01-31T08:30:00.000000000Z"). All canonical
//     strings have one length and put the most significant digits first,
//     so comparing them as text compares them as instants. That is what
//     lets SQL compare and index datetimes as plain text in SQLite and
//     PostgreSQL alike; documents must therefore be stored normalized.
//     Shorten turns a stored document's datetimes into their shortest RFC
//     3339 form in UTC, the form reads return.
//   - ExpiresAt applies the ttl: the first override whose condition
//     matches wins, else the default; no ttl means no expiry.
//
// Store.PrepareCopy is Prepare for a document its caller keeps (a map
// built in Go): the walk that validates also copies and normalizes it,
// so the document stored shares no map or slice with the caller's.
// Datetimes of the common shape ("2026-01-31T08:30:00.5Z") are checked
// and rewritten by hand; the time package decides every other text.
//
// # Queries
//
// The where language is conditions `field op value` joined by AND (the
// keywords in any case), with =, !=, IN [v, ...], <, <=, >, >=; values
// are 'single-quoted strings' (a quote inside is doubled), numbers, true, false and
// null; fields may be dotted paths into object fields. ParseQuery turns it
// into a Query (errors name the 1-based character position), and
// Store.CheckQuery checks it against a schema: unknown fields, ranges on
// anything but numbers and datetimes, values of the wrong type and enum
// values that do not exist are refused, and datetime values are rewritten
// into the canonical form.
//
// One parsed Query is evaluated two ways that agree exactly: Query.Match
// in Go (the memory backend) and Query.SQL for SQLite and PostgreSQL,
// which binds every value as a parameter (the SQL text depends only on
// the schema, never on the values). The tests run thousands of pages
// through both databases and compare them with Go. Null semantics:
//
//   - field = null matches null and absent fields (and every field under a
//     null or absent object); field != null matches the rest;
//   - field != v is exactly NOT (field = v), so it matches null fields;
//   - IN matches when = matches one of its values (null included when the
//     list names null);
//   - <, <=, >, >= are false on null.
//
// A page (Store.Page from a PageRequest) adds a Sort ("field" or
// "-field"; default the key, which also breaks ties; nulls first
// ascending), a limit (default 20, at most 100) and an opaque Cursor
// holding the last document's sort value and key. The next page is the
// documents after that position (keyset pagination, no offsets), so pages
// stay correct while documents are added and removed. Page.Match and
// Page.Compare do it in Go; Page.SQL gives WHERE, ORDER BY and arguments.
// Store.IndexExprs gives, for each "indexes" entry, the index expression
// that those WHERE and ORDER BY clauses use verbatim, so the planner
// picks the index (the tests check both planners).
//
// # Tools and access
//
// Each store gives tools store__<name>__get, set, query, list and, when
// deletable, remove ('-' in the name becomes '_'), with JSON Schemas
// derived from the entity schema and descriptions that teach a model the
// key template, the query language with examples from the store's own
// fields, and the limits. Project.ToolsFor lists exactly the tools an
// agent is granted (read: get, query, list; rw adds set and remove; never
// set or remove on a shared store), and Project.Authorize checks one call
// with the refusals of DESIGN §3.
//
// A backend's set, in short:
//
//	p, err := store.Prepare(doc, refExists, now) // validated, keyed, normalized
//	if err != nil {
//		return err // *errs.ValidationError lists every violation
//	}
//	// write p.Key, p.Doc (as JSON) and p.ExpiresAt
//
// and its query:
//
//	page, err := store.Page(docs.PageRequest{Where: where, Sort: sort, Limit: limit, Cursor: cursor})
//	where, orderBy, args := page.SQL(docs.Postgres, "doc", "key", 3) // $1, $2 are the store and scope
//	// SELECT key, doc FROM documents WHERE store = $1 AND scope = $2 AND <where>
//	//   ORDER BY <orderBy> LIMIT page.Limit+1
//	// with more than page.Limit rows, next_cursor = page.Cursor(key, doc) of the last one kept
package collection
