package inspector

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bodyread"
)

// The review pages: a scope's reviews (changes that wait for a person's
// approval, satchel.ForReview), each with its diff, and, for an operator
// signed in with a token, approve and reject buttons. The buttons POST a
// form that carries the session's CSRF token; the decision goes through
// the same functions as `satchel review` (Store.ApproveReview,
// Store.RejectReview), recorded as the operator's token, via
// "inspector".

// reviewAction reports whether r is a review's approve or reject form,
// the only POST the inspector takes besides sign-in and sign-out.
func reviewAction(r *http.Request) bool {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/s/") {
		return false
	}
	segs := strings.Split(r.URL.Path, "/") // "", "s", scope, "reviews", id, action
	return len(segs) == 6 && segs[3] == "reviews" && (segs[5] == "approve" || segs[5] == "reject")
}

// csrfToken is the CSRF token of a session: a hash of its id, which only
// the session's own pages know (the cookie is HttpOnly and SameSite).
func csrfToken(session string) string {
	h := sha256.Sum256([]byte("satchel inspector csrf\x00" + session))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// decides reports whether v may approve and reject: an operator signed
// in with a token (the local user of an open inspector has no session
// to bind a form to).
func (v viewer) decides() bool { return v.all && v.signedIn && v.session != "" }

type reviewsData struct {
	Scope   string
	State   string
	Reviews []satchel.Review
}

// reviewsPage lists a scope's reviews, open ones first by default
// (?state=all for every one).
func (in *Inspector) reviewsPage(w http.ResponseWriter, r *http.Request) {
	scope, err := in.scopeOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	state := r.URL.Query().Get("state")
	q := satchel.ReviewQuery{Scope: scope, State: state, Files: in.fileOptions(r.Context())}
	switch state {
	case "":
		q.State = satchel.ReviewOpen
		state = satchel.ReviewOpen
	case "all":
		q.State = ""
	}
	rs, err := in.cfg.Store.ListReviews(r.Context(), q)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	v := viewerOf(r.Context())
	seen := rs[:0]
	for _, rv := range rs {
		if v.seesThread(scope, rv.Thread) {
			seen = append(seen, rv)
		}
	}
	in.render(w, r, http.StatusOK, "reviews", pageData{Title: "Reviews of " + scope,
		Crumbs: append(scopeCrumbs(scope), crumb{"reviews", ""}), Data: reviewsData{Scope: scope, State: state, Reviews: seen}})
}

type reviewData struct {
	Scope   string
	Review  satchel.Review
	Changes []satchel.Change
	Files   []fileDiff
	// Split shows the diffs side by side; ViewURL is the other view's.
	Split   bool
	ViewURL string
	// CSRF is set when the viewer may decide (the forms' token).
	CSRF string
	// Message says what a decision did (after its redirect).
	Message string
}

// review reads the request's review, one of the viewer's scope and
// thread, as the viewer's file rules let it see it (Store.Review): one
// that changes hidden files only is reported missing, as others are, and
// a rejection's reason is hidden from a viewer whose rules hide a path.
func (in *Inspector) review(r *http.Request) (satchel.Review, error) {
	scope, err := in.scopeOf(r)
	if err != nil {
		return satchel.Review{}, err
	}
	id := r.PathValue("id")
	rv, err := in.cfg.Store.Review(r.Context(), id, in.fileOptions(r.Context())...)
	if err != nil {
		return rv, err
	}
	if rv.Scope != scope || !viewerOf(r.Context()).seesThread(scope, rv.Thread) {
		return satchel.Review{}, refusal(satchel.ErrNotFound, "review not found: %s", id)
	}
	return rv, nil
}

// reviewPage shows one review: its record, its diff against the thread's
// commit it was forked from, and the approve and reject forms.
func (in *Inspector) reviewPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rv, err := in.review(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	d := reviewData{Scope: rv.Scope, Review: rv, Message: r.URL.Query().Get("done")}
	ws, err := in.cfg.Store.Workspace(ctx, rv.Scope, rv.ReviewThread, in.fileOptions(ctx)...)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	a, err := ws.At(ctx, strconv.FormatInt(rv.Fork, 10))
	if err != nil {
		in.fail(w, r, err)
		return
	}
	b, err := ws.At(ctx, "head")
	if err != nil {
		in.fail(w, r, err)
		return
	}
	// The review's changes (Store.ReviewChanges), as the viewer's file
	// rules let it see them.
	if d.Changes, err = in.cfg.Store.DiffSnapshots(ctx, a, b); err != nil {
		in.fail(w, r, err)
		return
	}
	d.Review.Files = len(d.Changes) // Store.Review counted every file

	paired, err := pairMoves(ctx, a, b, d.Changes[:min(len(d.Changes), changesPerPage)], nil)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	t := threadRef{rv.Scope, rv.ReviewThread}
	more := func(path string, row int) string {
		return threadURL(t) + "/compare?from=" + strconv.FormatInt(rv.Fork, 10) + "&to=head"
	}
	sa, sb := side{t, a.Commit().Seq}, side{t, b.Commit().Seq}
	d.Split = r.URL.Query().Get("view") == "split"
	d.ViewURL = viewToggle(r, d.Split)
	if d.Files, err = in.diffFiles(ctx, a, b, sa, sb, paired, 0, d.Split, more); err != nil {
		in.fail(w, r, err)
		return
	}
	if v := viewerOf(ctx); v.decides() && rv.State == satchel.ReviewOpen {
		d.CSRF = csrfToken(v.session)
	}
	in.render(w, r, http.StatusOK, "review", pageData{Title: "Review " + rv.ID,
		Crumbs: append(scopeCrumbs(rv.Scope), crumb{"reviews", "/s/" + pathSeg(rv.Scope) + "/reviews"}, crumb{rv.ID, ""}), Data: d})
}

// reviewDecide approves or rejects a review (POST, an operator's session,
// its CSRF token), then shows the review again.
func (in *Inspector) reviewDecide(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v := viewerOf(ctx)
	if !v.decides() {
		in.fail(w, r, refusal(satchel.ErrAccessDenied, "only an operator signed in with a token approves or rejects a review"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, bodyread.ErrTimeout) {
			code = http.StatusRequestTimeout
		}
		http.Error(w, "cannot read the form: "+err.Error(), code)
		return
	}
	want := csrfToken(v.session)
	if got := r.PostFormValue("csrf"); subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		in.fail(w, r, refusal(satchel.ErrAccessDenied, "the form's CSRF token is missing or wrong: reload the review's page and try again"))
		return
	}
	rv, err := in.review(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	by := satchel.Actor{Credential: v.token, Via: "inspector"}
	var done string
	switch r.PathValue("action") {
	case "approve":
		var m satchel.MergeResult
		if _, m, err = in.cfg.Store.ApproveReview(ctx, rv.ID, by); err == nil {
			done = "approved: " + m.Message()
		}
	case "reject":
		if _, err = in.cfg.Store.RejectReview(ctx, rv.ID, strings.TrimSpace(r.PostFormValue("reason")), by); err == nil {
			done = "rejected: thread " + rv.ReviewThread + " is archived"
		}
	default:
		err = refusal(satchel.ErrNotFound, "no such page: %s", r.URL.Path)
	}
	if errors.Is(err, satchel.ErrConflict) {
		// A conflicting merge, or a review decided meanwhile: say so.
		in.render(w, r, http.StatusConflict, "error", pageData{Title: http.StatusText(http.StatusConflict), Data: err.Error()})
		return
	}
	if err != nil {
		in.fail(w, r, err)
		return
	}
	in.log.Info("inspector review decided", "review", rv.ID, "token", v.token, "action", r.PathValue("action"))
	http.Redirect(w, r, in.cfg.Base+"/s/"+pathSeg(rv.Scope)+"/reviews/"+rv.ID+"?done="+url.QueryEscape(done), http.StatusSeeOther)
}
