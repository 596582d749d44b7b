package inspector

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/satchel-dev/satchel"
)

// pageData is what every page's template gets.
type pageData struct {
	Title    string
	Base     string
	Who      string
	SignedIn bool
	Crumbs   []crumb
	// Live, when set, is the URL of the event stream that refreshes the
	// page's #live region.
	Live string
	Data any
}

type crumb struct{ Name, URL string }

// pageNames are the templates of templates/, one page each.
var pageNames = []string{"signin", "error", "scopes", "threads", "tree", "timeline", "commit", "compare",
	"dir", "file", "filehistory", "search", "stores", "documents", "document", "activity", "scopesearch", "blame", "spills", "reviews", "review"}

func parsePages(base string) (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"base":  func() string { return base },
		"pe":    url.PathEscape,
		"qe":    url.QueryEscape,
		"pp":    escapePath,
		"stamp": stamp,
		"bytes": humanBytes,
		"add":   func(a, b int) int { return a + b },
		"nouns": nouns,
		"filterForm": func(t threadRef) activityData {
			a := threadURL(t) + "/"
			return activityData{Scope: t.Scope, Thread: t.Thread, Action: a,
				Links: activityLinks{HideAppends: a + "?hide=appends", ShowAppends: a, Clear: a}}
		},
	}
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := layout.Clone()
		if err != nil {
			return nil, err
		}
		if t, err = t.ParseFS(templateFS, "templates/"+name+".html"); err != nil {
			return nil, fmt.Errorf("template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// render writes a page; a template error becomes a 500 before any byte
// is sent.
func (in *Inspector) render(w http.ResponseWriter, r *http.Request, code int, name string, d pageData) {
	d.Base = in.cfg.Base
	v := viewerOf(r.Context())
	d.Who, d.SignedIn = v.who, v.signedIn
	var buf bytes.Buffer
	if err := in.pages[name].ExecuteTemplate(&buf, "layout.html", d); err != nil {
		in.log.Error("rendering a page", "page", name, "error", err.Error())
		http.Error(w, "cannot render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// fail answers an error: satchel's refusals with their message and the
// status that fits, anything else as a 500 whose detail goes to the log.
func (in *Inspector) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := http.StatusInternalServerError, "the store failed to answer; the log says why"
	var lr *limitRefusal
	switch {
	case errors.As(err, &lr):
		code, msg = lr.code, lr.msg
		if code == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "5")
		}
	case errors.Is(err, satchel.ErrNotFound):
		code, msg = http.StatusNotFound, err.Error()
	case errors.Is(err, satchel.ErrAccessDenied):
		code, msg = http.StatusForbidden, err.Error()
	case errors.Is(err, satchel.ErrInvalidPath), errors.Is(err, satchel.ErrInvalidArgument),
		errors.Is(err, satchel.ErrInvalidPattern), errors.Is(err, satchel.ErrInvalidRange),
		errors.Is(err, satchel.ErrLimitExceeded), errors.Is(err, errBadRequest):
		code, msg = http.StatusBadRequest, err.Error()
	default:
		in.log.Error("inspector request failed", "path", r.URL.Path, "error", err.Error())
	}
	in.render(w, r, code, "error", pageData{Title: http.StatusText(code), Data: msg})
}

var errBadRequest = errors.New("bad request")

// limitRefusal is the refusal of one of the inspector's bounds: it
// matches satchel.ErrLimitExceeded and answers with its own status (429
// for a bound of the caller's own, 503 for one of the whole inspector).
type limitRefusal struct {
	code int
	msg  string
}

func (e *limitRefusal) Error() string        { return e.msg }
func (e *limitRefusal) Is(target error) bool { return target == satchel.ErrLimitExceeded }

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadRequest, fmt.Sprintf(format, args...))
}

// escapePath escapes each segment of a file path for a URL, keeping "/".
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	case n < 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GiB"
}

// intParam reads a non-negative integer query parameter (def when absent).
func intParam(r *http.Request, name string, def int64) (int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest("%s must be a non-negative integer, was %q", name, s)
	}
	return n, nil
}

func satchelNotFound(err error) bool { return errors.Is(err, satchel.ErrNotFound) }

// refusal is a satchel error of kind, as the Go API makes them, so that
// fail maps it to the same status.
func refusal(kind error, format string, args ...any) error {
	return &satchel.Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// nouns writes n with its noun: "1 file", "3 files".
func nouns(n any, one, many string) string {
	if p, ok := n.(*int64); ok && p != nil {
		n = *p
	}
	if fmt.Sprint(n) == "1" {
		return "1 " + one
	}
	return fmt.Sprint(n) + " " + many
}
