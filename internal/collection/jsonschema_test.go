package collection

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
)

// checkSchema is a small JSON Schema (draft 2020-12) validator for the
// keywords this package's schemas use. It refuses a keyword it does not
// know, so a schema cannot silently escape the check. It returns the
// problems found, with their instance paths.
func checkSchema(schema, instance []byte) ([]string, error) {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(instance))
	dec.UseNumber()
	var inst any
	if err := dec.Decode(&inst); err != nil {
		return nil, err
	}
	c := &schemaChecker{root: root.(map[string]any)}
	c.check(c.root, inst, "")
	return c.problems, c.err
}

type schemaChecker struct {
	root     map[string]any
	problems []string
	err      error
}

var annotations = map[string]bool{"$schema": true, "title": true, "description": true, "default": true, "format": true, "$defs": true}

func (c *schemaChecker) fail(path, format string, args ...any) {
	c.problems = append(c.problems, path+": "+fmt.Sprintf(format, args...))
}

// valid reports whether inst satisfies s, without recording problems.
func (c *schemaChecker) valid(s any, inst any) bool {
	sub := &schemaChecker{root: c.root}
	sub.check(s, inst, "")
	if sub.err != nil {
		c.err = sub.err
	}
	return len(sub.problems) == 0
}

func instType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if f, err := v.Float64(); err == nil && f == math.Trunc(f) {
			return "integer"
		}
		return "number"
	}
	return "?"
}

func num(v any) (float64, bool) {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case float64:
		return v, true
	}
	return 0, false
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if fa, ok := num(a); ok {
		fb, ok := num(b)
		return ok && fa == fb
	}
	return bytes.Equal(x, y)
}

func (c *schemaChecker) check(schema any, inst any, path string) {
	s, ok := schema.(map[string]any)
	if !ok {
		if b, ok := schema.(bool); ok {
			if !b {
				c.fail(path, "not allowed")
			}
			return
		}
		c.err = fmt.Errorf("schema at %s is not an object", path)
		return
	}
	for k, v := range s {
		if annotations[k] {
			continue
		}
		switch k {
		case "$ref":
			ref := v.(string)
			name, ok := strings.CutPrefix(ref, "#/$defs/")
			if !ok {
				c.err = fmt.Errorf("unsupported $ref %s", ref)
				return
			}
			c.check(c.root["$defs"].(map[string]any)[name], inst, path)
		case "type":
			t := instType(inst)
			okType := false
			var types []any
			if ts, ok := v.([]any); ok {
				types = ts
			} else {
				types = []any{v}
			}
			for _, want := range types {
				if want == t || want == "number" && t == "integer" {
					okType = true
				}
			}
			if !okType {
				c.fail(path, "type %s, want %v", t, v)
			}
		case "const":
			if !jsonEqual(v, inst) {
				c.fail(path, "must be %v", v)
			}
		case "enum":
			found := false
			for _, e := range v.([]any) {
				if jsonEqual(e, inst) {
					found = true
				}
			}
			if !found {
				c.fail(path, "%v is not one of %v", inst, v)
			}
		case "properties", "additionalProperties", "required", "minProperties", "propertyNames":
			m, ok := inst.(map[string]any)
			if !ok {
				continue
			}
			switch k {
			case "properties":
				for name, sub := range v.(map[string]any) {
					if x, ok := m[name]; ok {
						c.check(sub, x, path+"."+name)
					}
				}
			case "additionalProperties":
				props, _ := s["properties"].(map[string]any)
				for name, x := range m {
					if _, ok := props[name]; !ok {
						c.check(v, x, path+"."+name)
					}
				}
			case "required":
				for _, r := range v.([]any) {
					if _, ok := m[r.(string)]; !ok {
						c.fail(path, "missing %s", r)
					}
				}
			case "minProperties":
				if n, _ := num(v); float64(len(m)) < n {
					c.fail(path, "fewer than %v properties", v)
				}
			case "propertyNames":
				for name := range m {
					c.check(v, name, path+"."+name+"(name)")
				}
			}
		case "items", "minItems", "maxItems", "prefixItems", "uniqueItems":
			a, ok := inst.([]any)
			if !ok {
				continue
			}
			switch k {
			case "items":
				for i, x := range a {
					c.check(v, x, fmt.Sprintf("%s[%d]", path, i))
				}
			case "minItems":
				if n, _ := num(v); float64(len(a)) < n {
					c.fail(path, "fewer than %v items", v)
				}
			case "maxItems":
				if n, _ := num(v); float64(len(a)) > n {
					c.fail(path, "more than %v items", v)
				}
			case "prefixItems":
				ps, _ := v.([]any)
				for i := 0; i < len(ps) && i < len(a); i++ {
					c.check(ps[i], a[i], fmt.Sprintf("%s[%d]", path, i))
				}
			case "uniqueItems":
				for i := range a {
					for j := i + 1; j < len(a); j++ {
						if jsonEqual(a[i], a[j]) {
							c.fail(path, "items %d and %d are equal", i, j)
						}
					}
				}
			}
		case "pattern", "minLength":
			str, ok := inst.(string)
			if !ok {
				continue
			}
			if k == "pattern" {
				if !regexp.MustCompile(v.(string)).MatchString(str) {
					c.fail(path, "%q does not match %s", str, v)
				}
			} else if n, _ := num(v); float64(len([]rune(str))) < n {
				c.fail(path, "shorter than %v", v)
			}
		case "minimum", "maximum":
			f, ok := num(inst)
			if !ok {
				continue
			}
			lim, _ := num(v)
			if k == "minimum" && f < lim || k == "maximum" && f > lim {
				c.fail(path, "%v is beyond %s %v", f, k, lim)
			}
		case "oneOf", "anyOf":
			n := 0
			for _, sub := range v.([]any) {
				if c.valid(sub, inst) {
					n++
				}
			}
			if k == "oneOf" && n != 1 {
				c.fail(path, "matches %d of oneOf", n)
			}
			if k == "anyOf" && n == 0 {
				c.fail(path, "matches none of anyOf")
			}
		case "not":
			if c.valid(v, inst) {
				c.fail(path, "matches not")
			}
		default:
			c.err = fmt.Errorf("unsupported keyword %q at %s", k, path)
			return
		}
	}
}
