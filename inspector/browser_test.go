package inspector

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden screenshots in testdata/")

// chromiumPath is Debian's chromium package (.ci/run installs it).
const chromiumPath = "/usr/bin/chromium"

// browser starts a headless Chromium with a fresh profile, or skips.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath
	if _, err := os.Stat(path); err != nil {
		if path, err = exec.LookPath("chromium"); err != nil {
			testenv.Skip(t, "no browser: install Debian's chromium package (%s) to run the browser tests", chromiumPath)
		}
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.NoSandbox, // Chromium refuses to run as root with its sandbox
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("font-render-hinting", "none"),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900)); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// do runs steps, each group within a minute (a wait that never ends fails
// the test instead of hanging it).
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// follow runs leave, which leaves the page (a click on a link or a
// form's button, Enter on a focused link), waits until the next page has
// loaded, its stylesheet too, then runs waits on it, all within a minute.
// A wait alone can pass before the stylesheet applies (a screenshot then
// is of the unstyled page: 1184 pixels wide for 1168) or, when both pages
// match it, on the page being left.
func follow(t *testing.T, ctx context.Context, what string, leave chromedp.Action[chromedp.Void], waits ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, leave); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := chromedp.Do(ctx, waits...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// noPlantedScriptRan checks that none of the fixture's hostile content
// ran: it would have set window.__pwned; the only scripts are ours.
func noPlantedScriptRan(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	if v := eval[string](t, ctx, `String(window.__pwned)`); v != "undefined" {
		t.Errorf("%s: planted script ran (window.__pwned = %s)", page, v)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('script:not([src$="/static/live.js"]), img, iframe, object, embed').length`); n != 0 {
		t.Errorf("%s: %d elements planted by stored content", page, n)
	}
}

func TestBrowserFlows(t *testing.T) {
	f := newFixture(t)
	ctx := browser(t)
	u := f.srv.URL

	// Open a thread: from the scopes, through the scope's table.
	do(t, ctx, "open the scopes", chromedp.Navigate(u+"/"), chromedp.WaitVisible(chromedp.CSS(`a[href="/s/acme/"]`)))
	noPlantedScriptRan(t, ctx, "scopes")
	follow(t, ctx, "open the scope", chromedp.Click(chromedp.CSS(`a[href="/s/acme/"]`)), chromedp.WaitVisible(chromedp.CSS(`table caption`)))
	follow(t, ctx, "open the thread", chromedp.Click(chromedp.CSS(`a[href="/s/acme/t/main/"]`)), chromedp.WaitVisible(chromedp.CSS(`table.timeline`)))
	if h := eval[string](t, ctx, `document.querySelector('h1').textContent`); h != "Thread main" {
		t.Errorf("the thread's page is titled %q", h)
	}
	if txt := eval[string](t, ctx, `document.querySelector('table.timeline').textContent`); !strings.Contains(txt, evilAgent) || !strings.Contains(txt, "draft-1") {
		t.Errorf("the timeline does not show the planted agent name as text, or the checkpoint:\n%s", txt)
	}
	noPlantedScriptRan(t, ctx, "timeline")

	// Keyboard: the first Tab reaches the skip link.
	do(t, ctx, "tab", chromedp.KeyEvent("\t"))
	if cls := eval[string](t, ctx, `document.activeElement.className`); cls != "skip" {
		t.Errorf("the first Tab focuses %q, want the skip link", cls)
	}

	// Follow a fork in the tree, with the keyboard: the fork's first node.
	do(t, ctx, "open the fork tree", chromedp.Navigate(u+"/s/acme/tree"), chromedp.WaitVisible(chromedp.CSS(`svg`)))
	noPlantedScriptRan(t, ctx, "fork tree")
	if n := eval[int](t, ctx, `document.querySelectorAll('svg path.fork').length`); n != 1 {
		t.Errorf("%d fork edges, want 1", n)
	}
	tree := screenshot(t, ctx, `div.tree`)
	do(t, ctx, "focus the fork", chromedp.Focus(chromedp.CSS(`svg a.node[href="/s/acme/t/experiment/c/1"]`)))
	follow(t, ctx, "follow the fork", chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`dl.meta`)))
	if h := eval[string](t, ctx, `document.querySelector('h1').textContent`); h != "Commit 1 of experiment" {
		t.Errorf("following the fork opened %q", h)
	}
	if s := eval[string](t, ctx, `document.querySelector('dl.meta').textContent`); !strings.Contains(s, "fork of main@2") {
		t.Errorf("the fork's commit says:\n%s", s)
	}

	// Open a diff: the fork's rewrite of the plan.
	do(t, ctx, "open the thread", chromedp.Navigate(u+"/s/acme/t/experiment/"), chromedp.WaitVisible(chromedp.CSS(`table.timeline`)))
	follow(t, ctx, "open the diff", chromedp.Click(chromedp.CSS(`a[href="/s/acme/t/experiment/c/2"]`)), chromedp.WaitVisible(chromedp.CSS(`table.diff`)))
	rows := eval[string](t, ctx, `Array.from(document.querySelectorAll('table.diff tr.add td.code')).map(e => e.textContent).join('|')`)
	if rows != "+# Plan B|+1. guess" {
		t.Errorf("the diff's added lines: %q", rows)
	}
	diff := screenshot(t, ctx, `section.filediff`)
	do(t, ctx, "open the planted file's diff", chromedp.Navigate(u+"/s/acme/t/experiment/c/3"), chromedp.WaitVisible(chromedp.CSS(`table.diff`)))
	noPlantedScriptRan(t, ctx, "diff of a planted file")
	if s := eval[string](t, ctx, `document.querySelector('section.filediff h3').textContent`); !strings.Contains(s, evilPath) {
		t.Errorf("the planted path is not shown as text: %q", s)
	}

	// Grep, then follow a match to its line.
	do(t, ctx, "open the files", chromedp.Navigate(u+"/s/acme/t/main/files/"), chromedp.WaitVisible(chromedp.CSS(`#grep`)))
	do(t, ctx, "type the pattern", chromedp.SendKeys(chromedp.CSS(`#grep`), "think"))
	follow(t, ctx, "grep", chromedp.Submit(chromedp.CSS(`#grep`)),
		chromedp.WaitVisible(chromedp.CSS(`table.grep`)))
	if m := eval[string](t, ctx, `document.querySelector('table.grep').textContent`); !strings.Contains(m, "notes/plan.md:3") || !strings.Contains(m, "2. think hard") {
		t.Errorf("grep found:\n%s", m)
	}
	follow(t, ctx, "follow the match", chromedp.Click(chromedp.CSS(`table.grep a`)), chromedp.WaitVisible(chromedp.CSS(`tr#L3`)))
	if line := eval[string](t, ctx, `document.querySelector('tr:target').textContent`); line != "32. think hard" {
		t.Errorf("the linked line is %q", line)
	}
	do(t, ctx, "grep the planted text", chromedp.Navigate(u+"/s/acme/t/main/search?grep=pwned"), chromedp.WaitVisible(chromedp.CSS(`table.grep`)))
	noPlantedScriptRan(t, ctx, "grep")

	// The planted document and its history.
	do(t, ctx, "open the document", chromedp.Navigate(u+"/s/acme/docs/notes/doc?key=n1"), chromedp.WaitVisible(chromedp.CSS(`pre.json`)))
	noPlantedScriptRan(t, ctx, "document")
	if s := eval[string](t, ctx, `document.querySelector('pre.json').textContent`); !strings.Contains(s, "second <script>") {
		t.Errorf("the document is not shown as text:\n%s", s)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('section.version').length`); n != 1 {
		t.Errorf("%d earlier versions shown, want 1", n)
	}

	compareGolden(t, "tree.png", tree)
	compareGolden(t, "diff.png", diff)
}

// A commit made by another process appears in the open timeline and the
// open file, with no reload.
func TestBrowserLive(t *testing.T) {
	f := newFixture(t)
	ctx := browser(t)
	u := f.srv.URL
	write := func(path, content string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "SATCHEL_INSPECTOR_WRITE="+strings.Join([]string{f.db, "acme", "main", path, content}, "|"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the other process: %v\n%s", err, out)
		}
	}
	head := eval0(t, f)

	do(t, ctx, "open the timeline", chromedp.Navigate(u+"/s/acme/t/main/"), chromedp.WaitVisible(chromedp.CSS(`html[data-live="open"]`)))
	eval[int](t, ctx, `window.__same = 1`)
	write("live/new.md", "from another process\n")
	do(t, ctx, "see the commit", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-seq="%d"]`, head+1))))
	if s := eval[string](t, ctx, fmt.Sprintf(`document.querySelector('tr[data-seq="%d"]').textContent`, head+1)); !strings.Contains(s, "write live/new.md") || !strings.Contains(s, "other-process") {
		t.Errorf("the new row: %q", s)
	}
	if v := eval[int](t, ctx, `window.__same`); v != 1 {
		t.Errorf("the page reloaded")
	}

	do(t, ctx, "open the file", chromedp.Navigate(u+"/s/acme/t/main/files/live/new.md"), chromedp.WaitVisible(chromedp.CSS(`html[data-live="open"]`)))
	write("live/new.md", "rewritten elsewhere\n")
	do(t, ctx, "see the file change", chromedp.WaitVisible(chromedp.Search(`//article[contains(., "rewritten elsewhere")] | //td[contains(., "rewritten elsewhere")]`)))

	// Leaving the page closes its stream.
	do(t, ctx, "leave", chromedp.Navigate(u+"/"))
	done := make(chan struct{})
	go func() { f.in.streams.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Errorf("a live stream is still open after its page closed")
	}
}

func eval0(t *testing.T, f *fixture) int64 {
	t.Helper()
	ws, _ := f.st.Workspace(context.Background(), "acme", "main")
	snap, err := ws.At(context.Background(), "head")
	if err != nil {
		t.Fatal(err)
	}
	return snap.Commit().Seq
}

// At 400% zoom (a 1200-pixel window is 300 CSS pixels wide) the pages
// reflow: nothing but code and tables scrolls sideways.
func TestBrowserZoom(t *testing.T) {
	f := newFixture(t)
	ctx := browser(t)
	do(t, ctx, "zoom", chromedp.EmulateViewport(300, 225))
	for _, p := range []string{"/", "/s/acme/", "/s/acme/t/main/", "/s/acme/t/main/c/4", "/s/acme/t/main/files/", "/s/acme/t/main/files/notes/plan.md",
		"/s/acme/tree", "/s/acme/docs/notes/", "/s/acme/docs/notes/doc?key=n1", "/s/acme/t/experiment/compare?from_thread=main&from=2&to=head", "/s/acme/t/main/search?grep=think", "/signin",
		"/s/acme/activity", "/s/acme/t/main/blame/notes/plan.md", "/s/acme/t/main/c/4?view=split", "/s/acme/search?q=plan"} {
		do(t, ctx, "open "+p, chromedp.Navigate(f.srv.URL+p), chromedp.WaitVisible(chromedp.CSS(`h1`)))
		if over := eval[int](t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 1 {
			t.Errorf("%s at 400%%: the page scrolls %d px sideways", p, over)
		}
	}
}

// screenshot takes a picture of the element sel of a page that has
// loaded, with its stylesheet and fonts (follow and Navigate wait for the
// load; the poll keeps a screenshot after a bare wait from picturing the
// unstyled page).
func screenshot(t *testing.T, ctx context.Context, sel string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.readyState === "complete" && document.fonts.status === "loaded"`, chromedp.WithPollingTimeout(0))); err != nil {
		t.Fatalf("waiting for the page of %s to load: %v", sel, err)
	}
	b, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", sel, err)
	}
	return b
}

// maxDifferentShare is the share of pixels a screenshot may differ from its
// golden picture by (font rendering moves an edge pixel here and there).
const maxDifferentShare = 0.01

// compareGolden compares a screenshot with testdata/NAME (rewritten with
// -update): same size, and at most maxDifferentShare of pixels differing
// by more than a small amount in a channel.
func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Browser -update to make it)", err)
	}
	share, err := pixelDifference(want, got)
	if err != nil || share > maxDifferentShare {
		out := filepath.Join(t.TempDir(), name)
		_ = os.WriteFile(out, got, 0o644)
		t.Errorf("%s: %.2f%% of pixels differ (at most %.2f%%), %v; the new picture is %s",
			name, share*100, maxDifferentShare*100, err, out)
	}
}

func pixelDifference(a, b []byte) (float64, error) {
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return 1, err
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return 1, err
	}
	if ia.Bounds().Size() != ib.Bounds().Size() {
		return 1, fmt.Errorf("size %v, golden %v", ib.Bounds().Size(), ia.Bounds().Size())
	}
	return differentShare(ia, ib), nil
}

func differentShare(a, b image.Image) float64 {
	ra, rb := a.Bounds(), b.Bounds()
	diff := 0
	for y := 0; y < ra.Dy(); y++ {
		for x := 0; x < ra.Dx(); x++ {
			r1, g1, b1, _ := a.At(ra.Min.X+x, ra.Min.Y+y).RGBA()
			r2, g2, b2, _ := b.At(rb.Min.X+x, rb.Min.Y+y).RGBA()
			if far(r1, r2) || far(g1, g2) || far(b1, b2) {
				diff++
			}
		}
	}
	return float64(diff) / float64(ra.Dx()*ra.Dy())
}

func far(a, b uint32) bool {
	const tolerance = 24 << 8 // of 65535
	if a > b {
		return a-b > tolerance
	}
	return b-a > tolerance
}

// Signing in with a token in a real browser: the form posts with the
// page's own Origin, the session cookie is invisible to scripts, and
// signing out ends the session.
func TestBrowserSignIn(t *testing.T) {
	f := newFixture(t)
	secret, _, err := f.st.CreateToken(context.Background(), satchel.TokenSpec{Agent: "research", Scope: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	u := f.srv.URL
	do(t, ctx, "open a page", chromedp.Navigate(u+"/s/acme/t/main/"), chromedp.WaitVisible(chromedp.CSS(`#token`)))
	do(t, ctx, "a wrong token", chromedp.SendKeys(chromedp.CSS(`#token`), "stk_wrong"), chromedp.Submit(chromedp.CSS(`#token`)),
		chromedp.WaitVisible(chromedp.CSS(`p.error`)))
	if msg := eval[string](t, ctx, `document.querySelector('p.error').textContent`); msg != "invalid token" {
		t.Errorf("a wrong token says %q", msg)
	}
	do(t, ctx, "sign in", chromedp.SendKeys(chromedp.CSS(`#token`), secret), chromedp.Submit(chromedp.CSS(`#token`)),
		chromedp.WaitVisible(chromedp.CSS(`table.timeline`)))
	if loc := eval[string](t, ctx, `location.pathname`); loc != "/s/acme/t/main/" {
		t.Errorf("after sign-in the browser is at %s, want the page it asked for", loc)
	}
	if c := eval[string](t, ctx, `document.cookie`); c != "" {
		t.Errorf("scripts see the cookie %q", c)
	}
	do(t, ctx, "another scope", chromedp.Navigate(u+"/s/globex/"), chromedp.WaitVisible(chromedp.CSS(`p.error`)))
	if msg := eval[string](t, ctx, `document.querySelector('p.error').textContent`); msg != "scope not found: globex" {
		t.Errorf("another scope says %q", msg)
	}
	do(t, ctx, "open the scopes", chromedp.Navigate(u+"/"))
	follow(t, ctx, "sign out", chromedp.Click(chromedp.CSS(`header button`)), chromedp.WaitVisible(chromedp.CSS(`#token`)))
	do(t, ctx, "after sign-out", chromedp.Navigate(u+"/s/acme/"), chromedp.WaitVisible(chromedp.CSS(`#token`)))
}

// A destination after sign-in with a tab between its slashes
// (next=/%09/HOST/) used to be answered Location: /\t/HOST/, which a
// browser reads as //HOST/ (the page's form-action policy then stopped
// Chromium on the sign-in page, blocked). Chromium now lands on the
// inspector's "/" and never reaches the other host.
func TestBrowserSignInStaysOnSite(t *testing.T) {
	f := newFixture(t)
	secret, _, err := f.st.CreateToken(context.Background(), satchel.TokenSpec{Agent: "research", Scope: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	var reached atomic.Int64
	// The other site shows the link the inspector's scope list shows, so
	// that the wait below ends on either site.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>elsewhere</title><a href="/s/acme/">acme</a>`))
	}))
	t.Cleanup(evil.Close)
	other := strings.TrimPrefix(evil.URL, "http://")
	ctx := browser(t)
	u := f.srv.URL
	for _, next := range []string{"/\t/" + other + "/", "/\n/" + other + "/", "/\\" + other + "/", "//" + other + "/"} {
		do(t, ctx, "open the sign-in form", chromedp.Navigate(u+"/signin?next="+url.QueryEscape(next)), chromedp.WaitVisible(chromedp.CSS(`#token`)))
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := chromedp.Do(sctx, chromedp.SendKeys(chromedp.CSS(`#token`), secret), chromedp.Submit(chromedp.CSS(`#token`)),
			chromedp.WaitVisible(chromedp.CSS(`a[href="/s/acme/"]`)))
		cancel()
		loc := eval[string](t, ctx, `location.href`)
		if err != nil || loc != u+"/" {
			t.Fatalf("next %q: after sign-in the browser is at %s (%v), want %s/", next, loc, err, u)
		}
		if n := reached.Load(); n != 0 {
			t.Fatalf("next %q: the browser reached the other host (%d requests)", next, n)
		}
		follow(t, ctx, "sign out", chromedp.Click(chromedp.CSS(`header button`)), chromedp.WaitVisible(chromedp.CSS(`#token`)))
	}
}
