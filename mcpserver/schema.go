package mcpserver

import (
	"bytes"
	"encoding/json"
)

// prop is one property of a tool's input schema.
type prop struct {
	name     string
	schema   obj
	required bool
}

// obj is a JSON object that keeps its members in order, so that schemas
// read in the order a model should fill them.
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(m.k)
		if err != nil {
			return nil, err
		}
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

// marshal is json.Marshal without HTML escaping.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func mustMarshal(v any) json.RawMessage {
	b, err := marshal(v)
	if err != nil {
		panic("mcpserver: " + err.Error()) // only static schemas reach here
	}
	return b
}

// inputSchema builds a tool's input schema: an object of props, no others.
func inputSchema(props ...prop) json.RawMessage {
	ps := obj{}
	required := []string{}
	for _, p := range props {
		ps = append(ps, kv{p.name, p.schema})
		if p.required {
			required = append(required, p.name)
		}
	}
	return mustMarshal(obj{{"type", "object"}, {"properties", ps}, {"required", required}, {"additionalProperties", false}})
}

// outputSchema builds the schema of a tool's structured content. Tools
// whose result can be spilled list no required members: a spilled result
// carries only "spilled".
func outputSchema(spillable bool, props ...prop) json.RawMessage {
	ps := obj{}
	required := []string{}
	for _, p := range props {
		ps = append(ps, kv{p.name, p.schema})
		if p.required && !spillable {
			required = append(required, p.name)
		}
	}
	if spillable {
		ps = append(ps, kv{"spilled", spilledSchema})
	}
	return mustMarshal(obj{{"type", "object"}, {"properties", ps}, {"required", required}})
}

var spilledSchema = obj{
	{"type", "object"},
	{"description", "Set instead of the other members when the result was too large to return: where the whole result was saved."},
	{"properties", obj{
		{"path", obj{{"type", "string"}}},
		{"bytes", obj{{"type", "integer"}}},
		{"omitted_bytes", obj{{"type", "integer"}}},
	}},
}

func str(desc string) obj {
	if desc == "" {
		return obj{{"type", "string"}}
	}
	return obj{{"type", "string"}, {"description", desc}}
}
func boolean(desc string) obj { return obj{{"type", "boolean"}, {"description", desc}} }
func integer(desc string, min, max int) obj {
	return obj{{"type", "integer"}, {"description", desc}, {"minimum", min}, {"maximum", max}}
}
func commitRef(desc string) obj {
	return obj{{"type", []string{"string", "integer"}}, {"description", desc}}
}
func array(item obj) obj { return obj{{"type", "array"}, {"items", item}} }

func req(name string, schema obj) prop { return prop{name: name, schema: schema, required: true} }
func opt(name string, schema obj) prop { return prop{name: name, schema: schema} }

// withDefault adds a default to a schema.
func withDefault(o obj, v any) obj { return append(o, kv{"default", v}) }
