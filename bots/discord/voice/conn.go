package voice

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Voice gateway opcodes (version 8) of the connection itself.
const (
	OpIdentify           = 0
	OpSelectProtocol     = 1
	OpReady              = 2
	OpHeartbeat          = 3
	OpSessionDescription = 4
	OpSpeaking           = 5
	OpHeartbeatAck       = 6
	OpHello              = 8
)

// ConnOptions configures a voice connection; the values come from the
// main gateway's VOICE_STATE_UPDATE and VOICE_SERVER_UPDATE.
type ConnOptions struct {
	// Endpoint is the voice server: a host (wss:// and ?v=8 are added) or,
	// in tests, a ws:// URL.
	Endpoint  string
	ServerID  uint64 // the guild
	ChannelID uint64
	UserID    uint64 // the bot
	SessionID string
	Token     string
	// OnFrame gets each Opus frame heard, decrypted, with its speaker.
	OnFrame func(userID uint64, frame []byte)
	Logger  *slog.Logger
	// HandshakeTimeout bounds Dial (default 15 s).
	HandshakeTimeout time.Duration
}

func (o *ConnOptions) validate() error {
	switch {
	case o.Endpoint == "":
		return errors.New("voice: ConnOptions.Endpoint is required")
	case o.ServerID == 0 || o.ChannelID == 0 || o.UserID == 0:
		return errors.New("voice: ConnOptions.ServerID, ChannelID and UserID are required")
	case o.SessionID == "" || o.Token == "":
		return errors.New("voice: ConnOptions.SessionID and Token are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = 15 * time.Second
	}
	if o.OnFrame == nil {
		o.OnFrame = func(uint64, []byte) {}
	}
	return nil
}

// Conn is a voice connection: the voice gateway's WebSocket, DAVE, and the
// UDP socket of RTP packets.
type Conn struct {
	opts ConnOptions
	ws   *websocket.Conn
	udp  *net.UDPConn
	ssrc uint32

	writeMu sync.Mutex // one WebSocket writer at a time

	mu        sync.Mutex // guards what follows
	dave      *DAVE
	transport *Transport
	users     map[uint32]uint64 // SSRC → user, from opcode 5
	seqAck    int
	speaking  bool
	rtpSeq    uint16
	rtpTime   uint32

	described chan error // the session description, or the failure before it
	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
	err       error
}

type payload struct {
	Op   int             `json:"op"`
	Data json.RawMessage `json:"d"`
	Seq  *int            `json:"seq,omitempty"`
}

// Dial connects to the voice server and completes the handshake through
// the session description; DAVE then proceeds in the background.
func Dial(ctx context.Context, opts ConnOptions) (*Conn, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.HandshakeTimeout)
	defer cancel()
	url := opts.Endpoint
	if !strings.Contains(url, "://") {
		url = "wss://" + url + "/?v=8"
	}
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("voice: connecting to %s: %w", opts.Endpoint, err)
	}
	dv, err := NewDAVE(DAVEOptions{UserID: opts.UserID, ChannelID: opts.ChannelID, Logger: opts.Logger})
	if err != nil {
		ws.Close()
		return nil, err
	}
	c := &Conn{opts: opts, ws: ws, dave: dv, users: map[uint32]uint64{}, seqAck: -1,
		described: make(chan error, 1), done: make(chan struct{})}
	if dl, ok := ctx.Deadline(); ok {
		_ = ws.SetReadDeadline(dl)
	}
	if err := c.handshake(ctx); err != nil {
		c.Close()
		return nil, err
	}
	_ = ws.SetReadDeadline(time.Time{})
	c.wg.Add(1)
	go c.readLoop(ctx)
	select {
	case err := <-c.described:
		if err != nil {
			c.Close()
			return nil, err
		}
	case <-ctx.Done():
		c.Close()
		return nil, fmt.Errorf("voice: waiting for the session description: %w", ctx.Err())
	}
	c.wg.Add(1)
	go c.udpLoop()
	return c, nil
}

func (c *Conn) readJSON(want int) (json.RawMessage, error) {
	for {
		typ, msg, err := c.ws.ReadMessage()
		if err != nil {
			return nil, fmt.Errorf("voice: reading opcode %d: %w", want, err)
		}
		if typ != websocket.TextMessage {
			continue
		}
		var p payload
		if err := json.Unmarshal(msg, &p); err != nil {
			return nil, fmt.Errorf("voice: %w", err)
		}
		if p.Op == want {
			return p.Data, nil
		}
	}
}

// handshake runs Hello, Identify, Ready, IP discovery and Select Protocol.
func (c *Conn) handshake(ctx context.Context) error {
	data, err := c.readJSON(OpHello)
	if err != nil {
		return err
	}
	var hello struct {
		Interval float64 `json:"heartbeat_interval"`
	}
	if err := json.Unmarshal(data, &hello); err != nil || hello.Interval <= 0 {
		return fmt.Errorf("voice: hello: heartbeat_interval %v (%v)", hello.Interval, err)
	}
	c.wg.Add(1)
	go c.heartbeat(time.Duration(hello.Interval * float64(time.Millisecond)))

	if err := c.send(Message{Op: OpIdentify, Data: map[string]any{
		"server_id": strconv.FormatUint(c.opts.ServerID, 10), "user_id": strconv.FormatUint(c.opts.UserID, 10),
		"session_id": c.opts.SessionID, "token": c.opts.Token, "max_dave_protocol_version": 1,
	}}); err != nil {
		return err
	}
	if data, err = c.readJSON(OpReady); err != nil {
		return err
	}
	var ready struct {
		SSRC  uint32   `json:"ssrc"`
		IP    string   `json:"ip"`
		Port  uint16   `json:"port"`
		Modes []string `json:"modes"`
	}
	if err := json.Unmarshal(data, &ready); err != nil {
		return fmt.Errorf("voice: ready: %w", err)
	}
	found := false
	for _, m := range ready.Modes {
		found = found || m == EncryptionMode
	}
	if !found {
		return fmt.Errorf("voice: ready: modes %v lack %s", ready.Modes, EncryptionMode)
	}
	addr, err := netip.ParseAddr(ready.IP)
	if err != nil {
		return fmt.Errorf("voice: ready: ip: %w", err)
	}
	c.ssrc = ready.SSRC
	if c.udp, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, ready.Port))); err != nil {
		return fmt.Errorf("voice: UDP: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.udp.SetReadDeadline(dl)
	}
	if _, err := c.udp.Write(DiscoveryRequest(c.ssrc)); err != nil {
		return fmt.Errorf("voice: IP discovery: %w", err)
	}
	buf := make([]byte, 1500)
	n, err := c.udp.Read(buf)
	if err != nil {
		return fmt.Errorf("voice: IP discovery: %w", err)
	}
	_ = c.udp.SetReadDeadline(time.Time{})
	ext, err := ParseDiscoveryResponse(buf[:n], c.ssrc)
	if err != nil {
		return err
	}
	return c.send(Message{Op: OpSelectProtocol, Data: map[string]any{
		"protocol": "udp",
		"data":     map[string]any{"address": ext.Addr().String(), "port": ext.Port(), "mode": EncryptionMode},
	}})
}

func (c *Conn) send(m Message) error {
	b, err := m.Bytes()
	if err != nil {
		return err
	}
	typ := websocket.TextMessage
	if m.Binary != nil {
		typ = websocket.BinaryMessage
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.ws.WriteMessage(typ, b); err != nil {
		return fmt.Errorf("voice: sending opcode %d: %w", m.Op, err)
	}
	return nil
}

func (c *Conn) sendAll(msgs []Message) error {
	for _, m := range msgs {
		if err := c.send(m); err != nil {
			return err
		}
	}
	return nil
}

func (c *Conn) heartbeat(every time.Duration) {
	defer c.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case now := <-t.C:
			c.mu.Lock()
			ack := c.seqAck
			c.mu.Unlock()
			if err := c.send(Message{Op: OpHeartbeat, Data: map[string]any{"t": now.UnixMilli(), "seq_ack": ack}}); err != nil {
				c.fail(err)
				return
			}
		}
	}
}

func (c *Conn) readLoop(ctx context.Context) {
	defer c.wg.Done()
	described := false
	for {
		typ, msg, err := c.ws.ReadMessage()
		if err != nil {
			if !described {
				c.described <- fmt.Errorf("voice: before the session description: %w", err)
			}
			c.fail(err)
			return
		}
		var out []Message
		c.mu.Lock()
		if typ == websocket.BinaryMessage {
			if len(msg) >= 2 {
				c.seqAck = int(binary.BigEndian.Uint16(msg))
			}
			out, err = c.dave.HandleBinary(ctx, msg)
		} else {
			out, err = c.handleJSON(ctx, msg, &described)
		}
		c.mu.Unlock()
		if err != nil {
			c.opts.Logger.WarnContext(ctx, "voice gateway message", "error", err)
		}
		if err := c.sendAll(out); err != nil {
			c.fail(err)
			return
		}
	}
}

// handleJSON takes one JSON message; c.mu is held.
func (c *Conn) handleJSON(ctx context.Context, msg []byte, described *bool) ([]Message, error) {
	var p payload
	if err := json.Unmarshal(msg, &p); err != nil {
		return nil, fmt.Errorf("voice: %w", err)
	}
	if p.Seq != nil {
		c.seqAck = *p.Seq
	}
	switch p.Op {
	case OpSessionDescription:
		var d struct {
			Mode        string `json:"mode"`
			SecretKey   []byte `json:"-"`
			Key         []int  `json:"secret_key"`
			DAVEVersion int    `json:"dave_protocol_version"`
		}
		if err := json.Unmarshal(p.Data, &d); err != nil {
			return nil, fmt.Errorf("voice: session description: %w", err)
		}
		key := make([]byte, len(d.Key))
		for i, k := range d.Key {
			key[i] = byte(k)
		}
		t, err := NewTransport(key)
		if err == nil && d.Mode != EncryptionMode {
			err = fmt.Errorf("voice: session description: mode %q", d.Mode)
		}
		var out []Message
		if err == nil {
			c.transport = t
			out, err = c.dave.Start(ctx, d.DAVEVersion)
		}
		if !*described {
			*described = true
			c.described <- err
		}
		return out, err
	case OpSpeaking:
		var d struct {
			UserID string `json:"user_id"`
			SSRC   uint32 `json:"ssrc"`
		}
		if err := json.Unmarshal(p.Data, &d); err != nil {
			return nil, fmt.Errorf("voice: speaking: %w", err)
		}
		id, err := strconv.ParseUint(d.UserID, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("voice: speaking: user_id: %w", err)
		}
		c.users[d.SSRC] = id
		return nil, nil
	default:
		return c.dave.HandleJSON(ctx, p.Op, p.Data)
	}
}

func (c *Conn) udpLoop() {
	defer c.wg.Done()
	buf := make([]byte, 1500)
	for {
		n, err := c.udp.Read(buf)
		if err != nil {
			c.fail(err)
			return
		}
		c.mu.Lock()
		frame, user, err := c.open(buf[:n])
		c.mu.Unlock()
		if err != nil {
			c.opts.Logger.Debug("voice packet dropped", "error", err)
			continue
		}
		c.opts.OnFrame(user, frame)
	}
}

// open decrypts one packet; c.mu is held.
func (c *Conn) open(pkt []byte) ([]byte, uint64, error) {
	if len(pkt) >= 2 && pkt[1] >= 200 && pkt[1] <= 204 {
		return nil, 0, errors.New("RTCP")
	}
	p, err := c.transport.Open(pkt)
	if err != nil {
		return nil, 0, err
	}
	user, ok := c.users[p.SSRC]
	if !ok {
		return nil, 0, fmt.Errorf("SSRC %d has no speaker yet", p.SSRC)
	}
	frame, err := c.dave.Decrypt(user, p.Payload)
	return frame, user, err
}

// SendOpus encrypts one 20 ms Opus frame (DAVE, then transport) and sends
// it; the first frame announces speaking (opcode 5).
func (c *Conn) SendOpus(frame []byte) error {
	c.mu.Lock()
	enc, err := c.dave.Encrypt(frame)
	if err != nil {
		c.mu.Unlock()
		return err
	}
	first := !c.speaking
	c.speaking = true
	header := RTPHeader(c.rtpSeq, c.rtpTime, c.ssrc)
	c.rtpSeq++
	c.rtpTime += 960 // 20 ms at 48 kHz
	pkt, err := c.transport.Seal(header, enc)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if first {
		if err := c.send(Message{Op: OpSpeaking, Data: map[string]any{"speaking": 1, "delay": 0, "ssrc": c.ssrc}}); err != nil {
			return err
		}
	}
	_, err = c.udp.Write(pkt)
	return err
}

// Ready reports whether DAVE has keys (or is off), so frames can go.
func (c *Conn) Ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dave.version == 0 || c.dave.current != nil
}

// Done is closed when the connection ends; Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

func (c *Conn) fail(err error) {
	c.closeOnce.Do(func() {
		c.err = err
		close(c.done)
		_ = c.ws.Close()
		if c.udp != nil {
			_ = c.udp.Close()
		}
	})
}

// Close ends the connection and waits for its goroutines.
func (c *Conn) Close() error {
	c.fail(net.ErrClosed)
	c.wg.Wait()
	return nil
}
