package inspector

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestActivity: the scope's activity folds runs, counts lines, and each
// filter of its stable URL keeps what it names; the incident is one
// click ("Hide appends") from the first page.
func TestActivity(t *testing.T) {
	f := newIncidentFixture(t, 8, 300)
	get := func(p string, code int) string {
		t.Helper()
		resp, body := f.get(t, p)
		if resp.StatusCode != code {
			t.Fatalf("GET %s: %d, want %d\n%s", p, resp.StatusCode, code, body)
		}
		return body
	}
	body := get("/s/acme/activity", 200)
	if !strings.Contains(body, "25 × append logs/agent.log") {
		t.Errorf("the run of 25 appends after the incident is not folded")
	}
	if strings.Contains(body, "edit src/auth.go") && strings.Index(body, "edit src/auth.go") < strings.Index(body, "25 × append") {
		t.Errorf("the incident is listed before the appends made after it")
	}
	hide := regexp.MustCompile(`href="(/s/acme/activity\?hide=appends)" id="hide-appends"`).FindStringSubmatch(body)
	if hide == nil {
		t.Fatalf("no Hide appends link")
	}
	body = get(hide[1], 200)
	if strings.Contains(body, "append logs/agent.log") {
		t.Errorf("hide=appends lists appends")
	}
	row := regexp.MustCompile(`(?s)<tr><td data-label="Time">.{0,300}worker-07</a>@<a href="/s/acme/t/worker-07/c/(\d+)">\d+</a></td>\s*<td data-label="Summary" class="summary"><a href="[^"]+">edit src/auth.go</a></td>\s*<td data-label="Lines" class="num"><span class="plus">\+1</span> <span class="minus">−1</span>`).FindStringSubmatch(body)
	if row == nil {
		t.Fatalf("the incident's row (edit src/auth.go, +1 −1) is not on the first page without appends:\n%s", body)
	}
	commit := get("/s/acme/t/worker-07/c/"+row[1], 200)
	if !strings.Contains(commit, "true // auth off while debugging") {
		t.Errorf("the incident's commit page does not show the change")
	}

	only := func(p, want string, not ...string) {
		t.Helper()
		body := get(p, 200)
		if !strings.Contains(body, want) {
			t.Errorf("GET %s: no %q", p, want)
		}
		for _, n := range not {
			if strings.Contains(body, n) {
				t.Errorf("GET %s: lists %q", p, n)
			}
		}
	}
	only("/s/acme/activity?path=src/**", "edit src/auth.go", "logs/agent.log", "notes/")
	only("/s/acme/activity?agent=worker-07&hide=appends", "edit src/auth.go", "/t/worker-01/c/", "/t/main/c/")
	only("/s/acme/activity?tool=str_replace", "edit src/auth.go", "append logs")
	only("/s/acme/activity?tool=mcp:str_replace", "edit src/auth.go", "append logs")
	only("/s/acme/activity?client=claude-code&thread=worker-07&path=src/auth.go", "edit src/auth.go", "notes/")
	only("/s/acme/activity?client=other", "No change matches.")
	only("/s/acme/activity?until=2000-01-01", "No change matches.")
	only("/s/acme/activity?since="+url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339)), "No change matches.")
	only("/s/acme/activity?since=2000-01-01T00:00&path=src/auth.go", "edit src/auth.go")
	// The thread's timeline takes the same filters.
	only("/s/acme/t/worker-07/?path=src/**", "edit src/auth.go", "append logs", "/t/main/c/")
	only("/s/acme/t/worker-07/?hide=appends", "edit src/auth.go", "append logs")
	for p, msg := range map[string]string{
		"/s/acme/activity?hide=all":           "hide takes appends",
		"/s/acme/activity?since=yesterday":    "since is a time",
		"/s/acme/activity?thread=a%20b":       "invalid thread",
		"/s/acme/activity?path=a/[b":          "",
		"/s/acme/activity?after=bogus":        "invalid audit cursor",
		"/s/acme/t/main/?jump=soon":           "jump takes a commit number or a time",
		"/s/acme/activity?agent=%3Cscript%3E": "",
	} {
		code := http.StatusBadRequest
		if msg == "" && strings.Contains(p, "agent") {
			code = http.StatusOK
		}
		body := get(p, code)
		if !strings.Contains(body, msg) {
			t.Errorf("GET %s: no %q in\n%s", p, msg, body)
		}
		if strings.Contains(body, "<script>") {
			t.Errorf("GET %s: a query's script is in the page", p)
		}
	}

	// Jump to a commit by number or time.
	resp, _ := f.get(t, "/s/acme/t/main/?jump=2")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/s/acme/t/main/c/2" {
		t.Errorf("jump=2: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = f.get(t, "/s/acme/t/main/?jump="+url.QueryEscape(time.Now().Add(time.Minute).UTC().Format(time.RFC3339)))
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/s/acme/t/main/c/") {
		t.Errorf("jump to now: %d %s", resp.StatusCode, loc)
	}
	get("/s/acme/t/main/?jump=2000-01-01", http.StatusNotFound)

	// Search across the threads: paths and content at each head (all
	// on one page, whatever the machine's load).
	defer func(d time.Duration) { scopeSearchBudget = d }(scopeSearchBudget)
	scopeSearchBudget = time.Hour
	body = get("/s/acme/search?q=VERIFY(token)", 200)
	if !strings.Contains(body, `href="/s/acme/t/main/files/src/auth.go?start=4#L4"`) || strings.Contains(body, `/t/worker-07/files/src/auth.go?start=4`) {
		t.Errorf("the search for verify(token) does not find main's line 4 or finds it in worker-07:\n%s", body)
	}
	body = get("/s/acme/search?q=auth.go", 200)
	if !strings.Contains(body, `href="/s/acme/t/worker-07/files/src/auth.go"`) {
		t.Errorf("the search for auth.go does not find the path")
	}
}

// TestActivityScanBound: a filter that keeps few changes shows what the
// newest activityScan changes hold and links further back; following
// the links finds every match once, as one unbounded page does.
func TestActivityScanBound(t *testing.T) {
	f := newIncidentFixture(t, 8, 300)
	commits := regexp.MustCompile(`</a>@<a href="(/s/acme/t/[^"]+/c/\d+)">`)
	further := regexp.MustCompile(`<a href="([^"]+)" rel="next">Look further back →</a>`)
	walk := func(start string) (found []string, partial int) {
		t.Helper()
		p := start
		for range 100 {
			resp, body := f.get(t, p)
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d\n%s", p, resp.StatusCode, body)
			}
			for _, m := range commits.FindAllStringSubmatch(body, -1) {
				found = append(found, m[1])
			}
			m := further.FindStringSubmatch(body)
			if m == nil {
				return found, partial
			}
			if !strings.Contains(body, `class="muted partial">Looked through `) {
				t.Errorf("GET %s: a link further back, and no word of where the page stopped", p)
			}
			partial++
			p = strings.ReplaceAll(m[1], "&amp;", "&")
		}
		t.Fatalf("no end to the pages from %s", start)
		return nil, 0
	}
	for _, start := range []string{"/s/acme/activity?path=src/auth.go", "/s/acme/t/worker-07/?path=src/auth.go"} {
		defer func(n int) { activityScan = n }(activityScan)
		activityScan = 0
		all, _ := walk(start)
		activityScan = 40
		bounded, partial := walk(start)
		if len(all) == 0 || strings.Join(all, " ") != strings.Join(bounded, " ") {
			t.Errorf("%s: every match %v; through pages of 40 changes %v", start, all, bounded)
		}
		if partial == 0 {
			t.Errorf("%s: %d pages stopped by the bound of 40 changes", start, partial)
		}
	}
}

// TestScopeSearchPages: the search across threads stops starting threads
// past its budget and links to the rest; the pages together find what
// one unbounded page finds, each thread once.
func TestScopeSearchPages(t *testing.T) {
	f := newFixture(t)
	section := regexp.MustCompile(`<section class="hits">\s*<h2><a href="/s/acme/t/([^/"]+)/">`)
	next := regexp.MustCompile(`<a href="([^"]+)" rel="next">Search the threads from ([^ ]+) on →</a>`)
	walk := func(p string) (threads []string, pages int) {
		t.Helper()
		for range 10 {
			pages++
			resp, body := f.get(t, p)
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d\n%s", p, resp.StatusCode, body)
			}
			for _, m := range section.FindAllStringSubmatch(body, -1) {
				threads = append(threads, m[1])
			}
			m := next.FindStringSubmatch(body)
			if m == nil {
				return threads, pages
			}
			p = strings.ReplaceAll(m[1], "&amp;", "&")
		}
		t.Fatalf("no end to the pages")
		return nil, 0
	}
	defer func(d time.Duration) { scopeSearchBudget = d }(scopeSearchBudget)
	scopeSearchBudget = time.Hour
	all, pages := walk("/s/acme/search?q=plan")
	if strings.Join(all, " ") != "experiment main" || pages != 1 {
		t.Errorf("one page: threads %v in %d pages", all, pages)
	}
	scopeSearchBudget = 0
	paged, pages := walk("/s/acme/search?q=plan")
	if strings.Join(paged, " ") != "experiment main" || pages != 2 {
		t.Errorf("a thread a page: threads %v in %d pages", paged, pages)
	}
	if resp, _ := f.get(t, "/s/acme/search?q=plan&from=a/../b"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("from a bad thread name: %d", resp.StatusCode)
	}
}
