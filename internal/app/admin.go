package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// startAdmin serves pprof on SWITCHBOARD_ADMIN_ADDR, apart from the API so
// that it is never reachable where the API is. Off when the address is empty.
func (a *App) startAdmin(ctx context.Context) error {
	if a.cfg.AdminAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", a.cfg.AdminAddr)
	if err != nil {
		return fmt.Errorf("listening on %s (SWITCHBOARD_ADMIN_ADDR): %w", a.cfg.AdminAddr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	a.adminLn = ln
	// No write timeout: a CPU profile or an execution trace streams for as
	// long as its seconds parameter asks.
	a.admin = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := a.admin.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.ErrorContext(ctx, "admin server", "error", err)
		}
	}()
	a.log.InfoContext(ctx, "admin (pprof) listening", "addr", ln.Addr().String())
	return nil
}

// AdminAddr is the address the admin server listens on, once started ("" when off).
func (a *App) AdminAddr() string {
	if a.adminLn == nil {
		return ""
	}
	return a.adminLn.Addr().String()
}
