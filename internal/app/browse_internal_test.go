package app

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/browse"
	"github.com/switchboardhq/switchboard/core/config"
)

// The browse tool dials through core/web's guard: the local network is
// refused before any dial, as browse.ErrRefused (its proxy answers 403),
// and the host:port web.allow_hosts names (a local listener here) is let
// through.
func TestBrowseDialRefusesTheLocalNetwork(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	allowed := ln.Addr().String()
	dial, err := browseDial(&config.Config{Web: config.Web{AllowHosts: []string{allowed}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ addr, why string }{
		{"127.0.0.1:80", "loopback"},
		{"[::1]:80", "loopback"},
		{"[::ffff:127.0.0.1]:80", "loopback"},
		{"10.1.2.3:80", "private"},
		{"192.168.0.1:443", "private"},
		{"[fd00::1]:443", "private"},
		{"169.254.169.254:80", "link-local"},
		{"100.64.0.1:80", "shared"},
		{"0.0.0.0:80", "unspecified"},
	} {
		_, err := dial(t.Context(), "tcp", tc.addr)
		if !errors.Is(err, browse.ErrRefused) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("dialing %s: %v; want it refused as %s", tc.addr, err, tc.why)
		}
	}
	c, err := dial(t.Context(), "tcp", allowed)
	if err != nil {
		t.Fatalf("dialing %s, which web.allow_hosts names: %v", allowed, err)
	}
	_ = c.Close()
}
