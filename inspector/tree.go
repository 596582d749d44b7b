package inspector

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/satchel-dev/satchel"
)

// The fork tree of a scope is drawn on the server as SVG: one lane per
// thread, a node per point that matters (its start, its checkpoints, the
// commits other threads forked from, its head), forks as edges from the
// parent's node down to the child's lane, then along it to its start.
//
// The layout keeps the drawing readable however many threads there are
// (decision 0141): lanes are ordered depth first, a thread's forks right
// below it, the latest fork nearest; columns are compacted (a node is one
// column right of the node before it on its lane, and a fork's first node
// one column right of the commit it came from, or further when a merge
// needs room: treeColumns), so every node of a fork's
// subtree lies right of its fork point and an edge, which goes down at
// the fork point's column, passes no other thread's node and crosses no
// other edge; every label is cut to the room it has (the whole text is in
// its title), so that none overprints another. TestTreeLayout checks this
// on the SVG of generated forests.
//
// A merge (a commit naming a second parent, satchel.Commit.Parent) is a
// "merge" node on its lane and a "merged" node at the commit it merged on
// the source's lane, joined by a dashed edge: along the source's lane to
// the merge's column, then straight to the merge. Its columns keep that
// route clear: the merge is right of what it merged, of every node (and
// merge edge) of the lanes its edge passes, and left of the source's next
// node, so a merge edge passes no node, crosses no edge and crosses no
// lane line (lanes whose nodes all lie right of the merge, being forks of
// it or of later commits, end before its column's room begins).

const (
	lanesPerPage      = 60
	checkpointsOnLane = 12
	// mergeScan is how many of a lane's newest commits are searched for
	// merges.
	mergeScan   = 500
	laneHeight  = 72
	columnWidth = 84
	labelWidth  = 180
	treeTop     = 48
	// The tree's text is monospace: a character is 0.6 of its size
	// wide. Thread names are 12 px, checkpoint names 11, numbers 10.
	threadChar = 7.2
	cpChar     = 6.6
)

// fit cuts s to at most maxPx at charPx a character, ending a cut with
// "…".
func fit(s string, maxPx, charPx float64) string {
	r := []rune(s)
	n := int(maxPx / charPx)
	if len(r) <= n {
		return s
	}
	return string(r[:max(n-1, 0)]) + "…"
}

// treeNode is one drawn point of a lane.
type treeNode struct {
	Seq  int64
	Time time.Time
	Kind string // "start", "checkpoint", "fork", "merged", "merge", "head"
	// Head marks the thread's head when the node is of another kind (a
	// merge that is the head).
	Head  bool
	Label string // a checkpoint's name, cut to its column
	Full  string // the checkpoint's whole name
	URL   string
	X, Y  int
	// LabelY puts alternate labels at two heights above the lane, so that
	// neighbours' names do not overlap.
	LabelY int
	Title  string
}

type treeLane struct {
	Thread   string
	Name     string // the thread's name, cut to the label column
	Archived bool
	URL      string
	Y        int
	X1, X2   int
	Nodes    []*treeNode
	Origin   *satchel.Origin
	Compare  string
	// merges are the lane's merge commits.
	merges []satchel.Commit
}

type treeEdge struct {
	D     string // the SVG path
	Title string
	Class string // "fork" or "merge"
}

type treeData struct {
	Scope         string
	Lanes         []*treeLane
	Edges         []treeEdge
	Width, Height int
	// The lane labels are drawn apart, LabelWidth wide, and stay in view
	// while the graph, GraphWidth wide, scrolls.
	LabelWidth, GraphWidth int
	Page, Of               int
	Prev, Next             string
}

// treePage draws the fork tree of a scope.
func (in *Inspector) treePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	scope, err := in.scopeOf(r)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	page, err := intParam(r, "page", 1)
	if err != nil {
		in.fail(w, r, err)
		return
	}
	d, err := in.forkTree(ctx, scope, int(page))
	if err != nil {
		in.fail(w, r, err)
		return
	}
	in.render(w, r, http.StatusOK, "tree", pageData{Title: "Fork tree of " + scope,
		Crumbs: append(scopeCrumbs(scope), crumb{"fork tree", ""}), Data: d})
}

func (in *Inspector) forkTree(ctx context.Context, scope string, page int) (treeData, error) {
	d := treeData{Scope: scope}
	infos, err := in.cfg.Store.Threads(ctx, scope)
	if err != nil {
		return d, err
	}
	v := viewerOf(ctx)
	seen := infos[:0]
	for _, t := range infos {
		if v.seesThread(scope, t.Name) && t.Head > 0 {
			seen = append(seen, t)
		}
	}
	seen, origins, err := in.treeOrder(ctx, scope, seen)
	if err != nil {
		return d, err
	}
	d.Of = max(1, (len(seen)+lanesPerPage-1)/lanesPerPage)
	d.Page = min(max(page, 1), d.Of)
	lo, hi := (d.Page-1)*lanesPerPage, min(d.Page*lanesPerPage, len(seen))
	self := "/s/" + pathSeg(scope) + "/tree?page="
	if d.Page > 1 {
		d.Prev = self + strconv.Itoa(d.Page-1)
	}
	if d.Page < d.Of {
		d.Next = self + strconv.Itoa(d.Page+1)
	}
	byName := map[string]*treeLane{}
	wss := map[string]*satchel.Workspace{}
	for i, t := range seen[lo:hi] {
		ws, err := in.cfg.Store.Workspace(ctx, scope, t.Name, in.fileOptions(ctx)...)
		if err != nil {
			return d, err
		}
		tr := threadRef{scope, t.Name}
		lane := &treeLane{Thread: t.Name, URL: threadURL(tr) + "/", Y: treeTop + i*laneHeight, Archived: t.Archived}
		name := t.Name
		if t.Archived {
			name += " (archived)"
		}
		lane.Name = fit(name, labelWidth-16, threadChar)
		if o, ok := origins[t.Name]; ok {
			lane.Origin = &o
			lane.Compare = threadURL(tr) + "/compare?from_thread=" + o.Thread + "&from=" + strconv.FormatInt(o.Seq, 10) + "&to=head"
		}
		node := func(seq int64, at time.Time, kind, label string) *treeNode {
			n := &treeNode{Seq: seq, Time: at, Kind: kind, Label: label, URL: threadURL(tr) + "/c/" + strconv.FormatInt(seq, 10), Y: lane.Y}
			lane.Nodes = append(lane.Nodes, n)
			return n
		}
		oldest, err := ws.History(ctx, 2, 1) // commit 1, when retained
		if err != nil {
			return d, err
		}
		if len(oldest) == 1 {
			node(oldest[0].Seq, oldest[0].Time, "start", "")
		}
		cps, err := ws.Checkpoints(ctx)
		if err != nil {
			return d, err
		}
		for _, cp := range cps[:min(len(cps), checkpointsOnLane)] {
			at, err := commitTime(ctx, ws, cp.Seq, t.Created)
			if err != nil {
				return d, err
			}
			node(cp.Seq, at, "checkpoint", cp.Name)
		}
		node(t.Head, t.HeadTime, "head", "")
		recent, err := ws.History(ctx, 0, mergeScan)
		if err != nil {
			return d, err
		}
		for _, c := range recent {
			if c.Parent != nil && c.Parent.Thread != t.Name {
				node(c.Seq, c.Time, "merge", "")
				lane.merges = append(lane.merges, c)
			}
		}
		byName[t.Name] = lane
		wss[t.Name] = ws
		d.Lanes = append(d.Lanes, lane)
	}
	// Fork points on the parents' lanes.
	for _, lane := range d.Lanes {
		o := lane.Origin
		if o == nil || byName[o.Thread] == nil {
			continue
		}
		parent := byName[o.Thread]
		at, err := commitTime(ctx, wss[o.Thread], o.Seq, time.Time{})
		if err != nil {
			return d, err
		}
		if at.IsZero() && len(lane.Nodes) > 0 {
			at = lane.Nodes[0].Time.Add(-time.Nanosecond)
		}
		n := &treeNode{Seq: o.Seq, Time: at, Kind: "fork", Y: parent.Y,
			URL: threadURL(threadRef{d.Scope, o.Thread}) + "/c/" + strconv.FormatInt(o.Seq, 10)}
		parent.Nodes = append(parent.Nodes, n)
	}
	// Merged commits on the sources' lanes.
	for _, lane := range d.Lanes {
		for _, m := range lane.merges {
			src := byName[m.Parent.Thread]
			if src == nil {
				continue
			}
			n := &treeNode{Seq: m.Parent.Seq, Kind: "merged", Y: src.Y,
				URL: threadURL(threadRef{d.Scope, m.Parent.Thread}) + "/c/" + strconv.FormatInt(m.Parent.Seq, 10)}
			src.Nodes = append(src.Nodes, n)
		}
	}
	for _, lane := range d.Lanes {
		sort.SliceStable(lane.Nodes, func(i, j int) bool { return lane.Nodes[i].Seq < lane.Nodes[j].Seq })
		lane.Nodes = dedupNodes(lane.Nodes)
	}
	col := treeColumns(d.Lanes, byName)
	for _, lane := range d.Lanes {
		for _, n := range lane.Nodes {
			n.X = labelWidth + columnWidth/3 + n.X*columnWidth
		}
	}
	for _, lane := range d.Lanes {
		if len(lane.Nodes) > 0 {
			lane.X1, lane.X2 = lane.Nodes[0].X, lane.Nodes[len(lane.Nodes)-1].X
		}
		labels := 0
		for _, n := range lane.Nodes {
			n.Title = lane.Thread + "@" + strconv.FormatInt(n.Seq, 10) + " (" + n.Kind + ")"
			if n.Label != "" {
				n.Title = lane.Thread + "@" + strconv.FormatInt(n.Seq, 10) + ": checkpoint " + n.Label
				n.Full, n.Label = n.Label, fit(n.Label, columnWidth-10, cpChar)
				n.LabelY = n.Y - 14
				if labels%2 == 1 {
					n.LabelY = n.Y - 28
				}
				labels++
			}
		}
	}
	for _, lane := range d.Lanes {
		o := lane.Origin
		if o == nil || byName[o.Thread] == nil || len(lane.Nodes) == 0 {
			continue
		}
		var from *treeNode
		for _, n := range byName[o.Thread].Nodes {
			if n.Seq == o.Seq {
				from = n
			}
		}
		if from == nil {
			continue
		}
		// Down at the fork point's column to the fork's lane, then along
		// it to its first node.
		to := lane.Nodes[0]
		d.Edges = append(d.Edges, treeEdge{
			D:     "M" + itoa(from.X) + " " + itoa(from.Y) + " V" + itoa(to.Y) + " H" + itoa(to.X),
			Title: lane.Thread + " forked from " + o.Thread + "@" + strconv.FormatInt(o.Seq, 10),
			Class: "fork",
		})
	}
	for _, lane := range d.Lanes {
		for _, m := range lane.merges {
			src := byName[m.Parent.Thread]
			if src == nil {
				continue
			}
			from, to := nodeAt(src, m.Parent.Seq), nodeAt(lane, m.Seq)
			if from == nil || to == nil {
				continue
			}
			// Along the source's lane to the merge's column, then
			// straight to the merge.
			d.Edges = append(d.Edges, treeEdge{
				D:     "M" + itoa(from.X) + " " + itoa(from.Y) + " H" + itoa(to.X) + " V" + itoa(to.Y),
				Title: m.Parent.Thread + "@" + strconv.FormatInt(m.Parent.Seq, 10) + " merged into " + lane.Thread + " (commit " + strconv.FormatInt(m.Seq, 10) + ")",
				Class: "merge",
			})
		}
	}
	d.Width = labelWidth + (col+1)*columnWidth + 40
	d.Height = treeTop + len(d.Lanes)*laneHeight
	d.LabelWidth, d.GraphWidth = labelWidth, d.Width-labelWidth
	return d, nil
}

// kindRank orders the kinds of nodes at one commit: the node shows the
// highest.
var kindRank = map[string]int{"merge": 4, "head": 3, "checkpoint": 2}

// dedupNodes merges nodes of one lane at the same commit (a checkpoint
// that is also the head or a fork point), keeping a checkpoint's label:
// a merge stays a merge (marked Head when it is the head), else the head
// a head, else a checkpoint a checkpoint.
func dedupNodes(ns []*treeNode) []*treeNode {
	out := ns[:0]
	for _, n := range ns {
		if k := len(out); k > 0 && out[k-1].Seq == n.Seq {
			prev := out[k-1]
			if n.Label != "" {
				prev.Label = n.Label
			}
			if prev.Time.IsZero() {
				prev.Time = n.Time
			}
			head := prev.Head || prev.Kind == "head" || n.Kind == "head"
			if kindRank[n.Kind] > kindRank[prev.Kind] {
				prev.Kind = n.Kind
			}
			prev.Head = head && prev.Kind != "head"
			continue
		}
		out = append(out, n)
	}
	return out
}

// nodeAt is the lane's node of commit seq, or nil.
func nodeAt(lane *treeLane, seq int64) *treeNode {
	for _, n := range lane.Nodes {
		if n.Seq == seq {
			return n
		}
	}
	return nil
}

// treeColumns gives each node its column (in X, a column number) and
// returns the last column: the fewest columns such that a node is right of
// the node before it on its lane, a fork's first node right of its fork
// point, and, for each merge, the merge right of the commit it merged and
// of every node and merge of the lanes between the source's lane and its
// own (but those lanes forked from the merge's lane at or after the merge,
// or from the source's lane after the merged commit, which lie right of it
// anyway), and the source's next node right of the merge. Should merges
// ask for a cycle (threads deleted and made anew under the same names),
// only the first three rules hold.
func treeColumns(lanes []*treeLane, byName map[string]*treeLane) int {
	type rule struct{ a, b *treeNode } // b is right of a
	var rules []rule
	index := map[*treeLane]int{}
	for i, lane := range lanes {
		index[lane] = i
		for j := 1; j < len(lane.Nodes); j++ {
			rules = append(rules, rule{lane.Nodes[j-1], lane.Nodes[j]})
		}
		if o := lane.Origin; o != nil && byName[o.Thread] != nil && len(lane.Nodes) > 0 {
			if from := nodeAt(byName[o.Thread], o.Seq); from != nil {
				rules = append(rules, rule{from, lane.Nodes[0]})
			}
		}
	}
	// forkedAfter reports whether lane l descends from lane of through a
	// fork at a commit after seq (or at it, when at is set).
	forkedAfter := func(l, of *treeLane, seq int64, at bool) bool {
		for range lanes {
			o := l.Origin
			if o == nil || byName[o.Thread] == nil {
				return false
			}
			if byName[o.Thread] == of {
				return o.Seq > seq || at && o.Seq == seq
			}
			l = byName[o.Thread]
		}
		return false
	}
	var mergeRules []rule
	for _, lane := range lanes {
		for _, m := range lane.merges {
			src := byName[m.Parent.Thread]
			if src == nil {
				continue
			}
			from, to := nodeAt(src, m.Parent.Seq), nodeAt(lane, m.Seq)
			if from == nil || to == nil {
				continue
			}
			rules = append(rules, rule{from, to})
			for i, n := range src.Nodes {
				if n == from && i+1 < len(src.Nodes) {
					mergeRules = append(mergeRules, rule{to, src.Nodes[i+1]})
				}
			}
			lo, hi := min(index[src], index[lane]), max(index[src], index[lane])
			for _, l := range lanes[lo+1 : hi] {
				if forkedAfter(l, lane, m.Seq, true) || forkedAfter(l, src, m.Parent.Seq, false) {
					continue
				}
				for _, n := range l.Nodes {
					mergeRules = append(mergeRules, rule{n, to})
				}
				for _, m2 := range mergesFrom(lanes, byName, l) {
					mergeRules = append(mergeRules, rule{m2, to})
				}
			}
		}
	}
	solve := func(rs []rule) bool {
		for _, lane := range lanes {
			for _, n := range lane.Nodes {
				n.X = 0
			}
		}
		for range len(rs) + 2 {
			changed := false
			for _, r := range rs {
				if r.b.X < r.a.X+1 {
					r.b.X, changed = r.a.X+1, true
				}
			}
			if !changed {
				return true
			}
		}
		return false
	}
	if !solve(append(rules, mergeRules...)) {
		solve(rules)
	}
	col := 0
	for _, lane := range lanes {
		for _, n := range lane.Nodes {
			col = max(col, n.X)
		}
	}
	return col
}

// mergesFrom is the merge nodes of the merges whose source is lane src.
func mergesFrom(lanes []*treeLane, byName map[string]*treeLane, src *treeLane) []*treeNode {
	var out []*treeNode
	for _, lane := range lanes {
		for _, m := range lane.merges {
			if byName[m.Parent.Thread] == src {
				if n := nodeAt(lane, m.Seq); n != nil {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// commitTime is the time of a retained commit, or def when it was
// dropped.
func commitTime(ctx context.Context, ws *satchel.Workspace, seq int64, def time.Time) (time.Time, error) {
	snap, err := ws.At(ctx, strconv.FormatInt(seq, 10))
	if err != nil {
		if satchelNotFound(err) {
			return def, nil
		}
		return time.Time{}, err
	}
	return snap.Commit().Time, nil
}

// treeOrder orders the threads depth first: each root (a thread that was
// not forked, or whose source the viewer does not see) by creation, and
// right below each thread its forks, the latest fork point first, each
// followed by its own forks. It returns the origins it read.
func (in *Inspector) treeOrder(ctx context.Context, scope string, ts []satchel.ThreadInfo) ([]satchel.ThreadInfo, map[string]satchel.Origin, error) {
	origins := map[string]satchel.Origin{}
	byName := map[string]satchel.ThreadInfo{}
	for _, t := range ts {
		byName[t.Name] = t
	}
	children := map[string][]satchel.ThreadInfo{}
	var roots []satchel.ThreadInfo
	for _, t := range ts {
		ws, err := in.cfg.Store.Workspace(ctx, scope, t.Name)
		if err != nil {
			return nil, nil, err
		}
		o, ok, err := ws.Origin(ctx)
		if err != nil {
			return nil, nil, err
		}
		if _, seen := byName[o.Thread]; ok && seen && o.Thread != t.Name {
			origins[t.Name] = o
			children[o.Thread] = append(children[o.Thread], t)
		} else {
			if ok {
				origins[t.Name] = o
			}
			roots = append(roots, t)
		}
	}
	sort.SliceStable(roots, func(i, j int) bool { return roots[i].Created.Before(roots[j].Created) })
	out := make([]satchel.ThreadInfo, 0, len(ts))
	done := map[string]bool{}
	var walk func(t satchel.ThreadInfo)
	walk = func(t satchel.ThreadInfo) {
		if done[t.Name] {
			return
		}
		done[t.Name] = true
		out = append(out, t)
		cs := children[t.Name]
		sort.SliceStable(cs, func(i, j int) bool {
			a, b := origins[cs[i].Name], origins[cs[j].Name]
			if a.Seq != b.Seq {
				return a.Seq > b.Seq
			}
			return cs[i].Created.After(cs[j].Created)
		})
		for _, c := range cs {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	for _, t := range ts { // a cycle of names (threads deleted and made anew)
		if !done[t.Name] {
			delete(origins, t.Name)
			walk(t)
		}
	}
	return out, origins, nil
}
