package inspector

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestForkTreeMerges: a merge commit draws an edge from the commit it
// merged, on its thread's lane, to the merge, on the target's.
func TestForkTreeMerges(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ws, err := f.st.Workspace(ctx, "acme", "main")
	if err != nil {
		t.Fatal(err)
	}
	src, err := ws.Fork(ctx, "head", "try-b")
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Write(ctx, "b.md", "b\n"); err != nil {
		t.Fatal(err)
	}
	sh, _ := src.Head(ctx)
	r, err := ws.Merge(ctx, "try-b")
	if err != nil {
		t.Fatal(err)
	}
	_, body := f.get(t, "/s/acme/tree")
	title := "try-b@" + strconv.FormatInt(sh.Seq, 10) + " merged into main (commit " + strconv.FormatInt(r.Commit.Seq, 10) + ")"
	if !strings.Contains(body, `class="merge"><title>`+title+`</title>`) {
		t.Errorf("the fork tree draws no edge %q:\n%s", title, body)
	}
	if !strings.Contains(body, `href="/s/acme/t/try-b/c/`+strconv.FormatInt(sh.Seq, 10)+`" class="node merged"`) &&
		!strings.Contains(body, `href="/s/acme/t/try-b/c/`+strconv.FormatInt(sh.Seq, 10)+`" class="node head"`) {
		t.Errorf("the merged commit has no node on try-b's lane:\n%s", body)
	}
	if !strings.Contains(body, `href="/s/acme/t/main/c/`+strconv.FormatInt(r.Commit.Seq, 10)+`" class="node merge head"`) {
		t.Errorf("the merge commit (main's head) is not a merge node:\n%s", body)
	}
	if m := regexp.MustCompile(`<path d="M(\d+) (\d+) H(\d+) V(\d+)" class="merge">`).FindStringSubmatch(body); m == nil {
		t.Errorf("the merge edge is not drawn along try-b's lane, then up to main:\n%s", body)
	} else if x0, _ := strconv.Atoi(m[1]); func() bool { x1, _ := strconv.Atoi(m[3]); return x1 <= x0 }() {
		t.Errorf("the merge (x %s) is not right of what it merged (x %s)", m[3], m[1])
	}
	if strings.Count(body, `class="merge"`) != 1 || strings.Count(body, `class="fork"`) != 2 {
		t.Errorf("edges: %d merges, %d forks; want 1 and 2", strings.Count(body, `class="merge"`), strings.Count(body, `class="fork"`))
	}
}
