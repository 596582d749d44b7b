package collection

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// mulberry32 is the PRNG of bench/WORKLOADS.md.
type mulberry32 uint32

func (m *mulberry32) next() uint32 {
	*m += 0x6D2B79F5
	a := uint32(*m)
	t := (a ^ a>>15) * (1 | a)
	t = (t + (t^t>>7)*(61|t)) ^ t
	return t ^ t>>14
}

var w2Tags = []string{"saas", "fintech", "b2b", "b2c", "hardware", "ai", "infra", "health", "retail", "energy"}

// w2Doc is document i at version v of workload W2 (seed 1), as JSON
// decodes it with UseNumber.
func w2Doc(i, v int) map[string]any {
	r := mulberry32(uint32(1)*0x9E3779B1 + uint32(i+1)*0xC2B2AE3D + uint32(v)*0x27D4EB2F)
	summary := []byte(fmt.Sprintf("summary v%d of doc %d: ", v, i))
	for len(summary) < 200 {
		summary = append(summary, "abcdefghijklmnopqrstuvwxyz"[r.next()%26])
	}
	conf := float64(r.next()%10000) / 10000
	tags := make([]any, 1+r.next()%3)
	for k := range tags {
		tags[k] = w2Tags[r.next()%10]
	}
	updated := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Second).AddDate(0, 0, v)
	source := []string{"10-K", "call", "news", "analyst-note", "web"}[r.next()%5]
	var analyst any
	if a := []string{"ana", "bo", "chen", "dara", ""}[r.next()%5]; a != "" {
		analyst = a
	}
	return map[string]any{
		"company_id": fmt.Sprintf("c%04d", i%1000),
		"topic":      fmt.Sprintf("t%03d", i/1000),
		"summary":    string(summary),
		"confidence": json.Number(strconv.FormatFloat(conf, 'f', -1, 64)),
		"updated_at": updated.Format("2006-01-02T15:04:05.000Z07:00"),
		"tags":       tags,
		"metadata":   map[string]any{"source": source, "analyst": analyst},
	}
}
