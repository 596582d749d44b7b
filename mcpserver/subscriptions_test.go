package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// notified connects to s as connect does, at protocol version v
// (2026-07-28: the Go SDK's client subscribes with subscriptions/listen;
// before, with resources/subscribe), and returns the URIs of the resource
// updates the session is sent.
func notified(t *testing.T, s *Server, v string) (*mcp.ClientSession, <-chan string) {
	t.Helper()
	uris := make(chan string, 100)
	ctx, cancel := context.WithCancel(context.Background())
	ct, st := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { uris <- r.Params.URI },
	}).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		<-done
	})
	return cs, uris
}

// nextURI returns the next URI notified (the bound only keeps a broken
// feed from hanging the test).
func nextURI(t *testing.T, uris <-chan string, what string) string {
	t.Helper()
	select {
	case u := <-uris:
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no notification", what)
	}
	return ""
}

func subscribe(t *testing.T, cs *mcp.ClientSession, uris ...string) {
	t.Helper()
	for _, u := range uris {
		if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: u}); err != nil {
			t.Fatalf("subscribe %s: %v", u, err)
		}
	}
}

// runReplicas checks notifications on a session of a server over a,
// for writes made through servers over b: the same database, in this
// process or as another process (replica) would.
func runReplicas(t *testing.T, a, b *satchel.Store, scope string) {
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) { runReplicasAt(t, a, b, scope+"-"+v[:4], v) })
	}
}

func runReplicasAt(t *testing.T, a, b *satchel.Store, scope, v string) {
	sa := newServer(t, Config{Store: a, Scope: scope})
	cs, uris := notified(t, sa, v)
	file, glob, marker := FileURI("notes/a.md"), ResourceScheme+"?glob=notes/**", ResourceScheme+"?glob=m/*"
	subscribe(t, cs, file, glob, marker)
	writer := &client{t: t, cs: connect(t, newServer(t, Config{Store: b, Scope: scope}))}
	side := &client{t: t, cs: connect(t, newServer(t, Config{Store: b, Scope: scope, Thread: "side"}))}
	other := &client{t: t, cs: connect(t, newServer(t, Config{Store: b, Scope: scope + "-other"}))}

	writer.ok("write_file", map[string]any{"path": "notes/a.md", "content": "one"})
	got := []string{nextURI(t, uris, "a write"), nextURI(t, uris, "a write")}
	slices.Sort(got)
	if want := []string{glob, file}; !slices.Equal(got, want) {
		t.Errorf("notified %q, want %q", got, want)
	}
	// Another thread's file and another scope's are not the session's:
	// the next notification is the marker's.
	side.ok("write_file", map[string]any{"path": "notes/a.md", "content": "side"})
	other.ok("write_file", map[string]any{"path": "notes/a.md", "content": "other"})
	writer.ok("write_file", map[string]any{"path": "elsewhere.md", "content": "x"})
	writer.ok("write_file", map[string]any{"path": "m/1", "content": "x"})
	if u := nextURI(t, uris, "the marker"); u != marker {
		t.Errorf("notified %s, want %s only", u, marker)
	}
	// Unsubscribed: no more.
	if err := cs.Unsubscribe(context.Background(), &mcp.UnsubscribeParams{URI: file}); err != nil {
		t.Fatal(err)
	}
	// At 2026-07-28 the client ends the URI's listen request, which the
	// server learns after Unsubscribe returns.
	for deadline := time.Now().Add(30 * time.Second); subscribed(sa, file); {
		if time.Now().After(deadline) {
			t.Fatal("still subscribed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	writer.ok("write_file", map[string]any{"path": "notes/a.md", "content": "two"})
	writer.ok("write_file", map[string]any{"path": "m/2", "content": "x"})
	// The two commits may be seen at once: one event, two notifications.
	got = []string{nextURI(t, uris, "after unsubscribing"), nextURI(t, uris, "after unsubscribing")}
	slices.Sort(got)
	if want := []string{marker, glob}; !slices.Equal(got, want) {
		t.Errorf("notified %q, want %q", got, want)
	}
}

func TestSubscriptionsMemory(t *testing.T) {
	st := newStore(t)
	runReplicas(t, st, st, "acme")
}

func TestSubscriptionsSQLiteReplicas(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	runReplicas(t, openStore(t, db), openStore(t, db), "acme")
}

func TestSubscriptionsPostgresReplicas(t *testing.T) {
	url := testenv.PostgresURL(t)
	scope := fmt.Sprintf("sub-%x", time.Now().UnixNano())
	runReplicas(t, openStore(t, url), openStore(t, url), scope)
}

func openStore(t *testing.T, dsn string) *satchel.Store {
	t.Helper()
	st, err := satchel.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestSubscriptionBounds: at most MaxSubscriptions a session, the excess
// refused naming the bound; URIs that name nothing refused.
func TestSubscriptionBounds(t *testing.T) {
	s := newServer(t, Config{MaxSubscriptions: 2})
	cs, _ := notified(t, s, "2025-11-25")
	subscribe(t, cs, FileURI("a.md"), FileURI("b.md"), FileURI("a.md"))
	ctx := context.Background()
	err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: FileURI("c.md")})
	if want := "too many subscriptions: this session holds 2, the most --max-subscriptions allows (2); unsubscribe from one first"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a third subscription: %v, want %q", err, want)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: FileURI("a.md")}); err != nil {
		t.Fatal(err)
	}
	subscribe(t, cs, FileURI("c.md"))
	for uri, want := range map[string]string{
		"https://example.com/a":           `cannot subscribe to "https://example.com/a": a subscription names satchel:///PATH (a file), satchel:///?glob=PATTERN or satchel:///?store=STORE`,
		ResourceScheme + "../x":           `cannot subscribe to "satchel:///../x": invalid path "../x": contains a . or .. segment`,
		ResourceScheme + "?glob=a/***":    `cannot subscribe to "satchel:///?glob=a/***": invalid pattern "a/***"`,
		ResourceScheme + "?x=1":           `cannot subscribe to "satchel:///?x=1": the query is glob=PATTERN or store=STORE`,
		ResourceScheme + "?store=notes":   `cannot subscribe to "satchel:///?store=notes": no store notes is readable here`,
		ResourceScheme + "?glob=a&glob=b": `cannot subscribe to "satchel:///?glob=a&glob=b": the query is glob=PATTERN or store=STORE`,
	} {
		err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("subscribe %s: %v, want %q", uri, err, want)
		}
	}
	// The capability is declared.
	if r := cs.InitializeResult(); r.Capabilities.Resources == nil || !r.Capabilities.Resources.Subscribe {
		t.Errorf("capabilities: %+v", r.Capabilities.Resources)
	}
}

// TestSubscribeDocuments: a store's documents, for an agent that may read
// them; not for one that may not.
func TestSubscribeDocuments(t *testing.T) {
	p := writeProject(t)
	st := newStore(t)
	cols := ProjectCollections(st, p)
	reader := newServer(t, Config{Store: st, Collections: cols, Scope: "acme", Agent: "reader"})
	cs, uris := notified(t, reader, "2025-11-25")
	notes := ResourceScheme + "?store=notes"
	subscribe(t, cs, notes)
	nothing, _ := notified(t, newServer(t, Config{Store: st, Collections: cols, Scope: "acme", Agent: "nothing"}), "2025-11-25")
	if err := nothing.Subscribe(context.Background(), &mcp.SubscribeParams{URI: notes}); err == nil {
		t.Error("an agent granted nothing subscribed to notes")
	}
	writer, _ := newClient(t, Config{Store: st, Collections: cols, Scope: "acme", Agent: "writer"})
	writer.ok("store__notes__set", map[string]any{"id": "a", "text": "x"})
	if u := nextURI(t, uris, "a document set"); u != notes {
		t.Errorf("notified %s, want %s", u, notes)
	}
}

// subscribed reports whether a session of s holds a subscription to uri.
func subscribed(s *Server, uri string) bool {
	found := false
	s.subs.Range(func(_, v any) bool {
		ss := v.(*sessionSubs)
		ss.mu.Lock()
		_, found = ss.subs[uri]
		ss.mu.Unlock()
		return !found
	})
	return found
}

// TestSubscriptionsHTTPReplicas: a session of 2025-11-25 on one replica
// is sent, on its GET event stream, the changes written through another
// replica (two servers, two stores, one SQLite file), and not those of
// another scope.
func TestSubscriptionsHTTPReplicas(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	a, b := openStore(t, db), openStore(t, db)
	urlA, urlB := serveHTTP(t, newServer(t, Config{Store: a})), serveHTTP(t, newServer(t, Config{Store: b}))
	acme, _ := token(t, a, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	beta, _ := token(t, a, satchel.TokenSpec{Agent: "writer", Scope: "beta"})

	uris := make(chan string, 100)
	tr := &mcp.StreamableClientTransport{
		Endpoint:   urlA + MCPPath,
		HTTPClient: &http.Client{Transport: headerTransport{http.DefaultTransport, map[string]string{"Authorization": "Bearer " + acme}}},
		MaxRetries: -1,
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { uris <- r.Params.URI },
	}).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	file, marker := FileURI("notes/a.md"), ResourceScheme+"?glob=m/*"
	subscribe(t, cs, file, marker)

	other := mustDial(t, urlB, beta, "")
	other.ok("write_file", map[string]any{"path": "notes/a.md", "content": "beta"})
	writer := mustDial(t, urlB, acme, "")
	writer.ok("write_file", map[string]any{"path": "m/1", "content": "x"})
	if u := nextURI(t, uris, "the marker"); u != marker {
		t.Errorf("notified %s, want %s only", u, marker)
	}
	writer.ok("write_file", map[string]any{"path": "notes/a.md", "content": "acme"})
	if u := nextURI(t, uris, "a write on the other replica"); u != file {
		t.Errorf("notified %s, want %s", u, file)
	}
}

// FuzzParseSubscription: a URI is refused or parsed into exactly one
// form; a file's is the file's own URI, as resources/list names it.
func FuzzParseSubscription(f *testing.F) {
	for _, s := range []string{"satchel:///a.md", "satchel:///my%20notes/a%20b.md", "satchel:///?glob=notes/**/*.md",
		"satchel:///?store=notes", "satchel:///?glob=a&store=b", "satchel:///%3Fglob=x", "test://x", "satchel:///?glob=%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		sub, err := parseSubscription(uri)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "cannot subscribe to ") {
				t.Errorf("%q: %v", uri, err)
			}
			return
		}
		forms := 0
		for _, set := range []bool{sub.path != "", sub.glob != nil, sub.store != ""} {
			if set {
				forms++
			}
		}
		if forms != 1 || sub.uri != uri {
			t.Errorf("%q: %+v", uri, sub)
		}
		if sub.path != "" {
			if p, ok := uriPath(FileURI(sub.path)); !ok || p != sub.path {
				t.Errorf("%q: path %q does not round-trip through FileURI", uri, sub.path)
			}
		}
	})
}

// A session is never told of a change to a path its file rules hide, and
// cannot subscribe to one.
func TestSubscriptionsHideHiddenPaths(t *testing.T) {
	st := openStore(t, "memory:")
	rules, err := satchel.ParseFileRules("secrets/**=none,**=rw")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, Config{Store: st, Scope: "hide", FileRules: rules})
	cs, uris := notified(t, s, "2025-11-25")
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: FileURI("secrets/k")}); err == nil {
		t.Error("subscribed to a hidden file")
	}
	secrets, marker := ResourceScheme+"?glob=secrets/**", ResourceScheme+"?glob=m/*"
	subscribe(t, cs, secrets, marker)
	ws, err := st.Workspace(context.Background(), "hide", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(context.Background(), "secrets/k", "k"); err != nil {
		t.Fatal(err)
	}
	if err := ws.Write(context.Background(), "m/1", "x"); err != nil {
		t.Fatal(err)
	}
	if u := nextURI(t, uris, "the marker"); u != marker {
		t.Errorf("notified %s, want %s only", u, marker)
	}
}
