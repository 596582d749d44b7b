package collection

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzFits: the fast path never says a document fits when Validate
// refuses it, and Misfit agrees with Validate.
func FuzzFits(f *testing.F) {
	s := researchNotes(f)
	for i := 0; i < 4; i++ {
		b, _ := json.Marshal(w2Doc(i*997, i%3))
		f.Add(b)
	}
	f.Add([]byte(`{"company_id": "a\"b"}`))
	f.Add([]byte(`{"confidence": 1e400}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		var m map[string]any
		valid := dec.Decode(&m) == nil && m != nil && !dec.More()
		if valid {
			if _, err := dec.Token(); err == nil {
				valid = false // more after the value
			}
		}
		if fits(s.root, doc) && (!valid || s.Validate(m, nil) != nil) {
			t.Errorf("fits says %s fits; Validate: %v", doc, s.Validate(m, nil))
		}
		if valid && (s.Misfit(doc) == nil) != (s.Validate(m, nil) == nil) {
			t.Errorf("Misfit(%s) = %q; Validate: %v", doc, s.Misfit(doc), s.Validate(m, nil))
		}
	})
}

// TestMisfit: a document that fits has no misfit, whatever its spacing;
// one that does not is described as a set's violations are.
func TestMisfit(t *testing.T) {
	s := researchNotes(t)
	b, _ := json.MarshalIndent(w2Doc(1, 0), "", "  ")
	if why := s.Misfit(b); why != nil {
		t.Errorf("a W2 document: %q", why)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	m["confidence"] = "high"
	delete(m, "topic")
	m["extra"] = 1
	b, _ = json.Marshal(m)
	got := s.Misfit(b)
	if len(got) != 3 || got[0] != "topic: required field is missing" {
		t.Errorf("Misfit = %q", got)
	}
}
