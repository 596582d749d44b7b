package mcpserver

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/loopback"
)

// operatorOnly lets a request through when it arrived on a loopback
// address, or when it carries an operator's token (satchel token create
// --operator): what next serves (the metrics) describes every scope, so
// an agent's token is not enough.
func (s *Server) operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopback.Arrived(r) {
			next.ServeHTTP(w, r)
			return
		}
		secret, ok := bearer(r)
		if !ok {
			s.unauthorized(w, r, "missing bearer token: "+r.URL.Path+" off loopback needs an operator token (satchel token create --operator)")
			return
		}
		t, err := s.authenticateToken(r.Context(), secret)
		if errors.Is(err, satchel.ErrAccessDenied) {
			s.unauthorized(w, r, err.Error())
			return
		}
		if err != nil {
			s.log.Error("authenticating a request", "error", err.Error(), "request_id", r.Header.Get(RequestIDHeader))
			http.Error(w, "cannot check the token now", http.StatusServiceUnavailable)
			return
		}
		if !t.Operator {
			http.Error(w, fmt.Sprintf("token %s is an agent's token: %s off loopback needs an operator token (satchel token create --operator)", t.ID, r.URL.Path), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
