// Package bench holds the standard benchmark workloads of
// docs/workloads.md: the deterministic corpora (this file) and the
// runners that drive them against satchel.
package bench

import (
	"strconv"
	"strings"
	"time"
)

// Mulberry32 is the 32-bit PRNG that every workload's data is drawn from,
// ported exactly so that every system sees the same bytes. All arithmetic is
// unsigned 32-bit (it wraps mod 2^32) and every shift is logical.
type Mulberry32 struct{ a uint32 }

// NewMulberry32 returns a generator whose state is seed.
func NewMulberry32(seed uint32) *Mulberry32 { return &Mulberry32{a: seed} }

// Next advances the state and returns the next 32-bit value:
//
//	a = a + 0x6D2B79F5
//	t = imul(a ^ (a >> 15), 1 | a)
//	t = (t + imul(t ^ (t >> 7), 61 | t)) ^ t
//	return t ^ (t >> 14)
func (m *Mulberry32) Next() uint32 {
	m.a += 0x6D2B79F5
	a := m.a
	t := (a ^ (a >> 15)) * (1 | a)
	t = (t + (t^(t>>7))*(61|t)) ^ t
	return t ^ (t >> 14)
}

const alphabet = "abcdefghijklmnopqrstuvwxyz"

// fill appends letters drawn from m to b until b holds width bytes.
func fill(b *strings.Builder, m *Mulberry32, start, width int) {
	for n := start; n < width; n++ {
		b.WriteByte(alphabet[m.Next()%26])
	}
}

// pad returns strconv.Itoa(n) with leading zeros to width digits.
func pad(n, width int) string {
	s := strconv.Itoa(n)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

// W1 corpus geometry.
const (
	W1Lines      = 100 // lines in each file
	W1LineWidth  = 72  // characters in each generated line, not counting its "\n"
	W1MarkerLine = 50  // the line replaced by MARKER-{i}
	W1TodoLine   = 77  // the line replaced by TODO-{i} when i%7 == 0
	W1DefaultN   = 10000
)

// W1Path returns the path of W1 file i: notes/d{i%100:02}/f{i:05}.md.
func W1Path(i int) string {
	return "notes/d" + pad(i%100, 2) + "/f" + pad(i, 5) + ".md"
}

// W1MissingPath returns the path that the exists phase probes and that is
// never written: notes/d{i%100:02}/missing{i:05}.md.
func W1MissingPath(i int) string {
	return "notes/d" + pad(i%100, 2) + "/missing" + pad(i, 5) + ".md"
}

// W1Seed returns the seed of file i's own PRNG stream:
// imul(seed, 0x9E3779B1) + imul(i + 1, 0x85EBCA77), mod 2^32.
func W1Seed(seed uint32, i int) uint32 {
	return seed*0x9E3779B1 + uint32(i+1)*0x85EBCA77
}

// W1Content returns the content of W1 file i: 100 lines, each ending in
// "\n". Line k (1-based) is "line {k} of file {i}: " followed by filler
// letters until the line holds 72 characters, the "\n" not counted (so each
// generated line is 73 bytes with it). The filler of all 100 lines is drawn
// first, line by line in order; only then is line 50 replaced by
// "MARKER-{i}" and, when i%7 == 0, line 77 by "TODO-{i}". The replaced lines
// therefore still consume their PRNG draws. This is the reading that gives
// the check sum of WORKLOADS.md (see W1Checksum); counting the "\n" in the
// 72, or skipping the draws of replaced lines, does not.
func W1Content(seed uint32, i int) string {
	m := Mulberry32{a: W1Seed(seed, i)}
	is := strconv.Itoa(i)
	var b strings.Builder
	b.Grow(W1Lines * (W1LineWidth + 1))
	for k := 1; k <= W1Lines; k++ {
		switch {
		case k == W1MarkerLine:
			b.WriteString("MARKER-" + is)
			drain(&m, W1LineWidth-len(linePrefix(k, is)))
		case k == W1TodoLine && i%7 == 0:
			b.WriteString("TODO-" + is)
			drain(&m, W1LineWidth-len(linePrefix(k, is)))
		default:
			p := linePrefix(k, is)
			b.WriteString(p)
			fill(&b, &m, len(p), W1LineWidth)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// linePrefix is the fixed start of W1 line k of file is.
func linePrefix(k int, is string) string {
	return "line " + strconv.Itoa(k) + " of file " + is + ": "
}

// drain consumes the n draws that a replaced line would have used.
func drain(m *Mulberry32, n int) {
	for ; n > 0; n-- {
		m.Next()
	}
}

// W1Marker returns the unique marker on line 50 of file i, "MARKER-{i}";
// the edit phase replaces it with W1Edited(i).
func W1Marker(i int) string { return "MARKER-" + strconv.Itoa(i) }

// W1Edited returns what the edit phase writes in place of W1Marker(i),
// "EDITED-{i}".
func W1Edited(i int) string { return "EDITED-" + strconv.Itoa(i) }

// W1AppendPath is the file that the append phase appends to.
const W1AppendPath = "log.txt"

// W1AppendLine returns append line j: "append {j:06} " padded with "." to
// 39 characters, then "\n" (40 bytes in all).
func W1AppendLine(j int) string {
	s := "append " + pad(j, 6) + " "
	if len(s) < 39 {
		s += strings.Repeat(".", 39-len(s))
	}
	return s + "\n"
}

// W1GrepPattern is the regular expression of the grep phase.
const W1GrepPattern = `TODO-[0-9]*7\b`

// W1GrepExpected returns, in increasing i, the paths among the first n W1
// files that W1GrepPattern matches: those with i%7 == 0 (they carry
// TODO-{i}) and i ending in 7. The filler is lowercase, so it never
// matches.
func W1GrepExpected(n int) []string {
	var out []string
	for i := 7; i < n; i += 70 { // i%7 == 0 and i%10 == 7 ⇔ i%70 == 7
		out = append(out, W1Path(i))
	}
	return out
}

// W2 defaults.
const (
	W2DefaultN        = 100000
	W2StoreName       = "research-notes"
	W2SummaryWidth    = 200 // characters in a summary
	W2HistoryVersions = 3   // history.versions of the store
)

// W2Tags are the tags that W2 documents draw from, in draw order.
var W2Tags = [...]string{"saas", "fintech", "b2b", "b2c", "hardware", "ai", "infra", "health", "retail", "energy"}

// W2Sources are the values of metadata.source, in draw order.
var W2Sources = [...]string{"10-K", "call", "news", "analyst-note", "web"}

// w2Analysts are the values of metadata.analyst; "" stands for null.
var w2Analysts = [...]string{"ana", "bo", "chen", "dara", ""}

// w2Epoch is updated_at of document 0, version 0.
var w2Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// W2CompanyID returns company_id of document i, c{i%1000:04}.
func W2CompanyID(i int) string { return "c" + pad(i%1000, 4) }

// W2Topic returns topic of document i, t{i/1000:03}.
func W2Topic(i int) string { return "t" + pad(i/1000, 3) }

// W2Key returns the key of document i, {company_id}:{topic}.
func W2Key(i int) string { return W2CompanyID(i) + ":" + W2Topic(i) }

// W2Seed returns the seed of the stream of document i at version v:
// imul(seed, 0x9E3779B1) + imul(i + 1, 0xC2B2AE3D) + imul(v, 0x27D4EB2F),
// mod 2^32.
func W2Seed(seed uint32, i, v int) uint32 {
	return seed*0x9E3779B1 + uint32(i+1)*0xC2B2AE3D + uint32(v)*0x27D4EB2F
}

// W2UpdatedAt returns updated_at of document i at version v:
// 2026-01-01T00:00:00Z plus i seconds plus v days, in RFC 3339 with
// milliseconds and "Z", such as "2026-01-01T00:00:05.000Z".
func W2UpdatedAt(i, v int) string {
	t := w2Epoch.Add(time.Duration(i)*time.Second).AddDate(0, 0, v)
	return t.Format("2006-01-02T15:04:05.000Z07:00")
}

// W2Doc returns document i at version v (0 for the insert, then 1, 2, …
// for updates) as the JSON-ready value a collection set takes. Its draws, in
// order: the summary's filler letters (after "summary v{v} of doc {i}: ", up
// to 200 characters), confidence = (next() % 10000) / 10000, the tag count
// 1 + next() % 3, each tag W2Tags[next() % 10] (tags may repeat: the spec
// does not deduplicate), metadata.source = W2Sources[next() % 5], and
// metadata.analyst = one of ana, bo, chen, dara, null (next() % 5; null is
// a nil value).
//
// Values are string, float64, []any and map[string]any, so the document
// compares equal to one decoded by encoding/json.
func W2Doc(seed uint32, i, v int) map[string]any {
	m := Mulberry32{a: W2Seed(seed, i, v)}
	var b strings.Builder
	b.Grow(W2SummaryWidth)
	b.WriteString("summary v" + strconv.Itoa(v) + " of doc " + strconv.Itoa(i) + ": ")
	fill(&b, &m, b.Len(), W2SummaryWidth)
	confidence := float64(m.Next()%10000) / 10000
	tags := make([]any, 1+m.Next()%3)
	for t := range tags {
		tags[t] = W2Tags[m.Next()%10]
	}
	source := W2Sources[m.Next()%5]
	var analyst any
	if a := w2Analysts[m.Next()%5]; a != "" {
		analyst = a
	}
	return map[string]any{
		"company_id": W2CompanyID(i),
		"topic":      W2Topic(i),
		"summary":    b.String(),
		"confidence": confidence,
		"updated_at": W2UpdatedAt(i, v),
		"tags":       tags,
		"metadata": map[string]any{
			"source":  source,
			"analyst": analyst,
		},
	}
}

const w2Schema = `{
  "name": "research-notes",
  "entity": {
    "name": "ResearchNote",
    "key": "{company_id}:{topic}",
    "schema": {
      "company_id": { "type": "string" },
      "topic": { "type": "string" },
      "summary": { "type": "string" },
      "confidence": { "type": "number", "min": 0, "max": 1 },
      "updated_at": { "type": "datetime" },
      "tags": { "type": "array", "item": { "type": "string" } },
      "metadata": {
        "type": "object",
        "fields": {
          "source": { "type": "string" },
          "analyst": { "type": "string", "nullable": true }
        }
      }
    }
  },
  "history": { "versions": 3 }`

// W2StoreDefinition returns the research-notes store definition of W2 as
// the JSON of a stores/research-notes.json file: key
// {company_id}:{topic}, the fields of WORKLOADS.md, confidence 0..1,
// metadata.analyst nullable, history versions 3. It is not deletable: the
// remove phase removes as an operator, which DESIGN §3 allows.
func W2StoreDefinition() string { return w2Schema + "\n}\n" }

// W2StoreDefinitionIndexed is W2StoreDefinition with
// "indexes": ["company_id", "topic", "confidence"], the fields that the
// query phases filter on.
func W2StoreDefinitionIndexed() string {
	return w2Schema + ",\n  \"indexes\": [\"company_id\", \"topic\", \"confidence\"]\n}\n"
}
