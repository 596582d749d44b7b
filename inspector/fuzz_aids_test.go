package inspector

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var (
	mdTag      = regexp.MustCompile(`<(/?)([a-zA-Z0-9]+)([^>]*)>`)
	mdAllowed  = map[string]bool{"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "p": true, "ul": true, "ol": true, "li": true, "blockquote": true, "pre": true, "code": true, "hr": true, "strong": true, "em": true, "a": true, "img": true}
	mdAttr     = regexp.MustCompile(`^(\s+(href|src|alt|rel)="[^"<>]*")*$`)
	mdHrefSafe = regexp.MustCompile(`^(/s/|https?://|mailto:)`)
)

// FuzzMarkdown: whatever the source, the HTML holds only the renderer's
// own tags, with quoted attributes, links to safe URLs and images from
// the inspector only.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"# h\n\ntext **b** *e* `c`", "- [a](b)\n1. ![x](../y.png)", "<script>x</script>", "[x](javascript:alert(1))",
		"![t](https://evil/t.png)", "```\n<b>\n```", "> q\n> r", "[a](\" onmouseover=\"x)", "**[*a*](/b)**", "[x](//evil.example/a)", "*_a_*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out := string(renderMarkdown(src, "d", func(p string) string { return "/s/a/t/b/files/" + escapePath(p) }, func(p string) string { return "/s/a/t/b/raw/" + escapePath(p) }))
		rest := mdTag.ReplaceAllStringFunc(out, func(tag string) string {
			m := mdTag.FindStringSubmatch(tag)
			if !mdAllowed[m[2]] || !mdAttr.MatchString(m[3]) {
				t.Fatalf("tag %q from %q", tag, src)
			}
			for _, a := range regexp.MustCompile(`(href|src)="([^"]*)"`).FindAllStringSubmatch(m[3], -1) {
				if !mdHrefSafe.MatchString(a[2]) || a[1] == "src" && !strings.HasPrefix(a[2], "/s/a/t/b/raw/") {
					t.Fatalf("unsafe %s %q from %q", a[1], a[2], src)
				}
			}
			return ""
		})
		if strings.ContainsAny(rest, "<>") {
			t.Fatalf("unescaped markup %q in %q from %q", rest, out, src)
		}
	})
}

// FuzzParseFilter: a filter either is refused or writes back a query
// that reads as the same filter.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"agent=a&hide=appends", "since=2026-12-06&until=2026-12-07T10:00", "path=src/**&thread=main", "hide=x", "since=now", "thread=a%20b", "tool=mcp:write_file&client=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		v, err := url.ParseQuery(q)
		if err != nil {
			return
		}
		fl, err := parseFilter(v)
		if err != nil {
			return
		}
		again, err := parseFilter(fl.query())
		if err != nil {
			t.Fatalf("%q: the filter's own query is refused: %v", q, err)
		}
		if again.query().Encode() != fl.query().Encode() || !again.since.Equal(fl.since) || !again.until.Equal(fl.until) {
			t.Fatalf("%q: %+v read back as %+v", q, fl, again)
		}
	})
}

var (
	jtTag     = regexp.MustCompile(`<(/?)([a-z]+)([^>]*)>`)
	jtAllowed = map[string]bool{"details": true, "summary": true, "div": true, "span": true}
	jtAttr    = regexp.MustCompile(`^( class="[a-z]+"| open)?$`)
)

// FuzzJSONTree: the folded view of any JSON holds only its own tags;
// the keys and values are text.
func FuzzJSONTree(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"<script>"}],"c":null}`, `[]`, `"x"`, `{"<img src=x>":true}`, `[[[[1]]]]`, `{`, `1 2`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out, err := jsonTree([]byte(src))
		if err != nil {
			return
		}
		rest := jtTag.ReplaceAllStringFunc(string(out), func(tag string) string {
			m := jtTag.FindStringSubmatch(tag)
			if !jtAllowed[m[2]] || !jtAttr.MatchString(m[3]) {
				t.Fatalf("tag %q from %q", tag, src)
			}
			return ""
		})
		if strings.ContainsAny(rest, "<>") {
			t.Fatalf("unescaped markup in %q from %q", out, src)
		}
	})
}
