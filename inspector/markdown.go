package inspector

import (
	"html"
	"html/template"
	"path"
	"strings"
)

// renderMarkdown renders the common part of Markdown as HTML that cannot
// carry script: headings, paragraphs, lists, block quotes, fenced code,
// rules, and inline code, emphasis, links and images. Every piece of text
// is escaped; raw HTML is shown as text; a link keeps only an http,
// https or mailto URL or a path of the workspace (which becomes the
// inspector's page of that file); an image is shown only from the
// workspace (through its raw URL, imgURL), a remote one is a link.
// fileURL and imgURL map a workspace path to those URLs.
func renderMarkdown(src string, dir string, fileURL, imgURL func(p string) string) template.HTML {
	r := mdRenderer{dir: dir, fileURL: fileURL, imgURL: imgURL}
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); {
		i = r.block(lines, i)
	}
	r.closeList()
	return template.HTML(r.b.String()) // #nosec: built from escaped text and fixed tags only
}

type mdRenderer struct {
	b               strings.Builder
	dir             string
	fileURL, imgURL func(string) string
	list            string // "ul", "ol" or ""
}

func (r *mdRenderer) closeList() {
	if r.list != "" {
		r.b.WriteString("</" + r.list + ">\n")
		r.list = ""
	}
}

// block renders the block starting at line i and returns the next line.
func (r *mdRenderer) block(lines []string, i int) int {
	line := lines[i]
	t := strings.TrimSpace(line)
	switch {
	case t == "":
		r.closeList()
		return i + 1
	case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
		r.closeList()
		fence := t[:3]
		r.b.WriteString("<pre><code>")
		j := i + 1
		for ; j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), fence); j++ {
			r.b.WriteString(html.EscapeString(lines[j]))
			r.b.WriteString("\n")
		}
		r.b.WriteString("</code></pre>\n")
		return j + 1
	case strings.HasPrefix(t, "#"):
		n := len(t) - len(strings.TrimLeft(t, "#"))
		if n <= 6 && (len(t) == n || t[n] == ' ') {
			r.closeList()
			tag := "h" + string(rune('0'+n))
			r.b.WriteString("<" + tag + ">" + r.inline(strings.TrimSpace(strings.TrimRight(t[n:], "#"))) + "</" + tag + ">\n")
			return i + 1
		}
	case t == "---" || t == "***" || t == "___":
		r.closeList()
		r.b.WriteString("<hr>\n")
		return i + 1
	case strings.HasPrefix(t, ">"):
		r.closeList()
		r.b.WriteString("<blockquote><p>")
		j := i
		for ; j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), ">"); j++ {
			if j > i {
				r.b.WriteString(" ")
			}
			r.b.WriteString(r.inline(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[j]), ">"))))
		}
		r.b.WriteString("</p></blockquote>\n")
		return j
	}
	if item, kind, ok := listItem(t); ok {
		if r.list != kind {
			r.closeList()
			r.b.WriteString("<" + kind + ">\n")
			r.list = kind
		}
		r.b.WriteString("<li>" + r.inline(item) + "</li>\n")
		return i + 1
	}
	r.closeList()
	r.b.WriteString("<p>")
	j := i
	for ; j < len(lines); j++ {
		u := strings.TrimSpace(lines[j])
		if u == "" || (j > i && startsBlock(u)) {
			break
		}
		if j > i {
			r.b.WriteString("\n")
		}
		r.b.WriteString(r.inline(u))
	}
	r.b.WriteString("</p>\n")
	return j
}

func startsBlock(t string) bool {
	if _, _, ok := listItem(t); ok {
		return true
	}
	return strings.HasPrefix(t, "#") || strings.HasPrefix(t, ">") || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// listItem reads "- x", "* x", "+ x" or "1. x".
func listItem(t string) (item, kind string, ok bool) {
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		return strings.TrimSpace(t[2:]), "ul", true
	}
	n := 0
	for n < len(t) && n < 9 && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	if n > 0 && n+1 < len(t) && (t[n] == '.' || t[n] == ')') && t[n+1] == ' ' {
		return strings.TrimSpace(t[n+2:]), "ol", true
	}
	return "", "", false
}

// inline renders a line's inline markup: `code`, **strong**, *em*,
// [text](url), ![alt](src). Anything else is escaped text.
func (r *mdRenderer) inline(s string) string {
	var b strings.Builder
	strong, em := false, false
	for i := 0; i < len(s); {
		switch {
		case s[i] == '`':
			if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
				b.WriteString("<code>" + html.EscapeString(s[i+1:i+1+j]) + "</code>")
				i += j + 2
				continue
			}
		case strings.HasPrefix(s[i:], "**") || strings.HasPrefix(s[i:], "__"):
			if strong {
				b.WriteString("</strong>")
			} else if strings.Contains(s[i+2:], s[i:i+2]) {
				b.WriteString("<strong>")
			} else {
				break
			}
			strong = !strong
			i += 2
			continue
		case s[i] == '*' || (s[i] == '_' && (i == 0 || s[i-1] == ' ')) || (s[i] == '_' && em):
			if em {
				b.WriteString("</em>")
			} else if strings.IndexByte(s[i+1:], s[i]) > 0 {
				b.WriteString("<em>")
			} else {
				break
			}
			em = !em
			i++
			continue
		case s[i] == '[' || strings.HasPrefix(s[i:], "!["):
			img := s[i] == '!'
			start := i
			if img {
				start++
			}
			if text, target, n, ok := linkAt(s[start:]); ok {
				b.WriteString(r.link(img, text, target))
				i = start + n
				continue
			}
		}
		b.WriteString(html.EscapeString(s[i : i+1]))
		i++
	}
	if em {
		b.WriteString("</em>")
	}
	if strong {
		b.WriteString("</strong>")
	}
	return b.String()
}

// linkAt reads "[text](target)" at the start of s: n is its length.
func linkAt(s string) (text, target string, n int, ok bool) {
	close := strings.Index(s, "](")
	if !strings.HasPrefix(s, "[") || close < 0 {
		return "", "", 0, false
	}
	end := strings.IndexByte(s[close+2:], ')')
	if end < 0 {
		return "", "", 0, false
	}
	target = strings.TrimSpace(s[close+2 : close+2+end])
	if sp := strings.IndexByte(target, ' '); sp >= 0 {
		target = target[:sp] // a title: dropped
	}
	return s[1:close], target, close + 3 + end, true
}

// link renders a link or an image to target; only safe targets become
// attributes.
func (r *mdRenderer) link(img bool, text, target string) string {
	lower := strings.ToLower(target)
	remote := strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "mailto:")
	local := ""
	if !remote && target != "" && !strings.Contains(target, ":") && !strings.HasPrefix(target, "//") && !strings.HasPrefix(target, "#") {
		t := target
		if i := strings.IndexAny(t, "?#"); i >= 0 {
			t = t[:i]
		}
		if strings.HasPrefix(t, "/") {
			local = path.Clean(t)[1:]
		} else {
			local = path.Clean(path.Join(r.dir, t))
		}
		if local == "." || strings.HasPrefix(local, "../") || local == ".." || local == "" {
			local = ""
		}
	}
	esc := html.EscapeString
	switch {
	case img && local != "":
		return `<img src="` + esc(r.imgURL(local)) + `" alt="` + esc(text) + `">`
	case img && remote:
		return `<a href="` + esc(target) + `" rel="noopener noreferrer nofollow">image: ` + esc(text) + `</a>`
	case img:
		return esc(text)
	case local != "":
		return `<a href="` + esc(r.fileURL(local)) + `">` + r.inline(text) + `</a>`
	case remote:
		return `<a href="` + esc(target) + `" rel="noopener noreferrer nofollow">` + r.inline(text) + `</a>`
	case strings.HasPrefix(target, "#"):
		return r.inline(text)
	}
	return r.inline(text)
}
