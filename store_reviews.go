package satchel

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/satchel-dev/satchel/internal/errs"
)

// Reviews (docs/parallel.md, "Review"; decision 0121): a caller whose
// changes wait for review (ForReview) never changes its thread: its first
// change forks a review thread, named "review-" and the review's ID, and
// every later change of the caller goes there. An operator approves the
// review (a merge into the thread, refused on conflicts as every merge)
// or rejects it; either way the review thread is archived. The records
// are JSON values in the global settings namespace, "review:<id>", as
// tokens are: no schema of their own, on every backend.

const reviewKey = "review:"

// The states of a review.
const (
	ReviewOpen     = "open"
	ReviewApproved = "approved"
	ReviewRejected = "rejected"
)

// reviewThreadPrefix starts the name of every review thread.
const reviewThreadPrefix = "review-"

// Review is one review: the changes one caller made to a thread, kept on
// a thread of their own until an operator approves or rejects them.
type Review struct {
	// ID is "R-" and 8 characters of Crockford's base32 (digits and
	// capital letters but I, L, O and U).
	ID    string `json:"id"`
	Scope string `json:"scope"`
	// Thread is the thread the changes are for; ReviewThread the thread
	// that holds them, forked from Thread at commit Base.
	Thread       string `json:"thread"`
	ReviewThread string `json:"review_thread"`
	Base         int64  `json:"base"`
	// Fork is the review thread's first commit (its fork of Thread@Base).
	Fork int64 `json:"fork"`
	// Agent and Token are the caller's agent ("" for an operator) and the
	// ID of its token ("" without one).
	Agent   string    `json:"agent,omitempty"`
	Token   string    `json:"token,omitempty"`
	Created time.Time `json:"created"`
	// State is "open", "approved" or "rejected".
	State string `json:"state"`
	// DecidedBy names who approved or rejected it, DecidedAt when
	// (the backend's clock), Reason why (a rejection's, optional; a
	// caller whose file rules hide a path is shown ReasonHidden).
	DecidedBy string    `json:"decided_by,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	Reason    string    `json:"reason,omitempty"`
	// Merge is the merge commit an approval made on Thread (0: none, or
	// nothing to merge).
	Merge int64 `json:"merge,omitempty"`
	// Files counts the files the review changes (ListReviews and Review
	// fill it in; an open review's count grows with its changes).
	Files int `json:"files"`
}

// reviewRecord is what the store keeps: the review and the key of the
// caller whose review it is (ForReview's key: an MCP session's id, which
// no listing shows).
type reviewRecord struct {
	Review
	Key string `json:"key,omitempty"`
}

// ReviewQuery selects reviews for ListReviews. Zero fields select all.
type ReviewQuery struct {
	Scope string
	// State keeps the reviews in one state ("open", "approved",
	// "rejected").
	State string
	// Files are the caller's file rules (WithFileRules, Token's
	// FileOptions): each review's Files counts only the files they let
	// the caller see, as its diff shows them; a review that changes
	// files, none of which the caller sees, is left out (as a hidden
	// file is); and a rejection's reason is ReasonHidden when they hide
	// a path.
	Files []WorkspaceOption
}

// ReasonHidden is what a caller whose file rules hide a path is shown in
// place of a rejection's reason (Review.Reason, and the notice its
// caller is given): the reason is an operator's text, which nothing can
// check for the paths it names, so it is shown as a caller's summary of a
// commit is (docs/security.md, decision 0156): whole to a caller that
// reads everything, not at all to any other.
const ReasonHidden = "reason hidden: it may name files your rules hide"

// hideReason is r with its reason as a caller sees it that reads every
// path (readsAll) or not.
func (r Review) hideReason(readsAll bool) Review {
	if !readsAll && r.Reason != "" {
		r.Reason = ReasonHidden
	}
	return r
}

// seenBy is r as a caller of file rules files sees it: Files counts the
// files it sees, and its reason is hidden when they hide a path; ok is
// false when r changes files and the caller sees none of them, so that r
// is not found for it. A review whose thread was deleted, or whose fork
// commit retention dropped, is seen with no files.
func (s *Store) seenBy(ctx context.Context, r Review, files []WorkspaceOption) (Review, bool, error) {
	rw, err := s.reviewWorkspace(ctx, r, Actor{}, files...)
	if err != nil {
		return r, false, err
	}
	cs, err := rw.Diff(ctx, strconv.FormatInt(r.Fork, 10), "head")
	if err != nil && !errors.Is(err, ErrNotFound) {
		return r, false, err
	}
	r.Files = len(cs)
	if rw.ReadsEverything() || len(cs) > 0 {
		return r.hideReason(rw.ReadsEverything()), true, nil
	}
	all, err := s.reviewChanges(ctx, r, nil)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return r, false, err
	}
	return r.hideReason(false), len(all) == 0, nil
}

// crockford is Crockford's base32 alphabet.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ValidReviewID reports whether id has the shape of a review's ID.
func ValidReviewID(id string) error {
	ok := len(id) == 10 && strings.HasPrefix(id, "R-")
	for i := 2; ok && i < len(id); i++ {
		ok = strings.IndexByte(crockford, id[i]) >= 0
	}
	if !ok {
		return errs.New(errs.ErrInvalidArgument, "invalid review ID %q: a review ID is R- and 8 digits or capital letters, e.g. R-7K2M9Q4X", id)
	}
	return nil
}

func newReviewID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("making a review ID: %w", err)
	}
	id := []byte("R-")
	for _, c := range b {
		id = append(id, crockford[c%32])
	}
	return string(id), nil
}

// reviewWaits is the sentence a change that went to review adds to its
// result.
func reviewWaits(id string) string { return "your changes wait for review " + id }

// decidedNotice is what the caller of a decided review is told, once, on
// its next call.
func decidedNotice(r Review) string {
	if r.State == ReviewApproved {
		if r.Merge > 0 {
			return fmt.Sprintf("review %s was approved: its changes are in thread %s (commit %d); your next change starts a new review", r.ID, r.Thread, r.Merge)
		}
		return fmt.Sprintf("review %s was approved: thread %s already had its changes; your next change starts a new review", r.ID, r.Thread)
	}
	why := ""
	if r.Reason != "" {
		why = " (" + r.Reason + ")"
	}
	return fmt.Sprintf("review %s was rejected%s: its changes were not applied to thread %s; your next change starts a new review", r.ID, why, r.Thread)
}

// decider names who decided a review: the agent, else the operator's
// token, else the tool.
func decider(a Actor) string {
	switch {
	case a.Agent != "":
		return "agent " + a.Agent
	case a.Credential != "" && a.Via != "":
		return "operator token " + a.Credential + " (" + a.Via + ")"
	case a.Credential != "":
		return "operator token " + a.Credential
	case a.Via != "":
		return "an operator (" + a.Via + ")"
	}
	return "an operator"
}

func (s *Store) putReview(ctx context.Context, r reviewRecord) error {
	r.Files = 0
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.b.PutSetting(ctx, "", "", reviewKey+r.ID, v)
}

// review reads one review's record.
func (s *Store) review(ctx context.Context, id string) (reviewRecord, error) {
	if err := ValidReviewID(id); err != nil {
		return reviewRecord{}, err
	}
	v, ok, err := s.b.Setting(ctx, "", "", reviewKey+id)
	if err != nil {
		return reviewRecord{}, err
	}
	if !ok {
		return reviewRecord{}, errs.New(errs.ErrNotFound, "review not found: %s", id)
	}
	var r reviewRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return reviewRecord{}, fmt.Errorf("reading review %s: %w", id, err)
	}
	return r, nil
}

// reviews lists the stored records, oldest first (then by ID).
func (s *Store) reviews(ctx context.Context) ([]reviewRecord, error) {
	m, err := s.b.Settings(ctx, "", "", reviewKey)
	if err != nil {
		return nil, err
	}
	out := make([]reviewRecord, 0, len(m))
	for k, v := range m {
		var r reviewRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("reading review %s: %w", strings.TrimPrefix(k, reviewKey), err)
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// ListReviews lists the reviews q selects, oldest first, each with the
// number of files it changes, as q.Files let the caller see them.
func (s *Store) ListReviews(ctx context.Context, q ReviewQuery) ([]Review, error) {
	if q.Scope != "" {
		if err := ValidScope(q.Scope); err != nil {
			return nil, err
		}
	}
	switch q.State {
	case "", ReviewOpen, ReviewApproved, ReviewRejected:
	default:
		return nil, errs.New(errs.ErrInvalidArgument, "state must be open, approved or rejected, was %q", q.State)
	}
	all, err := s.reviews(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Review, 0, len(all))
	for _, rec := range all {
		r := rec.Review
		if (q.Scope == "" || r.Scope == q.Scope) && (q.State == "" || r.State == q.State) {
			r, ok, err := s.seenBy(ctx, r, q.Files)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// Review returns the review with the given ID (an error of kind
// ErrNotFound when there is none), with the number of files it changes.
// With file rules (files, as ReviewQuery.Files), it is the review as
// their caller sees it: its files counted as they let it see them, its
// reason hidden when they hide a path, and not found when it changes
// files the caller sees none of.
func (s *Store) Review(ctx context.Context, id string, files ...WorkspaceOption) (Review, error) {
	rec, err := s.review(ctx, id)
	if err != nil {
		return Review{}, err
	}
	r, ok, err := s.seenBy(ctx, rec.Review, files)
	if err != nil {
		return Review{}, err
	}
	if !ok {
		return Review{}, errs.New(errs.ErrNotFound, "review not found: %s", id)
	}
	return r, nil
}

// reviewWorkspace is the workspace of r's review thread, acting as a.
func (s *Store) reviewWorkspace(ctx context.Context, r Review, a Actor, opts ...WorkspaceOption) (*Workspace, error) {
	return s.Workspace(ctx, r.Scope, r.ReviewThread, append([]WorkspaceOption{WorkspaceActor(a)}, opts...)...)
}

// ReviewChanges lists the files r changes: its review thread's head
// against the commit it was forked from, in path order.
func (s *Store) ReviewChanges(ctx context.Context, r Review) ([]Change, error) {
	return s.reviewChanges(ctx, r, nil)
}

// reviewChanges is ReviewChanges as a caller of file rules files sees them.
func (s *Store) reviewChanges(ctx context.Context, r Review, files []WorkspaceOption) ([]Change, error) {
	rw, err := s.reviewWorkspace(ctx, r, Actor{}, files...)
	if err != nil {
		return nil, err
	}
	return rw.Diff(ctx, strconv.FormatInt(r.Fork, 10), "head")
}

// ReviewDiff returns the unified diff of every file r changes, against
// the thread's commit it was forked from ("" when it changes nothing).
func (s *Store) ReviewDiff(ctx context.Context, r Review) (string, error) {
	rw, err := s.reviewWorkspace(ctx, r, Actor{})
	if err != nil {
		return "", err
	}
	from := strconv.FormatInt(r.Fork, 10)
	cs, err := rw.Diff(ctx, from, "head")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range cs {
		d, err := rw.DiffFile(ctx, from, "head", c.Path)
		if err != nil {
			return "", err
		}
		b.WriteString(d)
	}
	return b.String(), nil
}

// openReview refuses a decision on a review that is not open.
func openReview(r Review) error {
	if r.State != ReviewOpen {
		return errs.New(errs.ErrConflict, "review %s was %s already, by %s at %s", r.ID, r.State, r.DecidedBy, r.DecidedAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// ApproveReview merges review id's changes into its thread (as
// Workspace.Merge, by actor by) and archives its review thread. A merge
// with conflicts is refused as Merge refuses it (a *MergeConflictError):
// nothing changes and the review stays open. The merge commit and the
// archive entry record by, so the audit trail says who approved and when.
func (s *Store) ApproveReview(ctx context.Context, id string, by Actor) (Review, MergeResult, error) {
	rec, err := s.review(ctx, id)
	if err != nil {
		return Review{}, MergeResult{}, err
	}
	r := rec.Review
	if err := openReview(r); err != nil {
		return r, MergeResult{}, err
	}
	// Archive first: no change of the caller can land on the review
	// thread after the commit the merge takes.
	rw, err := s.reviewWorkspace(ctx, r, by)
	if err != nil {
		return r, MergeResult{}, err
	}
	ar, err := rw.setArchivedWith(ctx, true, "review "+r.ID+" approved")
	if err != nil {
		return r, MergeResult{}, err
	}
	last := ar.Head
	if ar.Changed {
		last-- // the commit before the archive entry
	}
	target, err := s.Workspace(ctx, r.Scope, r.Thread, WorkspaceActor(by))
	if err != nil {
		return r, MergeResult{}, err
	}
	var res MergeResult
	if r.Base == 0 {
		// Forked from a thread without commits: no common commit to merge
		// from, so the thread takes the review's files whole, if it still
		// has none.
		res, err = s.approveFirst(ctx, r, rw, target, last)
	} else {
		res, err = target.Merge(ctx, r.ReviewThread+"@"+strconv.FormatInt(last, 10))
	}
	if err != nil {
		if ar.Changed {
			if _, uerr := rw.setArchivedWith(ctx, false, "review "+r.ID+" reopened: "+oneLine(err.Error())); uerr != nil {
				return r, res, errors.Join(err, uerr)
			}
		}
		return r, res, err
	}
	now, err := s.b.Now(ctx)
	if err != nil {
		return r, res, err
	}
	r.State, r.DecidedBy, r.DecidedAt = ReviewApproved, decider(by), now.UTC()
	if !res.Unchanged {
		r.Merge = res.Commit.Seq
	}
	rec.Review = r
	if err := s.putReview(ctx, rec); err != nil {
		return r, res, err
	}
	r.Files = len(res.Paths)
	return r, res, nil
}

// approveFirst approves review r of a thread that had no commits when r
// began: its commit last becomes the thread's first (a publish, one
// compare-and-swap), refused when the thread has commits by now.
func (s *Store) approveFirst(ctx context.Context, r Review, rw, target *Workspace, last int64) (MergeResult, error) {
	res := MergeResult{From: CommitRef{Thread: r.ReviewThread, Seq: last}, Into: r.Thread}
	cs, err := rw.Diff(ctx, "0", strconv.FormatInt(last, 10))
	if err != nil {
		return res, err
	}
	for _, c := range cs {
		res.Paths = append(res.Paths, c.Path)
	}
	if len(cs) == 0 {
		res.Unchanged = true
		return res, nil
	}
	c, err := rw.publishAt(ctx, target, 0, strconv.FormatInt(last, 10), "")
	if errors.Is(err, ErrConflict) {
		return res, errs.New(errs.ErrConflict, "review %s cannot be approved: thread %s had no commits when the review began and has some now; merge its files by hand, or reject it", r.ID, r.Thread)
	}
	res.Commit = c
	return res, err
}

// RejectReview archives review id's thread: its changes never reach the
// thread, and its caller's next call is told (with reason, when given).
// The archive entry records by.
func (s *Store) RejectReview(ctx context.Context, id, reason string, by Actor) (Review, error) {
	rec, err := s.review(ctx, id)
	if err != nil {
		return Review{}, err
	}
	r := rec.Review
	if err := openReview(r); err != nil {
		return r, err
	}
	if strings.ContainsAny(reason, "\r\n") || len(reason) > 1000 {
		return r, errs.New(errs.ErrInvalidArgument, "a reason is one line of at most 1000 bytes")
	}
	rw, err := s.reviewWorkspace(ctx, r, by)
	if err != nil {
		return r, err
	}
	sum := "review " + r.ID + " rejected"
	if reason != "" {
		sum += ": " + reason
	}
	if _, err := rw.setArchivedWith(ctx, true, sum); err != nil {
		return r, err
	}
	now, err := s.b.Now(ctx)
	if err != nil {
		return r, err
	}
	r.State, r.DecidedBy, r.DecidedAt, r.Reason = ReviewRejected, decider(by), now.UTC(), reason
	rec.Review = r
	return r, s.putReview(ctx, rec)
}

// deleteReviews deletes the reviews of a scope (PurgeScope).
func (s *Store) deleteReviews(ctx context.Context, scope string) error {
	rs, err := s.reviews(ctx)
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Scope == scope {
			if err := s.b.PutSetting(ctx, "", "", reviewKey+r.ID, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// refuseOpenReviewThread refuses to delete the thread of an open review:
// its caller's next change would make the thread anew, empty, and an
// approval would merge that.
func (s *Store) refuseOpenReviewThread(ctx context.Context, thread string) error {
	id, ok := strings.CutPrefix(thread, reviewThreadPrefix)
	if !ok || ValidReviewID(id) != nil {
		return nil
	}
	r, err := s.review(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.State != ReviewOpen || r.ReviewThread != thread {
		return nil
	}
	return errs.New(errs.ErrConflict, "thread %s holds review %s, which is open: approve or reject it first (satchel review reject %s archives the thread)", thread, id, id)
}
