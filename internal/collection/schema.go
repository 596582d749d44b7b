package collection

import (
	"bytes"
	"encoding/json"
)

const draft = "https://json-schema.org/draft/2020-12/schema"

const namePattern = "^[a-z][a-z0-9_-]{0,47}$"

// StoreDefinitionSchema returns a JSON Schema (draft 2020-12) of the store
// definition format (stores/<name>.json), for editors: point a file's
// "$schema" at it, or map stores/*.json to it in the editor's settings. It
// checks the structure (keys, types, required members); LoadProject also
// checks what a schema cannot say (the name matches the file, key fields
// exist, refs name stores, ttl conditions parse).
func StoreDefinitionSchema() []byte {
	seconds := jobj{{"type", "integer"}, {"minimum", 1}, {"maximum", MaxTTL}}
	var branches []any
	for _, t := range fieldTypes {
		props := jobj{
			{"type", jobj{{"const", t}}},
			{"nullable", jobj{{"type", "boolean"}, {"default", false}, {"description", "Allow null; a nullable field may also be left out."}}},
			{"description", jobj{{"type", "string"}, {"description", "Shown to models in the tools' schemas."}}},
		}
		required := []string{"type"}
		switch t {
		case TypeNumber:
			props = append(props, jkv{"min", jobj{{"type", "number"}, {"description", "Smallest allowed value (inclusive)."}}},
				jkv{"max", jobj{{"type", "number"}, {"description", "Largest allowed value (inclusive)."}}})
		case TypeEnum:
			props = append(props, jkv{"values", jobj{{"type", "array"}, {"items", jobj{{"type", "string"}}}, {"minItems", 1}, {"uniqueItems", true}}})
			required = append(required, "values")
		case TypeArray:
			props = append(props, jkv{"item", jobj{{"$ref", "#/$defs/field"}, {"description", "The definition of the elements."}}})
			required = append(required, "item")
		case TypeObject:
			props = append(props, jkv{"fields", jobj{{"$ref", "#/$defs/fields"}}})
			required = append(required, "fields")
		case TypeRef:
			props = append(props, jkv{"store", jobj{{"type", "string"}, {"pattern", namePattern}, {"description", "The store whose document keys this field holds."}}})
			required = append(required, "store")
		}
		branches = append(branches, jobj{{"properties", props}, {"required", required}, {"additionalProperties", false}})
	}
	s := jobj{
		{"$schema", draft},
		{"title", "satchel store definition"},
		{"description", "One store of typed JSON documents: stores/<name>.json."},
		{"type", "object"},
		{"properties", jobj{
			{"$schema", jobj{{"type", "string"}}},
			{"name", jobj{{"type", "string"}, {"pattern", namePattern}, {"description", "Lowercase letters, digits, - and _, starting with a letter, at most 48 characters. Defaults to the file name; a different name is an error."}}},
			{"description", jobj{{"type", "string"}, {"description", "What the store holds; added to the tool descriptions."}}},
			{"entity", jobj{{"type", "object"}, {"properties", jobj{
				{"name", jobj{{"type", "string"}, {"minLength", 1}, {"description", "Entity type name, such as ResearchNote."}}},
				{"key", jobj{{"$ref", "#/$defs/key"}}},
				{"schema", jobj{{"$ref", "#/$defs/fields"}}},
			}}, {"required", []string{"key", "schema"}}, {"additionalProperties", false}}},
			{"key", jobj{{"$ref", "#/$defs/key"}}},
			{"schema", jobj{{"$ref", "#/$defs/fields"}}},
			{"history", jobj{{"type", "object"}, {"properties", jobj{
				{"versions", jobj{{"type", "integer"}, {"minimum", 0}, {"description", "Previous versions kept per document."}}},
			}}, {"required", []string{"versions"}}, {"additionalProperties", false}}},
			{"ttl", jobj{{"description", "Expiry in seconds, or a default and overrides whose first matching condition wins."}, {"oneOf", []any{
				seconds,
				jobj{{"type", "object"}, {"properties", jobj{
					{"default", seconds},
					{"override", jobj{{"type", "array"}, {"items", jobj{{"type", "object"}, {"properties", jobj{
						{"condition", jobj{{"type", "string"}, {"description", "field = 'v', field != 'v' or field IN ['a', 'b'], on a top-level field."}}},
						{"ttl", seconds},
					}}, {"required", []string{"condition", "ttl"}}, {"additionalProperties", false}}}}},
				}}, {"minProperties", 1}, {"additionalProperties", false}},
			}}}},
			{"deletable", jobj{{"type", "boolean"}, {"default", false}, {"description", "Registers the remove tool."}}},
			{"shared", jobj{{"type", "boolean"}, {"default", false}, {"description", "One collection readable by every scope; agents cannot write to it."}}},
			{"indexes", jobj{{"type", "array"}, {"items", jobj{{"type", "string"}}}, {"uniqueItems", true}, {"description", "Fields (or dotted paths into object fields) that queries find through an index."}}},
		}},
		{"oneOf", []any{
			jobj{{"required", []string{"entity"}}, {"not", jobj{{"anyOf", []any{jobj{{"required", []string{"key"}}}, jobj{{"required", []string{"schema"}}}}}}}},
			jobj{{"required", []string{"key", "schema"}}, {"not", jobj{{"required", []string{"entity"}}}}},
		}},
		{"additionalProperties", false},
		{"$defs", jobj{
			{"key", jobj{{"type", "string"}, {"pattern", `\{[A-Za-z_][A-Za-z0-9_-]*\}`}, {"description", "Key template over top-level fields, such as {company_id}:{topic}."}}},
			{"fields", jobj{{"type", "object"}, {"minProperties", 1}, {"propertyNames", jobj{{"pattern", "^[A-Za-z_][A-Za-z0-9_-]{0,63}$"}}}, {"additionalProperties", jobj{{"$ref", "#/$defs/field"}}}}},
			{"field", jobj{{"type", "object"}, {"required", []string{"type"}}, {"properties", jobj{{"type", jobj{{"enum", fieldTypes}}}}}, {"oneOf", branches}}},
		}},
	}
	return indentJSON(s)
}

// AgentDefinitionSchema returns a JSON Schema (draft 2020-12) of
// agents/<name>/agent.json, for editors.
func AgentDefinitionSchema() []byte {
	return indentJSON(jobj{
		{"$schema", draft},
		{"title", "satchel agent definition"},
		{"description", "An agent: agents/<name>/agent.json. The directory name identifies the agent."},
		{"type", "object"},
		{"properties", jobj{
			{"$schema", jobj{{"type", "string"}}},
			{"name", jobj{{"type", "string"}, {"description", "Display label."}}},
			{"description", jobj{{"type", "string"}}},
			{"review", jobj{{"type", "boolean"}, {"default", false}, {"description", "The agent's changes wait for review: its first change forks a review thread, and a person approves or rejects it (satchel review)."}}},
			{"stores", jobj{{"type", "object"}, {"description", "The stores the agent may use: read grants get, query and list; rw adds set and remove."},
				{"propertyNames", jobj{{"pattern", namePattern}}},
				{"additionalProperties", jobj{{"enum", []string{string(AccessRead), string(AccessRW)}}}}}},
			{"files", jobj{{"type", "array"}, {"minItems", 1},
				{"description", "The agent's file rules: [GLOB, ACCESS] pairs, the first whose glob matches a path deciding its access (rw, read or none); a path no pair matches is none. Without files, every path is rw."},
				{"items", jobj{{"type", "array"}, {"minItems", 2}, {"maxItems", 2},
					{"prefixItems", []jobj{{{"type", "string"}}, {{"enum", []string{"rw", "read", "none"}}}}},
					{"items", jobj{{"type", "string"}}}}}}},
		}},
		{"additionalProperties", false},
	})
}

func indentJSON(v any) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, mustJSON(v), "", "  "); err != nil {
		panic("docs: " + err.Error())
	}
	b.WriteByte('\n')
	return b.Bytes()
}
