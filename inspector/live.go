package inspector

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/satchel-dev/satchel"
)

// liveEvent is what a stream sends for each new commit.
type liveEvent struct {
	Seq         int64     `json:"seq"`
	Time        time.Time `json:"time"`
	Op          string    `json:"op"`
	Summary     string    `json:"summary"`
	Agent       string    `json:"agent,omitempty"`
	Via         string    `json:"via,omitempty"`
	Checkpoints []string  `json:"checkpoints,omitempty"`
}

// accessRecheck is how often a live stream checks that its viewer may
// still read (a revoked token ends its streams within this time).
const accessRecheck = 5 * time.Second

// maxEventsPerPoll bounds the commits one poll reports; a page that fell
// further behind refreshes once anyway.
const maxEventsPerPoll = 50

// events streams a thread's new commits as server-sent events ("commit",
// oldest first), from ?after=SEQ on. Commits by any process reach it: the
// stream reads the thread's head every PollInterval, a read the backends
// answer from an index (SQLite also from a cache while no other process
// wrote). The browser keeps one connection open and never polls; the
// stream ends when the page closes (its request's context) or the server
// shuts down.
func (in *Inspector) events(w http.ResponseWriter, r *http.Request) {
	in.streams.Add(1)
	defer in.streams.Done()
	ctx := r.Context()
	t, ws, err := in.workspaceOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	v := viewerOf(ctx)
	if err := in.live.take(v); err != nil {
		in.log.Info("live stream refused", "token", v.token, "reason", err.Error())
		in.fail(w, r, err)
		return
	}
	defer in.live.give(v)
	after, err := intParam(r, "after", 0)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// A comment first, so that the browser sees the stream open at once.
	if _, err := w.Write([]byte(": thread " + t.Thread + "\nretry: 3000\n\n")); err != nil {
		return
	}
	if err := rc.Flush(); err != nil {
		return
	}
	tick := time.NewTicker(in.cfg.PollInterval)
	defer tick.Stop()
	checked := time.Now()
	for {
		if time.Since(checked) >= in.recheck {
			checked = time.Now()
			if ok, err := in.stillAllowed(ctx, v); !ok {
				if err != nil {
					in.log.Warn("live stream: checking access", "error", err.Error())
				}
				_, _ = w.Write([]byte("event: signed-out\ndata: {}\n\n"))
				_ = rc.Flush()
				return
			}
		}
		head, err := headSeq(r, ws)
		if err != nil {
			in.log.Warn("live stream: reading the head", "thread", t.Thread, "error", err.Error())
		} else if head > after {
			if after, err = in.sendCommits(w, r, ws, after, head); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// DefaultMaxStreamsPerToken bounds the live streams one token's sessions
// hold open at once (Config.MaxStreamsPerToken).
const DefaultMaxStreamsPerToken = 8

// maxStreamsPerSession bounds the live streams of one session (one
// browser): four pages of a thread stay live, and a browser keeps
// connections of its six to a host for the other pages.
const maxStreamsPerSession = 4

// liveStreams counts the open live streams by session and by token; the
// local user (no token exists) counts as one token.
type liveStreams struct {
	perToken int

	mu        sync.Mutex
	bySession map[string]int
	byToken   map[string]int
}

func newLiveStreams(perToken int) *liveStreams {
	return &liveStreams{perToken: perToken, bySession: map[string]int{}, byToken: map[string]int{}}
}

// keys are the counters of v's streams.
func streamKeys(v viewer) (session, token string) {
	if !v.signedIn {
		return "", "local user"
	}
	return v.session, "token " + v.token
}

// take counts one more stream of v, or refuses it (429) past a bound.
func (l *liveStreams) take(v viewer) error {
	sk, tk := streamKeys(v)
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.bySession[sk]; sk != "" && n >= maxStreamsPerSession {
		return &limitRefusal{code: http.StatusTooManyRequests, msg: fmt.Sprintf(
			"too many live pages for this session: %d, the limit; close one to follow this thread live", n)}
	}
	if n := l.byToken[tk]; n >= l.perToken {
		return &limitRefusal{code: http.StatusTooManyRequests, msg: fmt.Sprintf(
			"too many live pages for this token: %d, the limit (--max-streams-per-token); close one to follow this thread live", n)}
	}
	if sk != "" {
		l.bySession[sk]++
	}
	l.byToken[tk]++
	return nil
}

// give returns a stream of v that take counted.
func (l *liveStreams) give(v viewer) {
	sk, tk := streamKeys(v)
	l.mu.Lock()
	defer l.mu.Unlock()
	if sk != "" {
		if l.bySession[sk]--; l.bySession[sk] <= 0 {
			delete(l.bySession, sk)
		}
	}
	if l.byToken[tk]--; l.byToken[tk] <= 0 {
		delete(l.byToken, tk)
	}
}

func headSeq(r *http.Request, ws *satchel.Workspace) (int64, error) {
	snap, err := ws.At(r.Context(), "head")
	if err != nil {
		return 0, err
	}
	return snap.Commit().Seq, nil
}

// sendCommits writes an event for each commit after after up to head and
// returns the new position.
func (in *Inspector) sendCommits(w http.ResponseWriter, r *http.Request, ws *satchel.Workspace, after, head int64) (int64, error) {
	cs, err := ws.History(r.Context(), head+1, int(min(head-after, maxEventsPerPoll)))
	if err != nil {
		in.log.Warn("live stream: reading the history", "thread", ws.Thread(), "error", err.Error())
		return after, nil
	}
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		if c.Seq <= after {
			continue
		}
		b, _ := json.Marshal(liveEvent{Seq: c.Seq, Time: c.Time, Op: c.Op, Summary: c.Summary, Agent: c.Agent, Via: c.Via, Checkpoints: c.Checkpoints})
		if _, err := w.Write([]byte("event: commit\nid: " + strconv.FormatInt(c.Seq, 10) + "\ndata: " + string(b) + "\n\n")); err != nil {
			return after, err
		}
	}
	return head, nil
}
