package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"html"
	"html/template"
	"io"
	"strconv"
	"strings"
)

// maxTreeDepth bounds the nesting the folded view of JSON draws; deeper
// values are shown as their compact JSON.
const maxTreeDepth = 64

// jsonTree renders JSON as nested <details> elements, one per object and
// array, open to depth 2, keys in their order: a folded view that needs
// no script. Every key and value is escaped.
func jsonTree(src []byte) (template.HTML, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var b strings.Builder
	if err := treeValue(dec, &b, "", 0); err != nil {
		return "", err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", errors.New("trailing data after the JSON value")
	}
	return template.HTML(b.String()), nil // #nosec: escaped text and fixed tags only
}

func treeValue(dec *json.Decoder, b *strings.Builder, key string, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	label := ""
	if key != "" {
		label = `<span class="jk">` + html.EscapeString(strconv.Quote(key)) + `</span>: `
	}
	d, ok := tok.(json.Delim)
	if !ok {
		b.WriteString(`<div class="jv">` + label + scalar(tok) + `</div>`)
		return nil
	}
	if depth >= maxTreeDepth {
		return errors.New("JSON nested too deep to fold")
	}
	open, close := "{", "}"
	if d == '[' {
		open, close = "[", "]"
	}
	var inner strings.Builder
	n := 0
	for dec.More() {
		k := ""
		if d == '{' {
			t, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ = t.(string)
		} else {
			k = ""
		}
		if d == '[' {
			inner.WriteString(`<div class="ji">`)
		}
		if err := treeValue(dec, &inner, k, depth+1); err != nil {
			return err
		}
		if d == '[' {
			inner.WriteString(`</div>`)
		}
		n++
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return err
	}
	what := plural(n, "key")
	if d == '[' {
		what = plural(n, "item")
	}
	attr := ""
	if depth < 2 {
		attr = " open"
	}
	b.WriteString(`<details` + attr + `><summary>` + label + open + ` <span class="muted">` + what + `</span> ` + close + `</summary><div class="jc">` + inner.String() + `</div></details>`)
	return nil
}

func scalar(tok json.Token) string {
	switch v := tok.(type) {
	case string:
		return `<span class="js">` + html.EscapeString(strconv.Quote(v)) + `</span>`
	case json.Number:
		return `<span class="jn">` + html.EscapeString(v.String()) + `</span>`
	case bool:
		return `<span class="jn">` + strconv.FormatBool(v) + `</span>`
	case nil:
		return `<span class="jn">null</span>`
	}
	return ""
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
