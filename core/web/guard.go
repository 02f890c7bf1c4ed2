package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Resolver looks up a host's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens a connection; *net.Dialer is one.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// GuardOptions configure a Guard.
type GuardOptions struct {
	// Allow are the hosts (host, or host:port) that may be reached even
	// though they are loopback or private: an intranet, a test's local
	// server. A name matches the host as the URL names it; an IP literal
	// also matches that address when a name resolves to it. Without a
	// port an entry matches every port.
	Allow []string
	// Resolver looks names up (default: net.DefaultResolver).
	Resolver Resolver
	// Dialer dials the checked addresses (default: a net.Dialer).
	Dialer Dialer
	// Logger records refusals (default: discard).
	Logger *slog.Logger
}

func (o *GuardOptions) validate() error {
	for i, a := range o.Allow {
		if _, err := parseAllow(a); err != nil {
			return fmt.Errorf("Allow[%d]: %w", i, err)
		}
	}
	return nil
}

// Guard dials only addresses outside the service's own network (see the
// package comment). It is safe for concurrent use.
type Guard struct {
	allow    []allowEntry
	resolver Resolver
	dialer   Dialer
	log      *slog.Logger
}

// NewGuard builds a Guard.
func NewGuard(o GuardOptions) (*Guard, error) {
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("web guard: %w", err)
	}
	g := &Guard{resolver: o.Resolver, dialer: o.Dialer, log: o.Logger}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.dialer == nil {
		g.dialer = &net.Dialer{}
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	for _, a := range o.Allow {
		e, _ := parseAllow(a)
		g.allow = append(g.allow, e)
	}
	return g, nil
}

// RefusedError is a connection the Guard would not make.
type RefusedError struct {
	// Host is the host as it was asked for (a name or an address).
	Host string
	// Addr is the address refused: Host's own, or one it resolved to.
	Addr netip.Addr
	// Reason says what kind of address it is ("loopback", "private", ...).
	Reason string
}

func (e *RefusedError) Error() string {
	if e.Host == e.Addr.String() {
		return fmt.Sprintf("refused to connect to %s: it is a %s address, which web tools may not reach", e.Host, e.Reason)
	}
	return fmt.Sprintf("refused to connect to %s: it resolves to %s, a %s address, which web tools may not reach", e.Host, e.Addr, e.Reason)
}

// CheckAddr reports why addr must not be reached, or "" when it may be:
// the kind of address it is (loopback, private, link-local, ...). An
// IPv4 address inside IPv6 (mapped, NAT64, 6to4) is judged as the IPv4
// address it carries.
func CheckAddr(addr netip.Addr) string {
	if !addr.IsValid() {
		return "invalid"
	}
	if addr.Zone() != "" {
		return "zoned (interface-scoped)"
	}
	addr = addr.Unmap()
	if addr.Is6() {
		if v4, ok := embeddedV4(addr); ok {
			if r := CheckAddr(v4); r != "" {
				return r + " (inside an IPv6 address)"
			}
		}
	}
	switch {
	case addr.IsLoopback():
		return "loopback"
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsLinkLocalUnicast():
		return "link-local (where cloud metadata services answer)"
	case addr.IsPrivate():
		return "private"
	case addr.IsMulticast(), addr.IsLinkLocalMulticast(), addr.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, p := range reserved {
		if p.prefix.Contains(addr) {
			return p.reason
		}
	}
	return ""
}

// reserved are the ranges netip has no method for.
var reserved = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network"`},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // and 255.255.255.255
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	nat64Mine = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// embeddedV4 is the IPv4 address an IPv6 address routes to: NAT64's last
// four bytes, 6to4's bytes 2 to 5.
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case nat64.Contains(a), nat64Mine.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// DialContext resolves the host of address itself, refuses it with a
// *RefusedError when any address it resolves to may not be reached (and
// the host is not allowed), and dials the checked addresses in turn, so a
// second DNS answer never decides where the connection goes. It has the
// signature of http.Transport.DialContext.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("web guard: network %q: only tcp is dialled", network)
	}
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("web guard: address %q: %w", address, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("web guard: address %q: port %q is not a number", address, portStr)
	}
	addrs, err := g.resolve(ctx, network, host)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if why := CheckAddr(a); why != "" && !g.allowed(host, a, uint16(port)) {
			err := &RefusedError{Host: host, Addr: a, Reason: why}
			g.log.WarnContext(ctx, "web connection refused", "host", host, "addr", a.String(), "reason", why)
			return nil, err
		}
	}
	var errs []error
	for _, a := range addrs {
		conn, err := g.dialer.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("web guard: connecting to %s: %w", address, errors.Join(errs...))
}

// resolve is host's addresses: itself when it is an address, else what
// the resolver answers.
func (g *Guard) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if host == "" {
		return nil, errors.New("web guard: empty host")
	}
	ipNet := "ip"
	switch network {
	case "tcp4":
		ipNet = "ip4"
	case "tcp6":
		ipNet = "ip6"
	}
	addrs, err := g.resolver.LookupNetIP(ctx, ipNet, host)
	if err != nil {
		return nil, fmt.Errorf("web guard: looking up %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("web guard: looking up %s: no addresses", host)
	}
	return addrs, nil
}

// allowEntry is one of GuardOptions.Allow.
type allowEntry struct {
	host string     // lower case, no trailing dot; "" for an address
	addr netip.Addr // when the entry is an address
	port uint16     // 0: any
}

func (g *Guard) allowed(host string, a netip.Addr, port uint16) bool {
	host = normalHost(host)
	for _, e := range g.allow {
		if e.port != 0 && e.port != port {
			continue
		}
		if e.addr.IsValid() {
			if e.addr == a.Unmap() {
				return true
			}
			continue
		}
		if e.host == host {
			return true
		}
	}
	return false
}

// parseAllow reads "host", "host:port", "[v6]:port" or a bare IPv6
// address.
func parseAllow(s string) (allowEntry, error) {
	if strings.TrimSpace(s) == "" {
		return allowEntry{}, errors.New("empty host")
	}
	if strings.Contains(s, "/") {
		return allowEntry{}, fmt.Errorf("%q: want a host or host:port, not a URL or a range", s)
	}
	var e allowEntry
	host := s
	if a, err := netip.ParseAddr(s); err == nil {
		e.addr = a.Unmap()
		return e, nil
	}
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return allowEntry{}, fmt.Errorf("%q: port %q must be 1-65535", s, p)
		}
		host, e.port = h, uint16(n)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		e.addr = a.Unmap()
		return e, nil
	}
	e.host = normalHost(host)
	if e.host == "" || strings.ContainsAny(e.host, " :[]@?#") {
		return allowEntry{}, fmt.Errorf("%q: want a host or host:port", s)
	}
	return e, nil
}

func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}
