package app

import (
	"log/slog"
	"net"
	"net/http"
	"time"
)

// accessLog logs one line per HTTP request when it is done: method, path,
// status, duration and bytes written. The query string is left out, since
// OAuth callbacks carry codes in it, and no header is logged, so no token
// reaches the log. Health probes log at debug level: they come every few
// seconds and say nothing.
func accessLog(log *slog.Logger, now func() time.Time, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := now()
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		level := slog.LevelInfo
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			level = slog.LevelDebug
		}
		remote, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			remote = r.RemoteAddr
		}
		log.LogAttrs(r.Context(), level, "http request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", status),
			slog.Float64("duration_ms", float64(now().Sub(start).Microseconds())/1000), slog.Int64("bytes", rec.bytes),
			slog.String("remote", remote))
	})
}

// recorder keeps the status and the size of an answer. Unwrap lets
// http.ResponseController reach the writer's own abilities; Flush is kept
// for the handlers that ask for an http.Flusher (server-sent events).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
