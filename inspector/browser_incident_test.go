package inspector

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserFindsIncident: in a store of 20 threads and about 2,000
// commits, the incident (an auth check disabled in a fork, under many
// appends to a log) is found from the activity page in at most three
// clicks.
func TestBrowserFindsIncident(t *testing.T) {
	ctx := browser(t)
	f := newIncidentFixture(t, 20, 2000)
	u := f.srv.URL
	clicks := 0
	click := func(sel string) {
		t.Helper()
		clicks++
		follow(t, ctx, "click "+sel, chromedp.Click(chromedp.CSS(sel)), chromedp.WaitVisible(chromedp.CSS(`h1`)))
	}
	do(t, ctx, "open the activity", chromedp.Navigate(u+"/s/acme/activity"), chromedp.WaitVisible(chromedp.CSS(`table.activity`)))
	if s := eval[string](t, ctx, `document.querySelector('table.activity').textContent`); !strings.Contains(s, "25 × append logs/agent.log") {
		t.Errorf("the run of appends after the incident is not folded")
	}
	click(`#hide-appends`)
	found := eval[string](t, ctx, `(function(){
		var a = Array.from(document.querySelectorAll('table.activity td.summary a')).find(e => e.textContent.indexOf('src/auth.go') >= 0);
		if (!a) return '';
		a.id = 'incident';
		return a.getAttribute('href');
	})()`)
	if found == "" {
		t.Fatalf("no change of src/auth.go on the activity page without appends")
	}
	click(`#incident`)
	if s := eval[string](t, ctx, `document.querySelector('table.diff').textContent`); !strings.Contains(s, "return true // auth off while debugging") {
		t.Errorf("the commit page does not show the disabled check:\n%s", s)
	}
	if who := eval[string](t, ctx, `document.querySelector('dl.meta').textContent`); !strings.Contains(who, incidentThread) || !strings.Contains(who, "mcp:str_replace") {
		t.Errorf("the commit does not name its agent and tool:\n%s", who)
	}
	if clicks > 3 {
		t.Errorf("%d clicks to the incident, want at most 3", clicks)
	}
	// The change's blame names the fork's commit; the first lines, main's.
	do(t, ctx, "open the blame", chromedp.Navigate(u+"/s/acme/t/"+incidentThread+"/blame/src/auth.go"), chromedp.WaitVisible(chromedp.CSS(`table.blame`)))
	if s := eval[string](t, ctx, `document.querySelector('tr#L1 td.who').textContent + '|' + document.querySelector('tr#L4 td.who').textContent`); !strings.HasPrefix(s, "main@1") || !strings.Contains(s, "|"+incidentThread+"@") {
		t.Errorf("the blame across the fork: %q", s)
	}
}

// TestBrowserReadingAids: an image diff, an append's tail, a rename,
// blame across a fork, a rendered Markdown file, a download and a spill.
func TestBrowserReadingAids(t *testing.T) {
	ctx := browser(t)
	f, c := newAidsFixture(t)
	u := f.srv.URL
	do(t, ctx, "the image diff", chromedp.Navigate(u+"/s/acme/t/main/c/"+seq(c.image)), chromedp.WaitVisible(chromedp.CSS(`.images img[alt="after"]`)))
	if n := eval[int](t, ctx, `Array.from(document.querySelectorAll('.images img')).filter(i => i.complete && i.naturalWidth == 8).length`); n != 2 {
		t.Errorf("%d images shown of the two sides", n)
	}
	do(t, ctx, "the append", chromedp.Navigate(u+"/s/acme/t/main/files/logs/big.log"), chromedp.WaitVisible(chromedp.CSS(`a.last`)))
	follow(t, ctx, "its last page", chromedp.Click(chromedp.CSS(`a.last`)), chromedp.WaitVisible(chromedp.CSS(`table.code`)))
	if s := eval[string](t, ctx, `Array.from(document.querySelectorAll('table.code td.code')).pop().textContent`); s != "THE LAST APPENDED LINE" {
		t.Errorf("the log's last page ends with %q", s)
	}
	// The tail follows the log as it grows.
	if !strings.Contains(eval[string](t, ctx, `location.search`), "tail=1") {
		t.Errorf("the last page's URL is not the tail: %s", eval[string](t, ctx, `location.href`))
	}
	do(t, ctx, "live", chromedp.WaitVisible(chromedp.CSS(`html[data-live="open"]`)))
	lw, _ := f.st.Workspace(context.Background(), "acme", "main")
	if err := lw.Append(context.Background(), "logs/big.log", "A LINE WRITTEN WHILE WATCHING\n"); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "see the new last line", chromedp.WaitVisible(chromedp.Search(`//td[contains(., "A LINE WRITTEN WHILE WATCHING")]`)))
	do(t, ctx, "the rename", chromedp.Navigate(u+"/s/acme/t/main/c/"+seq(c.rename)), chromedp.WaitVisible(chromedp.CSS(`section.filediff`)))
	if s := eval[string](t, ctx, `document.querySelector('section.filediff h3').textContent`); s != "renamed docs/old-name.txt → docs/new-name.txt" {
		t.Errorf("the rename's header: %q", s)
	}
	follow(t, ctx, "split", chromedp.Click(chromedp.CSS(`a.view`)), chromedp.WaitVisible(chromedp.CSS(`table.diff.split`)))
	do(t, ctx, "blame across the fork", chromedp.Navigate(u+"/s/acme/t/experiment/blame/src/main.go"), chromedp.WaitVisible(chromedp.CSS(`table.blame`)))
	if s := eval[string](t, ctx, `document.querySelector('tr#L1 td.who a').textContent`); s != "main@2" {
		t.Errorf("blame of an inherited line: %q", s)
	}
	do(t, ctx, "the Markdown", chromedp.Navigate(u+"/s/acme/t/main/files/docs/readme.md"), chromedp.WaitVisible(chromedp.CSS(`article.markdown h1`)))
	if s := eval[string](t, ctx, `document.querySelector('article.markdown strong').textContent`); s != "bold" {
		t.Errorf("rendered Markdown: %q", s)
	}
	if v := eval[string](t, ctx, `String(window.__pwned)`); v != "undefined" {
		t.Errorf("script in the Markdown ran: %s", v)
	}
	if n := eval[int](t, ctx, `Array.from(document.querySelectorAll('article.markdown img')).filter(i => !i.src.startsWith(location.origin + '/s/acme/t/main/raw/')).length`); n != 0 {
		t.Errorf("%d images from elsewhere", n)
	}
	disp := evalAsync(t, ctx, `(async function(){ var r = await fetch(document.querySelector('a[download]').href); return r.headers.get('content-disposition') + '|' + (await r.text()).length; })()`)
	if !strings.HasPrefix(disp, `attachment; filename=readme.md|`) {
		t.Errorf("the download answers %q", disp)
	}
	do(t, ctx, "an HTML file's raw bytes", chromedp.Navigate(u+"/s/acme/t/main/files/web/page.html"), chromedp.WaitVisible(chromedp.CSS(`table.code`)))
	raw := evalAsync(t, ctx, `(async function(){ var r = await fetch(location.origin + '/s/acme/t/main/raw/web/page.html'); return r.headers.get('content-type') + '|' + r.headers.get('content-disposition'); })()`)
	if raw != `text/plain; charset=utf-8|attachment; filename=page.html` {
		t.Errorf("an HTML file's raw bytes: %q", raw)
	}
	do(t, ctx, "the spills", chromedp.Navigate(u+"/s/acme/t/main%2Fspill/"), chromedp.WaitVisible(chromedp.CSS(`ul.dir a`)))
	follow(t, ctx, "a spill", chromedp.Click(chromedp.CSS(`ul.dir a`)), chromedp.WaitVisible(chromedp.CSS(`table.code`)))
	if s := eval[string](t, ctx, `document.querySelector('table.code').textContent`); !strings.Contains(s, "spilled <script>line</script> 2") {
		t.Errorf("the spill: %q", s)
	}
	noPlantedScriptRan(t, ctx, "spill")
}

// evalAsync evaluates js, which gives a promise of a string.
func evalAsync(t *testing.T, ctx context.Context, js string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// TestBrowserPhone: on a phone's width the stacked rows keep their
// column labels, and diffs and code wrap or scroll inside their box.
func TestBrowserPhone(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t)
	do(t, ctx, "phone", chromedp.EmulateViewport(360, 740))
	for _, p := range []string{"/s/acme/", "/s/acme/t/main/", "/s/acme/activity", "/s/acme/t/main/history/notes/plan.md"} {
		do(t, ctx, "open "+p, chromedp.Navigate(f.srv.URL+p), chromedp.WaitVisible(chromedp.CSS(`h1`)))
		labels := eval[string](t, ctx, `Array.from(document.querySelectorAll('table.stack tbody tr:first-child td')).filter(td => td.offsetHeight > 0).map(td => getComputedStyle(td, '::before').content).join(',')`)
		if labels == "" || strings.Contains(labels, "none") {
			t.Errorf("%s on a phone: the stacked row's labels are %q", p, labels)
		}
		if over := eval[int](t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 1 {
			t.Errorf("%s on a phone: the page scrolls %d px sideways", p, over)
		}
	}
	// The fork tree scrolls sideways under its lane labels, which stay.
	do(t, ctx, "the fork tree", chromedp.Navigate(f.srv.URL+"/s/acme/tree"), chromedp.WaitVisible(chromedp.CSS(`svg.graph`)))
	moved := eval[string](t, ctx, `(function(){ var box = document.querySelector('div.tree'); var l0 = document.querySelector('svg.lane-labels').getBoundingClientRect().left; box.scrollLeft = 200; var g = document.querySelector('svg.graph').getBoundingClientRect().left; var l1 = document.querySelector('svg.lane-labels').getBoundingClientRect().left; return [box.scrollLeft > 0, Math.round(l1 - l0), Math.round(g)].join(','); })()`)
	if parts := strings.Split(moved, ","); parts[0] != "true" || parts[1] != "0" {
		t.Errorf("scrolling the tree (scrolled, label shift, graph left): %s", moved)
	}
	for _, p := range []string{"/s/acme/t/main/c/4", "/s/acme/t/main/c/4?view=split", "/s/acme/t/main/files/notes/todo.md", "/s/acme/t/main/blame/notes/plan.md"} {
		do(t, ctx, "open "+p, chromedp.Navigate(f.srv.URL+p), chromedp.WaitVisible(chromedp.CSS(`h1`)))
		if over := eval[int](t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 1 {
			t.Errorf("%s on a phone: the page scrolls %d px sideways", p, over)
		}
		// What does not fit scrolls inside its own box, never cut off.
		cut := eval[int](t, ctx, `Array.from(document.querySelectorAll('td.code')).filter(td => { var b = td.closest('.scroll'); return !b || (td.scrollWidth > td.clientWidth + 1 && getComputedStyle(td).overflowX == 'hidden'); }).length`)
		if cut != 0 {
			t.Errorf("%s on a phone: %d lines cut", p, cut)
		}
	}
}
