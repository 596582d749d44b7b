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
// commits other threads forked from, its head), forks as curves from the
// parent's node to the child's start. Nodes are placed left to right in
// time order, one column each, so that a fork always starts right of the
// commit it came from and lanes stay readable whatever the gaps in time.

const (
	lanesPerPage      = 40
	checkpointsOnLane = 12
	laneHeight        = 72
	columnWidth       = 84
	labelWidth        = 180
	treeTop           = 48
)

// treeNode is one drawn point of a lane.
type treeNode struct {
	Seq   int64
	Time  time.Time
	Kind  string // "start", "checkpoint", "fork", "head"
	Label string // a checkpoint's name
	URL   string
	X, Y  int
	// LabelY puts alternate labels at two heights above the lane, so that
	// neighbours' names do not overlap.
	LabelY int
	Title  string
}

type treeLane struct {
	Thread  string
	URL     string
	Y       int
	X1, X2  int
	Nodes   []*treeNode
	Origin  *satchel.Origin
	Compare string
}

type treeEdge struct {
	D     string // the SVG path
	Title string
}

type treeData struct {
	Scope         string
	Lanes         []*treeLane
	Edges         []treeEdge
	Width, Height int
	Page, Of      int
	Prev, Next    string
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
	// Parents before children, then by creation: a lane's parent is above it.
	sort.SliceStable(seen, func(i, j int) bool { return seen[i].Created.Before(seen[j].Created) })
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
	var all []*treeNode
	for i, t := range seen[lo:hi] {
		ws, err := in.cfg.Store.Workspace(ctx, scope, t.Name, in.fileOptions(ctx)...)
		if err != nil {
			return d, err
		}
		tr := threadRef{scope, t.Name}
		lane := &treeLane{Thread: t.Name, URL: threadURL(tr) + "/", Y: treeTop + i*laneHeight}
		if o, ok, err := ws.Origin(ctx); err != nil {
			return d, err
		} else if ok {
			lane.Origin = &o
			lane.Compare = threadURL(tr) + "/compare?from_thread=" + o.Thread + "&from=" + strconv.FormatInt(o.Seq, 10) + "&to=head"
		}
		node := func(seq int64, at time.Time, kind, label string) *treeNode {
			n := &treeNode{Seq: seq, Time: at, Kind: kind, Label: label, URL: threadURL(tr) + "/c/" + strconv.FormatInt(seq, 10), Y: lane.Y}
			lane.Nodes = append(lane.Nodes, n)
			all = append(all, n)
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
		all = append(all, n)
	}
	// One column per distinct point in time order; a lane's nodes are also
	// in sequence order, so equal times keep the lower sequence first.
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].Time.Equal(all[j].Time) {
			return all[i].Time.Before(all[j].Time)
		}
		return all[i].Seq < all[j].Seq
	})
	col := 0
	for i, n := range all {
		if i > 0 && !(n.Time.Equal(all[i-1].Time) && n.Y == all[i-1].Y && n.Seq == all[i-1].Seq) {
			col++
		}
		n.X = labelWidth + col*columnWidth
	}
	for _, lane := range d.Lanes {
		sort.SliceStable(lane.Nodes, func(i, j int) bool { return lane.Nodes[i].X < lane.Nodes[j].X })
		lane.Nodes = dedupNodes(lane.Nodes)
		if len(lane.Nodes) > 0 {
			lane.X1, lane.X2 = lane.Nodes[0].X, lane.Nodes[len(lane.Nodes)-1].X
		}
		labels := 0
		for _, n := range lane.Nodes {
			n.Title = lane.Thread + "@" + strconv.FormatInt(n.Seq, 10) + " (" + n.Kind + ")"
			if n.Label != "" {
				n.Title = lane.Thread + "@" + strconv.FormatInt(n.Seq, 10) + ": checkpoint " + n.Label
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
		to := lane.Nodes[0]
		mid := (from.X + to.X) / 2
		d.Edges = append(d.Edges, treeEdge{
			D:     "M" + itoa(from.X) + " " + itoa(from.Y) + " C" + itoa(mid) + " " + itoa(from.Y) + " " + itoa(mid) + " " + itoa(to.Y) + " " + itoa(to.X) + " " + itoa(to.Y),
			Title: lane.Thread + " forked from " + o.Thread + "@" + strconv.FormatInt(o.Seq, 10),
		})
	}
	d.Width = labelWidth + (col+1)*columnWidth + 40
	d.Height = treeTop + len(d.Lanes)*laneHeight
	return d, nil
}

// dedupNodes merges nodes of one lane at the same commit (a checkpoint
// that is also the head or a fork point), keeping a checkpoint's label.
func dedupNodes(ns []*treeNode) []*treeNode {
	out := ns[:0]
	for _, n := range ns {
		if k := len(out); k > 0 && out[k-1].Seq == n.Seq {
			prev := out[k-1]
			if n.Label != "" {
				prev.Label = n.Label
			}
			if n.Kind == "head" || (n.Kind == "checkpoint" && prev.Kind != "head") {
				prev.Kind = n.Kind
			}
			continue
		}
		out = append(out, n)
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
