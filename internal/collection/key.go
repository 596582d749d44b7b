package collection

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/satchel-dev/satchel/internal/errs"
)

// MaxKeyLen bounds a document key, in bytes.
const MaxKeyLen = 1024

// KeyOf builds the document's key from the store's key template: each
// {field} is replaced by the field's value (a number in its shortest
// decimal form, a boolean as true or false). A key field that is missing,
// null, empty or of the wrong type is refused, and so is a value that
// contains the literal text separating two fields of the template (with
// "{company_id}:{topic}", a company_id "a:b" would make keys ambiguous).
// Errors are *errs.ValidationError (What "document") naming the field.
func (s *Store) KeyOf(doc map[string]any) (string, error) {
	var buf [64]byte
	b := buf[:0] // the key, unless it is one field's text
	one := len(s.key) == 1 && s.key[0].field != ""
	var single string // the key when the template is one field (one)
	var viol []errs.Violation
	bad := func(field, format string, args ...any) {
		viol = append(viol, errs.Violation{Path: field, Msg: sprintf(format, args...)})
	}
	for i, p := range s.key {
		if p.field == "" {
			b = append(b, p.lit...)
			continue
		}
		x, ok := doc[p.field]
		var text string
		switch v := x.(type) {
		case nil:
			if ok {
				bad(p.field, "key field is null: the key %s needs a value", s.Key)
			} else {
				bad(p.field, "key field is missing: the key %s needs it", s.Key)
			}
			continue
		case string:
			text = v
		case bool:
			text = strconv.FormatBool(v)
		default:
			f, ok := number(x)
			if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
				bad(p.field, "key field must be a string, number or boolean, not %s", jsonType(x))
				continue
			}
			text = strconv.FormatFloat(f, 'f', -1, 64)
		}
		if text == "" {
			bad(p.field, "key field must not be empty: the key %s needs a value", s.Key)
			continue
		}
		if sep, ok := innerSep(s.key, i, text); ok {
			bad(p.field, "key field must not contain %q: it separates the parts of the key %s", sep, s.Key)
		}
		if one {
			single = text
			continue
		}
		b = append(b, text...)
	}
	if len(viol) > 0 {
		return "", &errs.ValidationError{What: "document", Violations: viol}
	}
	if len(b) > MaxKeyLen || len(single) > MaxKeyLen {
		return "", &errs.ValidationError{What: "document", Violations: []errs.Violation{{Msg: sprintf("the key is longer than %d bytes", MaxKeyLen)}}}
	}
	if one {
		return single, nil
	}
	return string(b), nil
}

// innerSep returns the first literal text next to the field at part i
// that separates it from another field and that text contains: the one
// before the field, then the one after.
func innerSep(parts []keyPart, i int, text string) (string, bool) {
	if i >= 2 && parts[i-1].field == "" && parts[i-2].field != "" && strings.Contains(text, parts[i-1].lit) {
		return parts[i-1].lit, true
	}
	if i+2 < len(parts) && parts[i+1].field == "" && parts[i+2].field != "" && strings.Contains(text, parts[i+1].lit) {
		return parts[i+1].lit, true
	}
	return "", false
}

// ExpiresAt computes when a document set at now expires: the ttl of the
// first override whose condition matches the document, else the default.
// ok is false when the document never expires (no ttl, or no default and
// no matching override).
func (s *Store) ExpiresAt(doc map[string]any, now time.Time) (t time.Time, ok bool) {
	if s.TTL == nil {
		return time.Time{}, false
	}
	for i := range s.TTL.Overrides {
		o := &s.TTL.Overrides[i]
		if o.Cond.match(doc) {
			return now.Add(time.Duration(o.TTL) * time.Second), true
		}
	}
	if s.TTL.Default > 0 {
		return now.Add(time.Duration(s.TTL.Default) * time.Second), true
	}
	return time.Time{}, false
}

// Prepared is a document ready to store: validated, normalized, keyed.
type Prepared struct {
	// Doc is the normalized document (see Normalize).
	Doc map[string]any
	// Key is the document's key.
	Key string
	// ExpiresAt is when it expires; the zero time means never.
	ExpiresAt time.Time
}

// Prepare does everything a set needs before it writes: Validate, KeyOf,
// Normalize and ExpiresAt, in that order. The violations of Validate and
// KeyOf are reported together.
func (s *Store) Prepare(doc map[string]any, refExists RefExists, now time.Time) (*Prepared, error) {
	p, err := s.prepare(doc, refExists, now, false)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// PrepareCopy is Prepare for a document its caller keeps: Prepared.Doc is
// a normalized copy of doc that shares no map or slice with it, made in
// the one walk that validates (which is cheaper than Prepare followed by
// a deep copy). Strings and numbers are shared: they are immutable. It
// returns what Prepare returns, errors included, as a value.
func (s *Store) PrepareCopy(doc map[string]any, refExists RefExists, now time.Time) (Prepared, error) {
	return s.prepare(doc, refExists, now, true)
}

func (s *Store) prepare(doc map[string]any, refExists RefExists, now time.Time, copied bool) (Prepared, error) {
	var out map[string]any
	var verr error
	if copied {
		out, verr = s.validateCopy(doc, refExists)
	} else {
		verr = s.Validate(doc, refExists)
	}
	ve, err := validationOf(verr)
	if err != nil {
		return Prepared{}, err
	}
	key, kerr := s.KeyOf(doc)
	if kerr != nil {
		ke, _ := validationOf(kerr)
		if ve == nil {
			return Prepared{}, kerr
		}
		// Report key problems not already reported by Validate.
		for _, kv := range ke.Violations {
			dup := false
			for _, v := range ve.Violations {
				if v.Path == kv.Path {
					dup = true
					break
				}
			}
			if !dup {
				ve.Violations = append(ve.Violations, kv)
			}
		}
	}
	if ve != nil {
		return Prepared{}, ve
	}
	if !copied {
		out = s.Normalize(doc)
	}
	p := Prepared{Doc: out, Key: key}
	if t, ok := s.ExpiresAt(p.Doc, now); ok {
		p.ExpiresAt = t
	}
	return p, nil
}

// validationOf returns the *errs.ValidationError of err (nil for a nil
// err), or err itself when it is another error.
func validationOf(err error) (*errs.ValidationError, error) {
	if err == nil {
		return nil, nil
	}
	var ve *errs.ValidationError
	if !asValidation(err, &ve) {
		return nil, err
	}
	return ve, nil
}
