package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDocCheckListsMisfits: after a store's definition changes, doc check
// lists the stored documents that no longer fit it, with why, and exits 1;
// documents that fit (and a shared store's) are not listed.
func TestDocCheckListsMisfits(t *testing.T) {
	h := newHarness(t)
	dir := seedProject(t)
	h.ok("--scope", "acme", "doc", "--dir", dir, "set", "research-notes", noteJSON("acme", "pricing", 0.5))
	h.ok("--scope", "beta", "doc", "--dir", dir, "set", "research-notes", noteJSON("beta", "hiring", 0.5))
	h.ok("doc", "--dir", dir, "set", "company-profiles", `{"company_id": "acme", "name": "Acme"}`)
	equal(t, "before the change", h.ok("doc", "--dir", dir, "check"), "checked 3 documents: every one fits its store's definition\n")

	// A required field added, a type changed.
	def := `{"name": "research-notes", "entity": {"name": "ResearchNote", "key": "{company_id}:{topic}", "schema": {
		"company_id": {"type": "string"}, "topic": {"type": "string"}, "summary": {"type": "string"}, "confidence": {"type": "string"},
		"updated_at": {"type": "datetime"}, "tags": {"type": "array", "item": {"type": "string"}}, "owner": {"type": "string"},
		"metadata": {"type": "object", "fields": {"source": {"type": "string"}, "analyst": {"type": "string", "nullable": true}}}}}}`
	if err := os.WriteFile(filepath.Join(dir, "stores/research-notes.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.run("doc", "--dir", dir, "check")
	why := "confidence: must be a string, not a number; owner: required field is missing"
	equal(t, "stdout", r.Out, "research-notes (scope acme) acme:pricing: "+why+"\n"+
		"research-notes (scope beta) beta:hiring: "+why+"\n"+
		"checked 3 documents: 2 do not fit their store's definition\n")
	equal(t, "stderr", r.Err, "doc check: 2 do not fit their store's definition\n")
	equal(t, "exit", r.Code, 1)
	r = h.run("--scope", "beta", "doc", "--dir", dir, "check", "research-notes", "--json")
	equal(t, "--json", r.Out, `{"documents":1,"misfits":[{"store":"research-notes","scope":"beta","key":"beta:hiring","problems":["confidence: must be a string, not a number","owner: required field is missing"]}]}`+"\n")
	// Still readable, and said not to fit.
	r = h.run("--scope", "acme", "doc", "--dir", dir, "get", "research-notes", "acme:pricing")
	equal(t, "get's notice", r.Err, "acme:pricing does not fit the store's definition: "+why+"\n")
	equal(t, "get's exit", r.Code, 0)
	r = h.run("--scope", "acme", "doc", "--dir", dir, "list", "research-notes")
	equal(t, "list's notice", r.Err, "1 document of this page does not fit the store's definition (satchel doc check says why)\n")
	h.refused(`store "nosuch" not found (stores: company-profiles, research-notes)`, "doc", "--dir", dir, "check", "nosuch")
}
