package inspector

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

func pngOf(c color.Color) string {
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for x := 0; x < 8; x++ {
		for y := 0; y < 8; y++ {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.String()
}

// aidsCommits are the commits newAidsFixture makes in acme/main after
// the fixture's own, by name.
type aidsCommits struct{ image, binary, append, rename, spill int64 }

// newAidsFixture is the fixture with, in acme/main: an image changed, a
// binary file changed, a 5 MiB log appended to, a file moved and changed,
// Markdown, JSON, HTML and SVG files, and a spill.
func newAidsFixture(t testing.TB) (*fixture, aidsCommits) {
	t.Helper()
	f := newFixture(t)
	ctx := context.Background()
	ws, err := f.st.Workspace(ctx, "acme", "main", satchel.WorkspaceActor(satchel.Actor{Agent: "painter", Via: "mcp:write_file"}))
	if err != nil {
		t.Fatal(err)
	}
	var c aidsCommits
	head := func() int64 {
		h, err := ws.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return h.Seq
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ws.Write(ctx, "img/logo.png", pngOf(color.RGBA{255, 0, 0, 255})))
	must(ws.Write(ctx, "img/logo.png", pngOf(color.RGBA{0, 0, 255, 255})))
	c.image = head()
	must(ws.Write(ctx, "data/blob.bin", "\x00\x01\x02 old"))
	must(ws.Write(ctx, "data/blob.bin", "\x00\x01\x02 new"))
	c.binary = head()
	big := strings.Repeat("an old line of the log, long enough to make the file big\n", 5<<20/57)
	must(ws.Write(ctx, "logs/big.log", big))
	must(ws.Append(ctx, "logs/big.log", strings.Repeat("a new line\n", 5000)+"THE LAST APPENDED LINE\n"))
	c.append = head()
	must(ws.Write(ctx, "docs/old-name.txt", "one\ntwo\nthree\nfour\nfive\n"))
	must(ws.Batch(ctx, func(ctx context.Context, b *satchel.Batch) error {
		if err := b.Move(ctx, "docs/old-name.txt", "docs/new-name.txt"); err != nil {
			return err
		}
		_, err := b.StrReplace(ctx, "docs/new-name.txt", "three", "three and more", false)
		return err
	}))
	c.rename = head()
	must(ws.Write(ctx, "docs/readme.md", "# Title <script>window.__pwned=7</script>\n\nSome **bold** and *em* and `code`.\n\n"+
		"- [local](../notes/plan.md)\n- [remote](https://example.com/x)\n- [bad](javascript:alert(1))\n\n"+
		"![logo](../img/logo.png) ![tracker](https://evil.example/t.png)\n\n<img src=x onerror=\"window.__pwned=8\">\n\n```\n<b>code</b>\n```\n"))
	must(ws.Write(ctx, "data/conf.json", `{"b":[1,2],"a":{"c":"<script>"}}`))
	must(ws.Write(ctx, "web/page.html", "<html><script>window.__pwned=9</script></html>\n"))
	must(ws.Write(ctx, "web/pic.svg", `<svg xmlns="http://www.w3.org/2000/svg"><script>window.__pwned=10</script></svg>`))
	must(ws.SaveSpill(ctx, "spill/grep-1.txt", "spilled line 1\nspilled <script>line</script> 2\n"))
	c.spill = head()
	return f, c
}

func seq(n int64) string { return strconv.FormatInt(n, 10) }

// TestDiffKinds: an image diff shows both sides through the raw URL, a
// binary file its facts, an append to a 5 MiB log its lines, a move a
// rename with its diff, the split view both sides, changed words marked.
func TestDiffKinds(t *testing.T) {
	f, c := newAidsFixture(t)
	get := func(p string) string {
		t.Helper()
		resp, body := f.get(t, p)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d\n%s", p, resp.StatusCode, body)
		}
		return body
	}
	body := get("/s/acme/t/main/c/" + seq(c.image))
	for _, want := range []string{`<img src="/s/acme/t/main/raw/img/logo.png?at=` + seq(c.image-1) + `" alt="before">`,
		`<img src="/s/acme/t/main/raw/img/logo.png?at=` + seq(c.image) + `" alt="after">`, "image/png"} {
		if !strings.Contains(body, want) {
			t.Errorf("the image diff has no %s", want)
		}
	}
	if strings.Contains(body, "PNG") && strings.Contains(body, `class="add"`) {
		t.Errorf("the image is diffed as text")
	}
	body = get("/s/acme/t/main/c/" + seq(c.binary))
	if !strings.Contains(body, "application/octet-stream, 7 B, SHA-256") || strings.Contains(body, " new</td>") {
		t.Errorf("binary content is not described by its facts:\n%s", body)
	}
	body = get("/s/acme/t/main/c/" + seq(c.append))
	if !strings.Contains(body, "a new line") || strings.Contains(body, "too large") || strings.Contains(body, "an old line") {
		t.Errorf("the append to a 5 MiB log does not show its lines alone")
	}
	more := regexp.MustCompile(`<a href="([^"]+)" rel="next">The next rows of this diff`).FindStringSubmatch(body)
	if !strings.Contains(body, "appended from line ") || more == nil {
		t.Fatalf("the append is not numbered or not paged")
	}
	body = get(strings.ReplaceAll(more[1], "&amp;", "&"))
	if !strings.Contains(body, "THE LAST APPENDED LINE") || strings.Contains(body, "an old line") {
		t.Errorf("the append's next rows do not end with its last line")
	}
	body = get("/s/acme/t/main/c/" + seq(c.rename))
	if !strings.Contains(body, `<span class="kind renamed">renamed</span> docs/old-name.txt → docs/new-name.txt`) {
		t.Errorf("the move is not a rename:\n%s", body)
	}
	if !strings.Contains(body, "three<mark> and more</mark>") {
		t.Errorf("the renamed file's changed words are not marked")
	}
	if strings.Contains(body, `class="kind removed"`) {
		t.Errorf("the rename also lists a removal")
	}
	body = get("/s/acme/t/main/c/" + seq(c.rename) + "?view=split")
	if !strings.Contains(body, `<table class="diff split">`) || !strings.Contains(body, `class="code del">`) || !strings.Contains(body, `class="code add">`) {
		t.Errorf("no split view")
	}
	for _, link := range []string{`href="/s/acme/t/main/files/docs/new-name.txt?at=` + seq(c.rename) + `"`, `href="/s/acme/t/main/history/docs/new-name.txt"`,
		`href="/s/acme/t/main/raw/docs/new-name.txt?at=` + seq(c.rename) + `"`} {
		if !strings.Contains(body, link) {
			t.Errorf("the file header has no %s", link)
		}
	}
	// The image's page and its raw bytes.
	body = get("/s/acme/t/main/files/img/logo.png")
	if !strings.Contains(body, `<img src="/s/acme/t/main/raw/img/logo.png?at=`) {
		t.Errorf("the image's page does not show it")
	}
}

// TestRawAndDownloads: the raw bytes come with their type, HTML and SVG
// as downloads that cannot run; a snapshot is a tar.gz of the commit.
func TestRawAndDownloads(t *testing.T) {
	f, c := newAidsFixture(t)
	for p, want := range map[string][2]string{
		"/s/acme/t/main/raw/img/logo.png":                  {"image/png", "inline"},
		"/s/acme/t/main/raw/notes/plan.md?at=draft-1":      {"text/plain; charset=utf-8", "inline"},
		"/s/acme/t/main/raw/web/page.html":                 {"text/plain; charset=utf-8", "attachment"},
		"/s/acme/t/main/raw/web/pic.svg":                   {"text/plain; charset=utf-8", "attachment"},
		"/s/acme/t/main/raw/data/blob.bin":                 {"application/octet-stream", "inline"},
		"/s/acme/t/main/raw/notes/plan.md?download=1":      {"text/plain; charset=utf-8", "attachment"},
		"/s/acme/t/experiment/raw/" + escapePath(evilPath): {"text/plain; charset=utf-8", "inline"},
	} {
		resp, body := f.get(t, p)
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d %s", p, resp.StatusCode, body)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); ct != want[0] {
			t.Errorf("GET %s: type %q, want %q", p, ct, want[0])
		}
		if cd := resp.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, want[1]) {
			t.Errorf("GET %s: disposition %q, want %s", p, cd, want[1])
		}
		if resp.Header.Get("Content-Security-Policy") != rawPolicy || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: not sandboxed: %v", p, resp.Header)
		}
	}
	_, body := f.get(t, "/s/acme/t/main/raw/notes/plan.md?at=draft-1")
	if body != "# Plan\n1. read\n2. think\n3. write\n" {
		t.Errorf("raw at draft-1: %q", body)
	}
	for p, code := range map[string]int{
		"/s/acme/t/main/raw/../../globex/t/main/raw/secret.md": 307, // cleaned, then checked again
		"/s/acme/t/main/raw/a/../secret.md":                    307,
		"/s/acme/t/main/raw/a%2F..%2Fsecret.md":                400,
		"/s/acme/t/main/raw/missing.txt":                       404,
		"/s/acme/t/main/raw/notes/plan.md?at=experiment@1":     400,
		"/s/globex/t/main/raw/secret.md":                       200,
		"/s/acme/t/main/snapshot.tar.gz?at=nope":               404,
		"/s/acme/t/main/blame/notes/..%2f..%2fx":               400,
	} {
		resp, body := f.get(t, p)
		if resp.StatusCode != code && !(code == 404 && resp.StatusCode == 400) {
			t.Errorf("GET %s: %d, want %d\n%s", p, resp.StatusCode, code, body)
		}
	}
	resp, body := f.get(t, "/s/acme/t/main/snapshot.tar.gz?at=draft-1")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/gzip" || !strings.Contains(resp.Header.Get("Content-Disposition"), "acme-main-2.tar.gz") {
		t.Fatalf("snapshot: %d %v", resp.StatusCode, resp.Header)
	}
	zr, err := gzip.NewReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name] = string(b)
	}
	if len(files) != 2 || files["main-2/notes/plan.md"] != "# Plan\n1. read\n2. think\n3. write\n" || files["main-2/src/main.go"] == "" {
		t.Errorf("snapshot at draft-1 holds %v", files)
	}
	_ = c
}

// TestReadingAids: Markdown rendered without script or remote images,
// JSON pretty-printed, blame across a fork, history that follows it,
// spills listed and opened.
func TestReadingAids(t *testing.T) {
	f, _ := newAidsFixture(t)
	get := func(p string) string {
		t.Helper()
		resp, body := f.get(t, p)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d\n%s", p, resp.StatusCode, body)
		}
		return body
	}
	body := get("/s/acme/t/main/files/docs/readme.md")
	md := body[strings.Index(body, `<article class="markdown">`):]
	md = md[:strings.Index(md, "</article>")]
	for _, want := range []string{"<h1>Title &lt;script&gt;window.__pwned=7&lt;/script&gt;</h1>", "<strong>bold</strong>", "<em>em</em>", "<code>code</code>",
		`<a href="/s/acme/t/main/files/notes/plan.md?at=`, `<a href="https://example.com/x" rel="noopener noreferrer nofollow">remote</a>`,
		`<img src="/s/acme/t/main/raw/img/logo.png?at=`, `image: tracker</a>`, "&lt;img src=x", "&lt;b&gt;code&lt;/b&gt;"} {
		if !strings.Contains(md, want) {
			t.Errorf("the rendered Markdown has no %s:\n%s", want, md)
		}
	}
	if strings.Contains(md, "javascript:") && strings.Contains(md, `href="javascript`) || strings.Contains(md, `src="https://evil`) || strings.Contains(md, "<script") {
		t.Errorf("the rendered Markdown carries script or a remote image:\n%s", md)
	}
	if !strings.Contains(get("/s/acme/t/main/files/docs/readme.md?view=source"), "# Title &lt;script&gt;") {
		t.Errorf("no source view")
	}
	body = get("/s/acme/t/main/files/data/conf.json")
	if !strings.Contains(body, `<td class="code">  &#34;b&#34;: [</td>`) {
		t.Errorf("the JSON is not pretty-printed:\n%s", body)
	}
	body = get("/s/acme/t/main/files/data/conf.json?view=tree")
	if !strings.Contains(body, `<details open><summary><span class="jk">&#34;a&#34;</span>: { <span class="muted">1 key</span> }</summary>`) ||
		!strings.Contains(body, `<span class="js">&#34;&lt;script&gt;&#34;</span>`) {
		t.Errorf("the JSON is not folded, keys in order:\n%s", body)
	}
	// Blame across the fork: experiment's plan.md is its own, src/main.go main's.
	body = get("/s/acme/t/experiment/blame/src/main.go")
	if !regexp.MustCompile(`href="/s/acme/t/main/c/2">main@2</a>`).MatchString(body) {
		t.Errorf("the blame of an inherited file does not name main's commit:\n%s", body)
	}
	body = get("/s/acme/t/experiment/blame/notes/plan.md")
	if !strings.Contains(body, `href="/s/acme/t/experiment/c/2">experiment@2</a>`) {
		t.Errorf("the blame of the fork's own change does not name it")
	}
	// History follows the fork and never calls the inherited file added.
	body = get("/s/acme/t/experiment/history/src/main.go")
	if !strings.Contains(body, `main@<a href="/s/acme/t/main/c/2">2</a>`) || strings.Contains(body, `href="/s/acme/t/experiment/c/1"`) {
		t.Errorf("the history of an inherited file does not follow the fork:\n%s", body)
	}
	// Line permalinks name the commit.
	body = get("/s/acme/t/main/files/src/main.go?at=draft-1")
	if !strings.Contains(body, `href="/s/acme/t/main/files/src/main.go?at=2&amp;start=1#L1"`) {
		t.Errorf("no line permalink at a fixed commit")
	}
	// Spills.
	resp, _ := f.get(t, "/s/acme/t/main%2Fspill/")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/s/acme/t/main/spills/" {
		t.Errorf("THREAD/spill: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	body = get("/s/acme/t/main/spills/")
	if !strings.Contains(body, `href="/s/acme/t/main/spills/spill/grep-1.txt"`) {
		t.Errorf("the spill is not listed:\n%s", body)
	}
	body = get("/s/acme/t/main/spills/spill/grep-1.txt")
	if !strings.Contains(body, "spilled &lt;script&gt;line&lt;/script&gt; 2") {
		t.Errorf("the spill is not shown")
	}
	if resp, _ := f.get(t, "/s/acme/t/main/spills/notes/plan.md"); resp.StatusCode != 404 {
		t.Errorf("a thread's file read through its spills: %d", resp.StatusCode)
	}
	// Document lists with chosen field columns.
	body = get("/s/acme/docs/notes/?fields=text,score,missing.x")
	if !strings.Contains(body, `<th scope="col">score</th>`) || !strings.Contains(body, `<td data-label="score">4</td>`) ||
		!strings.Contains(body, "second &lt;script&gt;") {
		t.Errorf("the document list does not show the chosen fields:\n%s", body)
	}
	if resp, _ := f.get(t, "/s/acme/docs/notes/?fields=a,b,c,d,e,f,g,h,i"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("nine field columns: %d, want 400", resp.StatusCode)
	}
	// Document versions: who set each, and the diff.
	body = get("/s/acme/docs/notes/doc?key=n1")
	if !strings.Contains(body, "Changed from version 1") || !strings.Contains(body, "<mark>") {
		t.Errorf("the document's versions are not diffed:\n%s", body)
	}
}
