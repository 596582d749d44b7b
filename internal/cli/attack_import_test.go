package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// tokenSecret makes a token in db with args and returns its id and secret.
func tokenSecret(t *testing.T, db string, args ...string) (id, secret string) {
	t.Helper()
	out := mainOK(t, "", append([]string{"--db", db, "token", "create", "--json"}, args...)...)
	var r struct{ ID, Secret string }
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.ID == "" {
		t.Fatalf("token create printed %q: %v", out, err)
	}
	return r.ID, r.Secret
}

// nothingImported fails t if db holds a thread of scope acme or a token.
func nothingImported(t *testing.T, db string) {
	t.Helper()
	if _, err := os.Stat(db); err != nil {
		return
	}
	if out := mainOK(t, "", "--db", db, "--scope", "acme", "threads", "--json"); strings.Contains(out, "main") {
		t.Errorf("a refused import left threads: %s", out)
	}
	if out := mainOK(t, "", "--db", db, "token", "list", "--json"); strings.Contains(out, `"id"`) {
		t.Errorf("a refused import left tokens: %s", out)
	}
}

// An export file with an operator token used to plant it: its secret
// then signed in to the inspector as operator. The import is refused,
// naming the record, unless --tokens all; --tokens none leaves it out.
func TestAttackImportOperatorToken(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	mainOK(t, "", "--db", a, "--scope", "acme", "fs", "write", "x.txt", "x")
	id, secret := tokenSecret(t, a, "--operator")
	file := filepath.Join(dir, "a.satchel")
	mainOK(t, "", "--db", a, "export", "-o", file)

	code, out, errs := runMain(t, "", "--db", b, "import", file)
	if code == 0 || !strings.Contains(errs, "(token "+id+"): it is an operator token") || !strings.Contains(errs, "--tokens all") {
		t.Fatalf("import of an operator token: exit %d, out %q, err %q", code, out, errs)
	}
	nothingImported(t, b)

	out = mainOK(t, "", "--db", b, "import", file, "--tokens", "none")
	if !strings.Contains(out, "1 commits, 1 blobs, 0 documents, 0 tokens") || strings.Contains(out, id) {
		t.Fatalf("import --tokens none printed %q", out)
	}
	c := filepath.Join(dir, "c.db")
	out = mainOK(t, "", "--db", c, "import", file, "--tokens", "all")
	if !strings.Contains(out, "token "+id+": operator\n") {
		t.Fatalf("import --tokens all printed %q", out)
	}
	s, err := satchel.Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if tok, err := s.Authenticate(context.Background(), secret); err != nil || !tok.Operator {
		t.Fatalf("the operator token imported with --tokens all: %+v %v", tok, err)
	}
}

// A token of a scope the file does not hold used to be imported as it
// was. It is refused, naming the record and the scope; the tokens of the
// file's scopes are imported and named (id, kind, scope, agent).
func TestAttackImportOtherScopeToken(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	mainOK(t, "", "--db", a, "--scope", "acme", "fs", "write", "x.txt", "x")
	own, _ := tokenSecret(t, a, "--agent", "ann", "--scope", "acme", "--thread", "main")
	file := filepath.Join(dir, "own.satchel")
	mainOK(t, "", "--db", a, "export", "-o", file)
	other, _ := tokenSecret(t, a, "--agent", "bob", "--scope", "other")
	bad := filepath.Join(dir, "bad.satchel")
	mainOK(t, "", "--db", a, "export", "-o", bad)

	code, out, errs := runMain(t, "", "--db", b, "import", bad, "--json")
	if code == 0 || !strings.Contains(errs, "(token "+other+"): it is a token of scope other, which the file does not hold") {
		t.Fatalf("import of another scope's token: exit %d, out %q, err %q", code, out, errs)
	}
	nothingImported(t, b)

	out = mainOK(t, "", "--db", b, "import", file, "--json")
	var res importResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	want := importedToken{ID: own, Kind: "agent", Scope: "acme", Agent: "ann", Thread: "main"}
	if len(res.TokenList) != 1 || res.TokenList[0] != want || res.Tokens != 1 {
		t.Fatalf("import --json: %s, want the token %+v", out, want)
	}
	c := filepath.Join(dir, "c.db")
	out = mainOK(t, "", "--db", c, "import", bad, "--tokens", "all")
	for _, w := range []string{"token " + own + ": agent ann, scope acme, thread main\n", "token " + other + ": agent bob, scope other\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("import --tokens all printed %q, want %q", out, w)
		}
	}
	if code, _, errs := runMain(t, "", "--db", c, "import", bad, "--tokens", "some"); code != 2 || !strings.Contains(errs, "--tokens must be safe, all or none") {
		t.Errorf("--tokens some: exit %d, %q", code, errs)
	}
}
