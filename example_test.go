package satchel_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/satchel-dev/satchel"
)

func Example() {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		panic(err)
	}
	defer st.Close()
	ws, _ := st.Workspace(ctx, "acme", "main")

	_ = ws.Write(ctx, "notes/plan.md", "# Plan\n1. read\n2. think\n3. write\n")
	numbered, _ := ws.ReadNumbered(ctx, "notes/plan.md", 2, 3)
	fmt.Println(numbered)

	_, err = ws.StrReplace(ctx, "notes/plan.md", "1.", "1)", false)
	fmt.Println(err)
	// Output:
	// 2| 1. read
	// 3| 2. think
	// <nil>
}

func ExampleWorkspace_StrReplace() {
	ctx := context.Background()
	st, _ := satchel.Open(ctx, "memory:")
	ws, _ := st.Workspace(ctx, "acme", "main")
	_ = ws.Write(ctx, "a.md", "x = 1\ny = 1\n")

	_, err := ws.StrReplace(ctx, "a.md", "= 1", "= 2", false)
	fmt.Println(err)
	fmt.Println(errors.Is(err, satchel.ErrAmbiguousAnchor))

	n, _ := ws.StrReplace(ctx, "a.md", "= 1", "= 2", true)
	fmt.Println(n)
	// Output:
	// anchor occurs 2 times in a.md, expected exactly one
	// true
	// 2
}

func ExampleWorkspace_At() {
	ctx := context.Background()
	st, _ := satchel.Open(ctx, "memory:")
	ws, _ := st.Workspace(ctx, "acme", "main")
	_ = ws.Write(ctx, "draft.md", "first draft")
	_, _ = ws.Checkpoint(ctx, "v1")
	_ = ws.Write(ctx, "draft.md", "second draft")

	old, _ := ws.At(ctx, "v1")
	text, _ := old.Read(ctx, "draft.md")
	fmt.Println(text)
	changes, _ := ws.Diff(ctx, "v1", "head")
	fmt.Println(changes)
	// Output:
	// first draft
	// [{draft.md changed}]
}

func ExampleWorkspace_Fanout() {
	ctx := context.Background()
	st, _ := satchel.Open(ctx, "memory:")
	ws, _ := st.Workspace(ctx, "acme", "main")
	err := ws.Fanout(ctx,
		func(ctx context.Context, arm *satchel.Workspace) error { return arm.Append(ctx, "log.txt", "arm 1\n") },
		func(ctx context.Context, arm *satchel.Workspace) error { return arm.Append(ctx, "log.txt", "arm 2\n") },
	)
	fmt.Println(err)
	info, _ := ws.Stat(ctx, "log.txt")
	fmt.Println(info.Lines)
	// Output:
	// <nil>
	// 2
}

func ExampleWorkspace_Merge() {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		panic(err)
	}
	defer st.Close()
	main, _ := st.Workspace(ctx, "acme", "main")
	_ = main.Write(ctx, "plan.md", "1. read\n2. think\n3. write\n")
	tryB, _ := main.Fork(ctx, "", "try-b")
	_ = tryB.Write(ctx, "plan.md", "1. read\n2. think\n3. write\n4. review\n")
	_ = main.Write(ctx, "plan.md", "1. read carefully\n2. think\n3. write\n")

	r, err := main.Merge(ctx, "try-b")
	fmt.Println(r.Message(), err)
	merged, _ := main.Read(ctx, "plan.md")
	fmt.Print(merged)

	_ = tryB.Write(ctx, "plan.md", "1. skim\n")
	_, err = main.Merge(ctx, "try-b")
	fmt.Println(errors.Is(err, satchel.ErrConflict), err)
	// Output:
	// merged try-b@2 into main: commit 3, 1 path changed <nil>
	// 1. read carefully
	// 2. think
	// 3. write
	// 4. review
	// true merge of try-b into main refused: 1 conflict: plan.md lines 1-4 (both changed)
}
