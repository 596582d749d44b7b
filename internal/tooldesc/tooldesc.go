// Package tooldesc checks MCP tool descriptions against their schemas, so
// that what a model reads names exactly the arguments a tool takes. The
// MCP server's tests run it on every tool a server lists.
package tooldesc

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnglishArgs are argument names that are also plain words of the
// descriptions ("add it to the end", "the file's path"): the sibling
// check cannot tell them from an argument, so it skips them.
var EnglishArgs = map[string]bool{
	"to": true, "at": true, "from": true, "name": true, "path": true,
	"content": true, "key": true, "history": true, "pattern": true,
	"args": true, "script": true, "atomic": true, "thread": true, "into": true,
}

var (
	snakeWord  = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)
	wordRE     = regexp.MustCompile(`[A-Za-z0-9_]+`)
	possessed  = regexp.MustCompile(`\b([a-z_]+)'s ([a-z_]+)`)
	argumentOf = regexp.MustCompile(`the [a-z_]+ argument of`)
)

// Check returns the problems of tools (as tools/list gives them; prefix
// is the server's tool prefix), one line each:
//   - an argument of the input schema that the description does not name;
//   - a snake_case name in the description that is not an argument, a
//     result field, a tool or (for a store's tools) a document field;
//   - an argument of a sibling tool (another file tool, or another tool of
//     the same store) that this one does not take, named in its
//     description ("edit_file's old_text" and "the if_hash argument of
//     write_file" name another tool's argument explicitly);
//   - a description that does not end a sentence.
func Check(tools []*mcp.Tool, prefix string) []string {
	var problems []string
	names := map[string]bool{}
	family := map[string][]string{}
	props := map[string][]string{}
	outputs := map[string][]string{}
	for _, tl := range tools {
		names[tl.Name] = true
		props[tl.Name] = schemaProps(tl.InputSchema)
		outputs[tl.Name] = schemaProps(tl.OutputSchema)
		family[familyOf(tl.Name)] = append(family[familyOf(tl.Name)], props[tl.Name]...)
	}
	isTool := func(w string) bool { return names[w] || names[prefix+w] }
	for _, tl := range tools {
		d := otherToolsArgs(tl.Description, names)
		allowed := docFields(tools, tl.Name)
		words := map[string]bool{}
		for _, w := range wordRE.FindAllString(d, -1) {
			words[w] = true
		}
		in := props[tl.Name]
		for _, a := range in {
			if !words[a] {
				problems = append(problems, fmt.Sprintf("%s: argument %s is not named in the description", tl.Name, a))
			}
		}
		for _, w := range snakeWord.FindAllString(d, -1) {
			if !slices.Contains(in, w) && !slices.Contains(outputs[tl.Name], w) && !allowed[w] && !isTool(w) {
				problems = append(problems, fmt.Sprintf("%s: the description names %s, which is not an argument, a result field or a tool", tl.Name, w))
			}
		}
		seen := map[string]bool{}
		for _, a := range family[familyOf(tl.Name)] {
			if !seen[a] && !EnglishArgs[a] && !slices.Contains(in, a) && !allowed[a] && words[a] && !isTool(a) {
				seen[a] = true
				problems = append(problems, fmt.Sprintf("%s: the description names %s, an argument of another tool that this one does not take", tl.Name, a))
			}
		}
		if t := strings.TrimSpace(tl.Description); !strings.HasSuffix(t, ".") && !strings.HasSuffix(t, ".)") {
			problems = append(problems, fmt.Sprintf("%s: the description does not end a sentence: %q", tl.Name, tail(t)))
		}
	}
	return problems
}

func tail(s string) string {
	if len(s) > 60 {
		return "..." + s[len(s)-60:]
	}
	return s
}

// otherToolsArgs removes from d the arguments it names as another tool's.
func otherToolsArgs(d string, tools map[string]bool) string {
	d = possessed.ReplaceAllStringFunc(d, func(m string) string {
		if tool, _, _ := strings.Cut(m, "'"); tools[tool] {
			return tool
		}
		return m
	})
	return argumentOf.ReplaceAllString(d, "an argument of")
}

// docFields are the fields of a store's documents, which its tools'
// descriptions name to explain keys and queries; nil for other tools.
func docFields(all []*mcp.Tool, name string) map[string]bool {
	rest, ok := strings.CutPrefix(name, "store__")
	if !ok {
		return nil
	}
	store, _, _ := strings.Cut(rest, "__")
	for _, tl := range all {
		if tl.Name != "store__"+store+"__get" {
			continue
		}
		b, _ := json.Marshal(tl.OutputSchema)
		// The document is the definition's schema, or any object (a
		// document stored under an earlier definition): anyOf both.
		type object struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		var s struct {
			Properties struct {
				Document struct {
					object
					AnyOf []object `json:"anyOf"`
				} `json:"document"`
			} `json:"properties"`
		}
		_ = json.Unmarshal(b, &s)
		out := map[string]bool{}
		for k := range s.Properties.Document.Properties {
			out[k] = true
		}
		for _, o := range s.Properties.Document.AnyOf {
			for k := range o.Properties {
				out[k] = true
			}
		}
		return out
	}
	return nil
}

// familyOf is the group of tools whose arguments a description might
// confuse: the tools of one store, or the others.
func familyOf(name string) string {
	if rest, ok := strings.CutPrefix(name, "store__"); ok {
		store, _, _ := strings.Cut(rest, "__")
		return "store " + store
	}
	return "workspace"
}

func schemaProps(schema any) []string {
	if schema == nil {
		return nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(b, &s)
	out := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
