package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/sqlitetest"
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
	db := sqlitetest.NewFileAt(t, filepath.Join(t.TempDir(), "s.db"))
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
	db := sqlitetest.NewFileAt(t, filepath.Join(t.TempDir(), "s.db"))
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

// listenHTTP connects to url at 2026-07-28 as the Go SDK's client does
// (each Subscribe is a subscriptions/listen request, held open), with
// token and the thread header when set, and returns the URIs of the
// resource updates its listens are sent.
func listenHTTP(t *testing.T, url, token, thread string) (*mcp.ClientSession, <-chan string) {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + token}
	if thread != "" {
		h[ThreadHeader] = thread
	}
	uris := make(chan string, 100)
	tr := &mcp.StreamableClientTransport{
		Endpoint:   url + MCPPath,
		HTTPClient: &http.Client{Transport: headerTransport{http.DefaultTransport, h}},
		MaxRetries: -1,
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { uris <- r.Params.URI },
	}).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, uris
}

// waitUnsubscribed waits until no session of s holds uri: at 2026-07-28
// the client ends a listen request, which the server learns after the
// client's Unsubscribe returns.
func waitUnsubscribed(t *testing.T, s *Server, uri string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); subscribed(s, uri); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still subscribed", uri)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitSubscribed waits until a session of s holds uri (the Go SDK's
// client does not wait for a listen's acknowledgement).
func waitSubscribed(t *testing.T, s *Server, uri string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !subscribed(s, uri); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not subscribed", uri)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// refusedListen sends a subscriptions/listen to uris at 2026-07-28 over
// HTTP, one the server should refuse, and returns the answer: what came
// in 10 s when the server held the listen open instead (the bound only
// keeps an accepted listen from hanging the test).
func refusedListen(t *testing.T, url, secret string, uris ...string) string {
	t.Helper()
	q, err := json.Marshal(uris)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", url+MCPPath, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":`+string(q)+`},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Authorization": "Bearer " + secret, protocolVersionHeader: "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestSubscriptionsHTTP2026: over HTTP at 2026-07-28, where no session
// carries from one request to the next, a subscriptions/listen request is
// held open and sent the changes of its caller's scope and thread that
// the caller may read, written through another replica; the caller holds
// at most --max-subscriptions on the server, across its listens; closing
// a listen ends it.
func TestSubscriptionsHTTP2026(t *testing.T) {
	db := sqlitetest.NewFileAt(t, filepath.Join(t.TempDir(), "s.db"))
	a, b := openStore(t, db), openStore(t, db)
	sa := newServer(t, Config{Store: a, MaxSubscriptions: 4})
	urlA, urlB := serveHTTP(t, sa), serveHTTP(t, newServer(t, Config{Store: b}))
	rules, err := satchel.ParseFileRules("secrets/**=none,**=rw")
	if err != nil {
		t.Fatal(err)
	}
	reader, _ := token(t, a, satchel.TokenSpec{Agent: "reader", Scope: "acme", Files: rules})
	acme, _ := token(t, a, satchel.TokenSpec{Agent: "writer", Scope: "acme"})
	beta, _ := token(t, a, satchel.TokenSpec{Agent: "writer", Scope: "beta"})

	cs, uris := listenHTTP(t, urlA, reader, "")
	file, glob, secrets, marker := FileURI("notes/a.md"), ResourceScheme+"?glob=notes/**", ResourceScheme+"?glob=secrets/**", ResourceScheme+"?glob=m/*"
	subscribe(t, cs, file, glob, secrets, marker)
	ctx := context.Background()
	// The Go SDK's client opens a listen and does not wait for its
	// acknowledgement: a refusal is read from the listen's answer.
	if body := refusedListen(t, urlA, reader, FileURI("secrets/k")); !strings.Contains(body, `cannot subscribe to \"satchel:///secrets/k\": path secrets/k is not readable`) {
		t.Errorf("a listen to a file the caller's rules hide: %s", body)
	}
	for _, u := range []string{file, glob, secrets, marker} {
		waitSubscribed(t, sa, u)
	}

	writer := mustDial(t, urlB, acme, "")
	writer.ok("write_file", map[string]any{"path": "notes/a.md", "content": "one"})
	got := []string{nextURI(t, uris, "a write"), nextURI(t, uris, "a write")}
	slices.Sort(got)
	if want := []string{glob, file}; !slices.Equal(got, want) {
		t.Errorf("notified %q, want %q", got, want)
	}
	// Another thread's file, another scope's and a hidden one are not
	// the caller's: the next notification is the marker's.
	side := mustDial(t, urlB, acme, "side")
	side.ok("write_file", map[string]any{"path": "notes/a.md", "content": "side"})
	mustDial(t, urlB, beta, "").ok("write_file", map[string]any{"path": "notes/a.md", "content": "beta"})
	writer.ok("write_file", map[string]any{"path": "secrets/k", "content": "k"})
	writer.ok("write_file", map[string]any{"path": "m/1", "content": "x"})
	if u := nextURI(t, uris, "the marker"); u != marker {
		t.Errorf("notified %s, want %s only", u, marker)
	}

	// The bound is the caller's, across its listens (each a request of
	// its own): a fifth is refused, on this connection or another.
	want := "too many subscriptions: this caller holds 4 on this server, the most --max-subscriptions allows (4); close one first"
	if body := refusedListen(t, urlA, reader, FileURI("e.md")); !strings.Contains(body, want) {
		t.Errorf("a fifth subscription: %s, want %q", body, want)
	}
	// Another caller has a bound of its own.
	if body := refusedListen(t, urlA, acme, FileURI("secrets/k"), "satchel:///../x"); !strings.Contains(body, `invalid path \"../x\"`) {
		t.Errorf("another caller's listen: %s", body)
	}

	// Closed: no more, and the bound has room again.
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: file}); err != nil {
		t.Fatal(err)
	}
	waitUnsubscribed(t, sa, file)
	again, _ := listenHTTP(t, urlA, reader, "")
	subscribe(t, again, FileURI("e.md"))
	waitSubscribed(t, sa, FileURI("e.md"))
	writer.ok("write_file", map[string]any{"path": "notes/a.md", "content": "two"})
	writer.ok("write_file", map[string]any{"path": "m/2", "content": "x"})
	got = []string{nextURI(t, uris, "after closing"), nextURI(t, uris, "after closing")}
	slices.Sort(got)
	if want := []string{marker, glob}; !slices.Equal(got, want) {
		t.Errorf("notified %q, want %q", got, want)
	}
	// The connection closed ends its listens.
	_ = cs.Close()
	for _, u := range []string{glob, secrets, marker} {
		waitUnsubscribed(t, sa, u)
	}
}
