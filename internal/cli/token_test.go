package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/backendof"
)

func TestTokenCommands(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()

	r := h.run("token", "create", "--agent", "research", "--scope", "acme")
	secret := strings.TrimSuffix(r.Out, "\n")
	if r.Code != 0 || !regexp.MustCompile(`^stk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$`).MatchString(secret) {
		t.Fatalf("token create: %+v", r)
	}
	id := secret[4:20]
	if want := "token " + id + " for agent research in scope acme: keep the secret now, it is not shown again\n"; r.Err != want {
		t.Errorf("stderr = %q, want %q", r.Err, want)
	}
	tok, err := h.store.Authenticate(ctx, secret)
	if err != nil || tok.Agent != "research" || tok.Scope != "acme" || tok.Thread != "" || !tok.Expires.IsZero() {
		t.Errorf("the printed secret authenticates as %+v, %v", tok, err)
	}

	created := decode[tokenCreated](t, h.ok("--json", "token", "create", "--agent", "ci", "--scope", "acme", "--thread", "nightly", "--expires", "24h"))
	if created.Thread != "nightly" || created.Expires.Sub(created.Created) != 24*time.Hour || !strings.HasPrefix(created.Secret, "stk_"+created.ID+"_") {
		t.Errorf("token create --json = %+v", created)
	}

	h.ok("token", "revoke", created.ID)
	if _, err := h.store.Authenticate(ctx, created.Secret); err == nil {
		t.Errorf("a revoked token authenticates")
	}
	out := h.ok("token", "list")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], id+"\tresearch\tacme\t\t") || !strings.HasSuffix(lines[0], "\t\tactive\tno") ||
		!strings.HasPrefix(lines[1], created.ID+"\tci\tacme\tnightly\t") || !strings.HasSuffix(lines[1], "\trevoked\tno") {
		t.Errorf("token list:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Errorf("token list shows a secret")
	}
	listed := decode[[]tokenListed](t, h.ok("--json", "token", "list"))
	if len(listed) != 2 || listed[0].Status != "active" || listed[1].Status != "revoked" {
		t.Errorf("token list --json = %+v", listed)
	}
	if got := h.ok("token", "revoke", created.ID); got != "revoked "+created.ID+"\n" {
		t.Errorf("revoking twice: %q", got)
	}

	h.refused("token not found: 0000000000000000", "token", "revoke", "0000000000000000")
	h.refused(`invalid agent name "Research": a name is lowercase letters, digits, - and _, starting with a letter, at most 48 characters`,
		"token", "create", "--agent", "Research", "--scope", "acme")
	h.refused("expires must not be negative, was -1h0m0s", "token", "create", "--agent", "a", "--scope", "acme", "--expires", "-1h")
	h.usage("token create: --scope is required (the only scope the token can touch)", "token", "create", "--agent", "a")
	h.usage("token create: --agent is required (the agent the token speaks for), or --operator", "token", "create", "--scope", "acme")
	h.usage("token create: --operator names no --agent, --scope or --thread (it sees every scope)", "token", "create", "--operator", "--scope", "acme")
	h.usage("satchel token revoke: missing ID", "token", "revoke")

	// Expired tokens are listed as such.
	_, _, err = h.store.CreateToken(ctx, satchel.TokenSpec{Agent: "old", Scope: "acme", Expires: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	// An hour later, by the backend's clock (the list asks it).
	backendof.Store(h.store).(backend.ClockSetter).SetClock(func() time.Time { return time.Now().Add(time.Hour) })
	if out := h.ok("token", "list"); !strings.Contains(out, "\told\tacme\t\t") || !strings.HasSuffix(out, "\texpired\tno\n") {
		t.Errorf("an expired token:\n%s", out)
	}
}

func TestTokenCreateOperator(t *testing.T) {
	h := newHarness(t)
	r := h.run("token", "create", "--operator", "--expires", "8h")
	secret := strings.TrimSuffix(r.Out, "\n")
	if r.Code != 0 || !strings.HasPrefix(r.Err, "operator token ") {
		t.Fatalf("token create --operator: %+v", r)
	}
	tok, err := h.store.Authenticate(context.Background(), secret)
	if err != nil || !tok.Operator || tok.Agent != "" || tok.Scope != "" || tok.Expires.Sub(tok.Created) != 8*time.Hour {
		t.Errorf("the operator's secret authenticates as %+v, %v", tok, err)
	}
	if out := h.ok("token", "list"); !strings.Contains(out, "\t(operator)\t*\t") {
		t.Errorf("token list does not show the operator token as such:\n%s", out)
	}
}
