package satchel_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/satchel-dev/satchel"
)

// A caller whose changes wait for review writes to a review thread of its
// own; the thread changes when an operator approves the review.
func ExampleForReview() {
	ctx := context.Background()
	st, _ := satchel.Open(ctx, "memory:")
	defer st.Close()
	main, _ := st.Workspace(ctx, "acme", "main")
	_ = main.Write(ctx, "notes/plan.md", "draft\n")

	agent := satchel.Actor{Agent: "intern"}
	ws, _ := st.Workspace(ctx, "acme", "main", satchel.ForReview("session-1"), satchel.WorkspaceActor(agent))
	h := ws.ForActor(agent) // a handle per call: its notices are the call's
	_, _ = h.StrReplace(ctx, "notes/plan.md", "draft", "final", false)
	notice := h.Notices()[0]
	fmt.Println(strings.HasPrefix(notice, "your changes wait for review R-"))
	mine, _ := ws.Read(ctx, "notes/plan.md")
	theirs, _ := main.Read(ctx, "notes/plan.md")
	fmt.Print(mine, theirs)

	id := strings.TrimPrefix(notice, "your changes wait for review ")
	_, m, _ := st.ApproveReview(ctx, id, satchel.Actor{Via: "example"})
	fmt.Println(m.Paths)
	theirs, _ = main.Read(ctx, "notes/plan.md")
	fmt.Print(theirs)
	// Output:
	// true
	// final
	// draft
	// [notes/plan.md]
	// final
}
