package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// Socket Mode, as Slack runs it: apps.connections.open hands out a WebSocket
// URL; the server greets each connection with hello, pushes envelopes, expects
// an ack carrying the envelope_id, pings, and may ask the client to reconnect
// with a disconnect message. An envelope that was not acked when its
// connection closes is delivered again on the next connection with
// retry_attempt raised, as Slack does, so nothing is lost across a reconnect.

type envelope struct {
	id      string
	typ     string
	payload json.RawMessage
	retry   int
}

type socketConn struct {
	ws       *websocket.Conn
	draining bool // sent disconnect: no new envelopes go here
	dead     bool
	unacked  map[string]*envelope
}

type socketState struct {
	tickets    int
	accepted   int
	conns      []*socketConn
	queue      []*envelope
	envSeq     int
	acks       map[string]json.RawMessage
	deliveries map[string]int
	pongs      int
	closed     bool
	turn       int // the last SpreadEvents offset
}

func (st *socketState) init() {
	st.acks = map[string]json.RawMessage{}
	st.deliveries = map[string]int{}
}

// nextTicket is called with s.mu held.
func (st *socketState) nextTicket() int {
	st.tickets++
	return st.tickets
}

// SendEvent pushes an events_api envelope whose payload is an Events API
// event_callback (see EventCallback). It is queued until a connection is up.
// It returns the envelope id.
func (s *Server) SendEvent(payload any) string { return s.send("events_api", payload) }

// SendInteractive pushes an interactive envelope (a block_actions payload,
// for example) and returns its envelope id.
func (s *Server) SendInteractive(payload any) string { return s.send("interactive", payload) }

// SendSlashCommand pushes a slash_commands envelope (see SlashCommand) and
// returns its envelope id; the app answers on the ack.
func (s *Server) SendSlashCommand(payload any) string { return s.send("slash_commands", payload) }

func (s *Server) send(typ string, payload any) string {
	raw, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("slacktest: marshalling %s payload: %v", typ, err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.socket.envSeq++
	env := &envelope{id: fmt.Sprintf("env-%06d", s.socket.envSeq), typ: typ, payload: raw}
	s.deliverLocked(env)
	s.notifyLocked()
	return env.id
}

// WaitAck waits for the client to ack an envelope and returns the ack's
// payload ("null" when it carried none).
func (s *Server) WaitAck(envelopeID string, timeout time.Duration) (json.RawMessage, error) {
	var ack json.RawMessage
	if !s.waitFor(timeout, func() bool {
		var ok bool
		ack, ok = s.socket.acks[envelopeID]
		return ok
	}) {
		return nil, fmt.Errorf("envelope %s not acked within %s (delivered %d times)", envelopeID, timeout, s.Deliveries(envelopeID))
	}
	return ack, nil
}

// Acked reports whether an envelope was acked.
func (s *Server) Acked(envelopeID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.socket.acks[envelopeID]
	return ok
}

// Deliveries counts how often an envelope was written to a connection.
func (s *Server) Deliveries(envelopeID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.socket.deliveries[envelopeID]
}

// Connections counts the Socket Mode connections accepted so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.socket.accepted
}

// WaitConnections waits until n connections were accepted in all.
func (s *Server) WaitConnections(n int, timeout time.Duration) error {
	if !s.waitFor(timeout, func() bool { return s.socket.accepted >= n }) {
		return fmt.Errorf("waited %s for %d socket mode connections, got %d", timeout, n, s.Connections())
	}
	return nil
}

// Pongs counts the pongs received in answer to the server's pings.
func (s *Server) Pongs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.socket.pongs
}

// Disconnect sends a disconnect message (reason such as "refresh_requested"
// or "warning") on every live connection; those connections get no new
// envelopes, and the client is expected to open a new one.
func (s *Server) Disconnect(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.socket.conns {
		if c.draining || c.dead {
			continue
		}
		c.draining = true
		_ = s.writeLocked(c, map[string]any{
			"type":       "disconnect",
			"reason":     reason,
			"debug_info": map[string]any{"host": "slacktest"},
		})
	}
	s.notifyLocked()
}

// DropConnections closes every connection without a goodbye, as a network
// failure would.
func (s *Server) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.socket.conns {
		_ = c.ws.UnderlyingConn().Close()
	}
}

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	c := &socketConn{ws: ws, unacked: map[string]*envelope{}}
	s.mu.Lock()
	if s.socket.closed {
		s.mu.Unlock()
		_ = ws.Close()
		return
	}
	s.socket.accepted++
	s.socket.conns = append(s.socket.conns, c)
	_ = s.writeLocked(c, map[string]any{
		"type":            "hello",
		"num_connections": s.liveLocked(),
		"debug_info":      map[string]any{"host": "slacktest", "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": s.opts.AppID},
	})
	queued := s.socket.queue
	s.socket.queue = nil
	for _, env := range queued {
		s.deliverLocked(env)
	}
	s.notifyLocked()
	s.mu.Unlock()

	ws.SetPongHandler(func(string) error {
		s.mu.Lock()
		s.socket.pongs++
		s.notifyLocked()
		s.mu.Unlock()
		return nil
	})
	done := make(chan struct{})
	s.wg.Go(func() {
		defer close(done)
		s.readAcks(c)
	})
	s.wg.Go(func() {
		t := time.NewTicker(s.opts.PingInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second)); err != nil {
					return
				}
			}
		}
	})
}

// readAcks reads the client's acks until the connection ends, then hands the
// envelopes it never acked to the next connection.
func (s *Server) readAcks(c *socketConn) {
	defer func() {
		_ = c.ws.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		c.dead = true
		for i, x := range s.socket.conns {
			if x == c {
				s.socket.conns = append(s.socket.conns[:i], s.socket.conns[i+1:]...)
				break
			}
		}
		for _, env := range c.unacked {
			env.retry++
			if !s.socket.closed {
				s.deliverLocked(env)
			}
		}
		c.unacked = nil
		s.notifyLocked()
	}()
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		if len(ack.Payload) == 0 {
			ack.Payload = json.RawMessage("null")
		}
		s.mu.Lock()
		if _, seen := s.socket.acks[ack.EnvelopeID]; !seen {
			s.socket.acks[ack.EnvelopeID] = ack.Payload
		}
		delete(c.unacked, ack.EnvelopeID)
		s.notifyLocked()
		s.mu.Unlock()
	}
}

// deliverLocked writes env on the newest live connection (each in turn with
// SpreadEvents), or queues it.
func (s *Server) deliverLocked(env *envelope) {
	n := len(s.socket.conns)
	offset := 0
	if s.opts.SpreadEvents && n > 0 {
		s.socket.turn++
		offset = s.socket.turn % n
	}
	for k := n - 1; k >= 0; k-- {
		c := s.socket.conns[(k+offset)%n]
		if c.draining || c.dead {
			continue
		}
		msg := map[string]any{
			"envelope_id":              env.id,
			"type":                     env.typ,
			"payload":                  env.payload,
			"accepts_response_payload": false,
		}
		if env.typ == "events_api" {
			msg["retry_attempt"] = env.retry
			if env.retry > 0 {
				msg["retry_reason"] = "timeout"
			} else {
				msg["retry_reason"] = ""
			}
		}
		if err := s.writeLocked(c, msg); err != nil {
			c.dead = true
			_ = c.ws.UnderlyingConn().Close()
			continue
		}
		c.unacked[env.id] = env
		s.socket.deliveries[env.id]++
		return
	}
	s.socket.queue = append(s.socket.queue, env)
}

func (s *Server) liveLocked() int {
	n := 0
	for _, c := range s.socket.conns {
		if !c.dead && !c.draining {
			n++
		}
	}
	return n
}

// writeLocked writes one JSON message. Data writes all happen under s.mu, so
// they never interleave (gorilla/websocket allows one writer at a time).
func (s *Server) writeLocked(c *socketConn, v any) error {
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteJSON(v)
}

func (s *Server) closeSockets() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.socket.closed = true
	for _, c := range s.socket.conns {
		_ = c.ws.UnderlyingConn().Close()
	}
}
