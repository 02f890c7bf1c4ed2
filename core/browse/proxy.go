package browse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ErrRefused marks a dial the address rules refuse (a loopback, private,
// link-local or metadata address not allowed). A DialFunc wraps it in the
// error it returns for such an address, so the proxy can tell a refusal
// (403, reported to the model as refused) from a host that is down (502).
var ErrRefused = errors.New("address refused")

// DialFunc opens a connection for the browser, applying the address rules.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Refusal is one address the proxy did not reach.
type Refusal struct {
	// Addr is host:port as the browser asked for it.
	Addr string
	// Reason is the dialer's error.
	Reason string
	// Refused is true for the address rules' refusal (ErrRefused), false
	// for a host that could not be reached.
	Refused bool
}

func (r Refusal) String() string {
	if r.Refused {
		return fmt.Sprintf("refused: %s (%s)", r.Addr, r.Reason)
	}
	return fmt.Sprintf("unreachable: %s (%s)", r.Addr, r.Reason)
}

// proxy is the browser's only way out: an HTTP proxy on loopback that
// forwards plain requests and CONNECT tunnels through dial, so every
// address Chromium reaches passes the same rules as the web fetch.
// Chromium is started with this proxy and with its implicit loopback
// bypass removed, so a page cannot reach 127.0.0.1 around it.
type proxy struct {
	dial      DialFunc
	log       *slog.Logger
	ln        net.Listener
	srv       *http.Server
	transport *http.Transport

	mu      sync.Mutex
	refused []Refusal
	tunnels sync.WaitGroup
	ctx     context.Context // ends the tunnels
	cancel  context.CancelFunc
}

// startProxy listens on 127.0.0.1 on a free port and serves until close.
func startProxy(dial DialFunc, log *slog.Logger) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the browser's proxy: %w", err)
	}
	p := &proxy{dial: dial, log: log, ln: ln}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.transport = &http.Transport{
		Proxy:                 nil, // the environment's proxy settings must not take the browser around dial
		DialContext:           p.dialRecorded,
		ForceAttemptHTTP2:     false,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 0, // the call's context bounds a request
		DisableCompression:    true,
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// url is the proxy's address for --proxy-server.
func (p *proxy) url() string { return "http://" + p.ln.Addr().String() }

// close stops the proxy and ends its tunnels.
func (p *proxy) close() {
	p.cancel()
	_ = p.srv.Close()
	p.transport.CloseIdleConnections()
	p.tunnels.Wait()
}

// refusals returns what was not reached so far.
func (p *proxy) refusals() []Refusal {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Refusal(nil), p.refused...)
}

// refusalFor returns the refusal recorded for addr (host:port), if any.
func (p *proxy) refusalFor(addr string) (Refusal, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.refused) - 1; i >= 0; i-- {
		if strings.EqualFold(p.refused[i].Addr, addr) {
			return p.refused[i], true
		}
	}
	return Refusal{}, false
}

// dialRecorded dials through the address rules and records a failure.
func (p *proxy) dialRecorded(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := p.dial(ctx, network, addr)
	if err != nil {
		r := Refusal{Addr: addr, Reason: err.Error(), Refused: errors.Is(err, ErrRefused)}
		p.mu.Lock()
		p.refused = append(p.refused, r)
		p.mu.Unlock()
		p.log.DebugContext(ctx, "browser request not reached", "addr", addr, "refused", r.Refused, "err", err)
		return nil, err
	}
	return c, nil
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	p.forward(w, r)
}

// notReachedHeader marks the proxy's own answer to a request it did not
// carry out, so the page it shows is known not to be the site's.
const notReachedHeader = "X-Switchboard-Not-Reached"

// fail answers a request the proxy could not carry out.
func fail(w http.ResponseWriter, err error, addr string, refused bool) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set(notReachedHeader, addr)
	if refused {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "refused: %s (%v)\n", addr, err)
		return
	}
	w.WriteHeader(http.StatusBadGateway)
	fmt.Fprintf(w, "unreachable: %s (%v)\n", addr, err)
}

// connect opens a tunnel (https, wss) to the host:port the browser names.
func (p *proxy) connect(w http.ResponseWriter, r *http.Request) {
	addr := r.Host
	if _, _, err := net.SplitHostPort(addr); err != nil {
		http.Error(w, "CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	up, err := p.dialRecorded(r.Context(), "tcp", addr)
	if err != nil {
		fail(w, err, addr, errors.Is(err, ErrRefused))
		return
	}
	h, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "the proxy cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := h.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		_ = up.Close()
		_ = down.Close()
		return
	}
	p.tunnels.Add(1)
	go func() {
		defer p.tunnels.Done()
		splice(p.ctx, down, up, buf.Reader)
	}()
}

// splice copies both ways until either side ends or ctx is done.
func splice(ctx context.Context, down, up net.Conn, buffered io.Reader) {
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(up, io.MultiReader(buffered, down))
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(down, up)
		done <- struct{}{}
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	_ = up.Close()
	_ = down.Close()
	<-done
}

// hopHeaders are a single connection's, never forwarded.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// forward carries a plain http:// request to its host.
func (p *proxy) forward(w http.ResponseWriter, r *http.Request) {
	if !r.URL.IsAbs() || r.URL.Scheme != "http" {
		http.Error(w, "the proxy forwards absolute http:// requests only", http.StatusBadRequest)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	res, err := p.transport.RoundTrip(out)
	if err != nil {
		addr := hostPort(r.URL.Host, "80")
		rf, recorded := p.refusalFor(addr)
		fail(w, err, addr, errors.Is(err, ErrRefused) || (recorded && rf.Refused))
		return
	}
	defer res.Body.Close()
	for _, h := range hopHeaders {
		res.Header.Del(h)
	}
	res.Header.Del(notReachedHeader) // only the proxy says so
	for k, vs := range res.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(res.StatusCode)
	_, _ = io.Copy(flushWriter{w}, res.Body)
}

// flushWriter flushes each write, so a page streamed slowly reaches the
// browser as it comes.
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}

// hostPort adds port to host when it has none.
func hostPort(host, port string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}
