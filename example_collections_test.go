package satchel_test

import (
	"context"
	"fmt"
	"testing/fstest"

	"github.com/satchel-dev/satchel"
)

// A project defines its stores in stores/<name>.json (and its agents in
// agents/<name>/agent.json); here in memory, usually with LoadProject(dir).
func ExampleStore_Collection() {
	ctx := context.Background()
	p, err := satchel.LoadProjectFS(fstest.MapFS{
		"stores/notes.json": {Data: []byte(`{
			"key": "{company}:{topic}",
			"schema": {
				"company": {"type": "string"},
				"topic": {"type": "string"},
				"confidence": {"type": "number", "min": 0, "max": 1},
				"updated_at": {"type": "datetime"}
			},
			"history": {"versions": 2},
			"indexes": ["company"]
		}`)},
	})
	if err != nil {
		panic(err)
	}
	st, _ := satchel.Open(ctx, "memory:")
	defer st.Close()
	notes, err := st.Collection(ctx, p, "acme", "notes")
	if err != nil {
		panic(err)
	}

	key, version, _ := notes.Set(ctx, `{"company": "globex", "topic": "pricing", "confidence": 0.8, "updated_at": "2026-01-31T10:30:00+01:00"}`)
	fmt.Println(key, version)
	_, version, _ = notes.Set(ctx, map[string]any{"company": "globex", "topic": "pricing", "confidence": 0.9, "updated_at": "2026-02-01T00:00:00Z"})
	fmt.Println(key, version)

	d, _ := notes.Get(ctx, "globex:pricing", true)
	fmt.Printf("%s\n", d.JSON)
	fmt.Printf("version %d, previous %d: %s\n", d.Version, d.History[0].Version, d.History[0].JSON)

	_, _, err = notes.Set(ctx, `{"company": "globex", "confidence": 2, "colour": "red"}`)
	fmt.Println(err)

	pg, _ := notes.Query(ctx, satchel.QueryRequest{Where: "company = 'globex' AND confidence > 0.5", Sort: "-updated_at", Limit: 10})
	fmt.Println(len(pg.Documents), pg.Documents[0].Key)

	_, err = notes.Get(ctx, "initech:hiring", false)
	fmt.Println(err)
	// Output:
	// globex:pricing 1
	// globex:pricing 2
	// {"company":"globex","confidence":0.9,"topic":"pricing","updated_at":"2026-02-01T00:00:00Z"}
	// version 2, previous 1: {"company":"globex","confidence":0.8,"topic":"pricing","updated_at":"2026-01-31T09:30:00Z"}
	// document failed validation:
	//   topic: required field is missing
	//   confidence: must be at most 1, not 2
	//   updated_at: required field is missing
	//   colour: unknown field (fields here: company, topic, confidence, updated_at)
	// 1 globex:pricing
	// document not found: initech:hiring
}
