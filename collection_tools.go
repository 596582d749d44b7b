package satchel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel/internal/collection"
	"github.com/satchel-dev/satchel/internal/errs"
)

// CollectionTool is one generated tool of a store (DESIGN §3): what an MCP
// server lists for an agent.
type CollectionTool struct {
	// Name is store__<store, '-' turned into '_'>__<op>.
	Name        string
	Description string
	// InputSchema and OutputSchema are JSON Schemas (draft 2020-12) of the
	// arguments and of the structured result.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// Store is the store's name; Op is get, set, query, list or remove.
	Store string
	Op    string
	// ReadOnly, Destructive and Idempotent are the MCP annotations
	// readOnlyHint, destructiveHint and idempotentHint.
	ReadOnly, Destructive, Idempotent bool
}

// CollectionTools returns exactly the tools an agent of the project is
// granted, store by store in name order, each in the order get, set,
// query, list, remove: read grants get, query and list; rw adds set, and
// remove on a deletable store; a shared store never gives set or remove.
// An unknown agent is ErrNotFound.
func (s *Store) CollectionTools(p *Project, agent string) ([]CollectionTool, error) {
	return p.Tools(agent)
}

// Tools is Store.CollectionTools; it needs no store.
func (p *Project) Tools(agent string) ([]CollectionTool, error) {
	specs, err := p.p.ToolsFor(agent)
	if err != nil {
		return nil, err
	}
	out := make([]CollectionTool, len(specs))
	for i, t := range specs {
		out[i] = CollectionTool{
			Name: t.Name, Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
			Store: t.Store, Op: t.Op,
			ReadOnly: t.ReadOnly, Destructive: t.Destructive, Idempotent: t.Idempotent,
		}
	}
	return out, nil
}

// toolTarget finds the store and operation a tool name names.
func (p *Project) toolTarget(tool string) (store, op string, err error) {
	for _, name := range p.p.StoreNames {
		prefix := collection.ToolPrefix(name)
		if rest, ok := strings.CutPrefix(tool, prefix); ok {
			switch rest {
			case collection.OpGet, collection.OpSet, collection.OpQuery, collection.OpList, collection.OpRemove:
				return name, rest, nil
			}
		}
	}
	return "", "", errs.New(errs.ErrNotFound, "unknown tool %q", tool)
}

// CallCollectionTool runs a generated tool for the agent of actor (which
// the changes it makes record, as CollectionActor does) in a scope, with
// the tool's arguments as JSON (an object; empty means {}), and returns
// its structured result as JSON, the shapes of DESIGN §3:
//
//	get     {"found": true, "key": K, "version": N, "document": {...}}, with
//	        "history": [{"version": N, "document": {...}}, ...] when asked;
//	        {"found": false} when there is none; "does_not_fit": [...] when
//	        the document predates the store's definition and does not fit it
//	set     {"key": K, "version": N}
//	query   {"documents": [...], "next_cursor": "..." or null}
//	list    {"documents": [...], "next_cursor": "..." or null}
//	        (query and list: "does_not_fit": {KEY: [...]} when documents
//	        predate the store's definition and do not fit it)
//	remove  {"removed": true or false}
//
// The agent's access is checked (a tool it was not granted is refused as
// Store.Collection and the operations refuse it), and the arguments are
// checked strictly: an unknown argument, or one of the wrong type, is
// ErrInvalidArgument. Errors carry the messages of the Go API, which an
// MCP server returns as tool errors. A set or remove takes the optional
// argument idempotency_key (IdempotencyKey), unless the store has a field
// of that name.
//
// opts are added to the collection's (CallerThread: the caller's thread,
// in which idempotency keys are claimed).
func (s *Store) CallCollectionTool(ctx context.Context, p *Project, scope string, actor Actor, tool string, args json.RawMessage, opts ...CollectionOption) (json.RawMessage, error) {
	agent := actor.Agent
	if p == nil {
		return nil, errs.New(errs.ErrInvalidArgument, "no project: load one with LoadProject")
	}
	if agent == "" {
		return nil, errs.New(errs.ErrInvalidArgument, "collection tools run for an agent: name one")
	}
	store, op, err := p.toolTarget(tool)
	if err != nil {
		return nil, err
	}
	if err := p.p.Authorize(agent, store, op); err != nil {
		return nil, err
	}
	c, err := s.Collection(ctx, p, scope, store, append([]CollectionOption{AsAgent(agent), CollectionActor(actor)}, opts...)...)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if op == collection.OpSet {
		var opts []WriteOption
		if c.st.Fields[collection.KeyArg] == nil && bytes.Contains(args, []byte(collection.KeyArg)) {
			var err error
			if args, opts, err = splitKeyArg(args); err != nil {
				return nil, err
			}
		}
		key, version, err := c.Set(ctx, args, opts...)
		if err != nil {
			return nil, err
		}
		return marshalResult(struct {
			Key     string `json:"key"`
			Version int64  `json:"version"`
		}{key, version})
	}
	a, err := parseArgs(args, allowedArgs[op])
	if err != nil {
		return nil, err
	}
	switch op {
	case collection.OpGet:
		key, err := a.str("key", true)
		if err != nil {
			return nil, err
		}
		hist, err := a.boolean("history")
		if err != nil {
			return nil, err
		}
		d, err := c.Get(ctx, key, hist)
		if errors.Is(err, errs.ErrNotFound) {
			return json.RawMessage(`{"found":false}`), nil
		}
		if err != nil {
			return nil, err
		}
		type version struct {
			Version  int64           `json:"version"`
			Document json.RawMessage `json:"document"`
		}
		r := struct {
			Found      bool            `json:"found"`
			Key        string          `json:"key"`
			Version    int64           `json:"version"`
			Document   json.RawMessage `json:"document"`
			DoesNotFit []string        `json:"does_not_fit,omitempty"`
			History    *[]version      `json:"history,omitempty"`
		}{Found: true, Key: d.Key, Version: d.Version, Document: d.JSON, DoesNotFit: c.st.Misfit(d.JSON)}
		if hist {
			h := make([]version, len(d.History))
			for i, v := range d.History {
				h[i] = version{v.Version, v.JSON}
			}
			r.History = &h
		}
		return marshalResult(r)
	case collection.OpQuery, collection.OpList:
		var req QueryRequest
		if req.Where, err = a.str("where", false); err != nil {
			return nil, err
		}
		if req.Sort, err = a.str("sort", false); err != nil {
			return nil, err
		}
		if req.Cursor, err = a.str("cursor", false); err != nil {
			return nil, err
		}
		limit, err := a.limit()
		if err != nil {
			return nil, err
		}
		var l *int
		if limit != nil {
			l = limit
		}
		if err := c.authorize(op); err != nil {
			return nil, err
		}
		pg, err := c.page(ctx, collection.PageRequest{Where: req.Where, Sort: req.Sort, Limit: l, Cursor: req.Cursor})
		if err != nil {
			return nil, err
		}
		r := struct {
			Documents  []json.RawMessage   `json:"documents"`
			NextCursor *string             `json:"next_cursor"`
			DoesNotFit map[string][]string `json:"does_not_fit,omitempty"`
		}{Documents: make([]json.RawMessage, len(pg.Documents))}
		for i, d := range pg.Documents {
			r.Documents[i] = d.JSON
			if why := c.st.Misfit(d.JSON); why != nil {
				if r.DoesNotFit == nil {
					r.DoesNotFit = map[string][]string{}
				}
				r.DoesNotFit[d.Key] = why
			}
		}
		if pg.NextCursor != "" {
			r.NextCursor = &pg.NextCursor
		}
		return marshalResult(r)
	case collection.OpRemove:
		key, err := a.str("key", true)
		if err != nil {
			return nil, err
		}
		var opts []WriteOption
		if k, err := a.str(collection.KeyArg, false); err != nil {
			return nil, err
		} else if k != "" {
			opts = append(opts, IdempotencyKey(k))
		}
		ok, err := c.Remove(ctx, key, opts...)
		if err != nil {
			return nil, err
		}
		return marshalResult(struct {
			Removed bool `json:"removed"`
		}{ok})
	}
	return nil, errs.New(errs.ErrNotFound, "unknown tool %q", tool)
}

var allowedArgs = map[string][]string{
	collection.OpGet:    {"key", "history"},
	collection.OpQuery:  {"where", "sort", "limit", "cursor"},
	collection.OpList:   {"limit", "cursor"},
	collection.OpRemove: {"key", collection.KeyArg},
}

func marshalResult(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// toolArgs are a tool call's arguments, decoded.
type toolArgs map[string]any

func parseArgs(raw json.RawMessage, allowed []string) (toolArgs, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, errs.New(errs.ErrInvalidArgument, "arguments are not valid JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errs.New(errs.ErrInvalidArgument, "arguments must be a JSON object, not %s", jsonKind(v))
	}
	var unknown []string
	for k := range m {
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, errs.New(errs.ErrInvalidArgument, "unknown argument %s (arguments: %s)", strings.Join(unknown, ", "), strings.Join(allowed, ", "))
	}
	return toolArgs(m), nil
}

func (a toolArgs) str(name string, required bool) (string, error) {
	v, ok := a[name]
	if !ok || v == nil {
		if required {
			return "", errs.New(errs.ErrInvalidArgument, "missing argument %q", name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", errs.New(errs.ErrInvalidArgument, "argument %q must be a string, not %s", name, jsonKind(v))
	}
	return s, nil
}

func (a toolArgs) boolean(name string) (bool, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, errs.New(errs.ErrInvalidArgument, "argument %q must be true or false, not %s", name, jsonKind(v))
	}
	return b, nil
}

// limit returns the limit argument, nil when absent.
func (a toolArgs) limit() (*int, error) {
	v, ok := a["limit"]
	if !ok || v == nil {
		return nil, nil
	}
	n, isNum := v.(json.Number)
	i, err := strconv.Atoi(string(n))
	if !isNum || err != nil {
		if isNum {
			if f, ferr := n.Float64(); ferr == nil && f == float64(int(f)) {
				i, err = int(f), nil
			}
		}
		if err != nil || !isNum {
			return nil, errs.New(errs.ErrInvalidArgument, "argument \"limit\" must be an integer from 1 to %d, not %s", collection.MaxLimit, describeArg(v))
		}
	}
	if _, err := collection.ParseLimit(&i); err != nil {
		return nil, err
	}
	return &i, nil
}

func describeArg(v any) string {
	if n, ok := v.(json.Number); ok {
		return string(n)
	}
	return jsonKind(v)
}

// splitKeyArg takes the idempotency key out of a set's arguments, leaving
// the document.
func splitKeyArg(args json.RawMessage) (json.RawMessage, []WriteOption, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return args, nil, nil // not an object: Set says what is wrong with it
	}
	raw, ok := m[collection.KeyArg]
	if !ok {
		return args, nil, nil
	}
	var k string
	if err := json.Unmarshal(raw, &k); err != nil {
		return nil, nil, errs.New(errs.ErrInvalidArgument, "%s must be a string", collection.KeyArg)
	}
	delete(m, collection.KeyArg)
	doc, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	return doc, []WriteOption{IdempotencyKey(k)}, nil
}
