package discordtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Gateway opcodes the fake speaks.
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opReconnect      = 7
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatAck   = 11
)

type frame struct {
	Op   int             `json:"op"`
	D    json.RawMessage `json:"d"`
	S    *int64          `json:"s,omitempty"`
	Type string          `json:"t,omitempty"`
}

type dispatched struct {
	seq  int64
	typ  string
	data json.RawMessage
}

// GatewayStats is what the fake's gateway has seen.
type GatewayStats struct {
	Identifies int
	Resumes    int
	Heartbeats int
	// LiveHeartbeats counts heartbeats on the live socket since its
	// IDENTIFY or RESUME.
	LiveHeartbeats int
	// Connected is true while a client is identified or resumed on a live
	// socket.
	Connected bool
	SessionID string
	Seq       int64
	// Intents are those of the last IDENTIFY.
	Intents int
	// ResumedFrom is the seq the last RESUME asked to continue after.
	ResumedFrom int64
}

type gateway struct {
	// mu serialises gateway state and every write to the live socket, so the
	// sequence numbers on the wire are in order. Never take Server.mu while
	// holding it.
	mu                sync.Mutex
	heartbeatInterval time.Duration
	live              *websocket.Conn // identified or resumed
	conns             map[*websocket.Conn]bool
	sessionID         string
	seq               int64
	log               []dispatched
	stats             GatewayStats
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// GatewayStats returns a snapshot of the gateway's counters.
func (s *Server) GatewayStats() GatewayStats {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	st := s.gw.stats
	st.Connected = s.gw.live != nil
	st.SessionID = s.gw.sessionID
	st.Seq = s.gw.seq
	return st
}

// WaitGateway waits until cond holds for the gateway's stats.
func (s *Server) WaitGateway(t interface {
	Helper()
	Fatalf(string, ...any)
}, what string, cond func(GatewayStats) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond(s.GatewayStats()) {
			return
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			t.Fatalf("discordtest: timed out after 30s waiting for gateway: %s (stats %+v)", what, s.GatewayStats())
		}
	}
}

// SetHeartbeatInterval changes the interval sent in later HELLOs.
func (s *Server) SetHeartbeatInterval(d time.Duration) {
	s.gw.mu.Lock()
	s.gw.heartbeatInterval = d
	s.gw.mu.Unlock()
}

// Dispatch sends an op 0 event with the next sequence number. When no client
// is connected the event is kept and replayed to a client that resumes, as
// Discord does. It returns the event's sequence number.
func (s *Server) Dispatch(typ string, data any) int64 {
	raw, err := json.Marshal(data)
	if err != nil {
		panic("discordtest: marshalling " + typ + ": " + err.Error())
	}
	s.gw.mu.Lock()
	s.gw.seq++
	d := dispatched{seq: s.gw.seq, typ: typ, data: raw}
	s.gw.log = append(s.gw.log, d)
	if s.gw.live != nil {
		s.writeDispatchLocked(s.gw.live, d)
	}
	seq := d.seq
	s.gw.mu.Unlock()
	s.notify()
	return seq
}

func (s *Server) writeDispatchLocked(c *websocket.Conn, d dispatched) {
	seq := d.seq
	if err := c.WriteJSON(frame{Op: opDispatch, D: d.data, S: &seq, Type: d.typ}); err != nil {
		// The socket is gone; the event stays in the log for a resume.
		s.dropLocked(c)
	}
}

// Drop closes the gateway socket without a close frame, as a network failure
// would. The client is expected to reconnect and RESUME.
func (s *Server) Drop() {
	s.gw.mu.Lock()
	for c := range s.gw.conns {
		s.dropLocked(c)
	}
	s.gw.mu.Unlock()
	s.notify()
}

// Reconnect sends op 7 (Reconnect) on the live socket; the client should
// close it and RESUME on a new one. Events dispatched until then are kept
// for the resume.
func (s *Server) Reconnect() {
	s.gw.mu.Lock()
	if c := s.gw.live; c != nil {
		_ = c.WriteJSON(frame{Op: opReconnect, D: json.RawMessage("null")})
		s.gw.live = nil
	}
	s.gw.mu.Unlock()
	s.notify()
}

func (s *Server) dropLocked(c *websocket.Conn) {
	if s.gw.live == c {
		s.gw.live = nil
	}
	delete(s.gw.conns, c)
	_ = c.NetConn().Close()
}

func (g *gateway) closeAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.conns {
		_ = c.NetConn().Close()
		delete(g.conns, c)
	}
	g.live = nil
}

func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.gw.mu.Lock()
	if s.gw.conns == nil {
		s.gw.conns = map[*websocket.Conn]bool{}
	}
	s.gw.conns[c] = true
	hello, _ := json.Marshal(map[string]int64{"heartbeat_interval": s.gw.heartbeatInterval.Milliseconds()})
	err = c.WriteJSON(frame{Op: opHello, D: hello})
	s.gw.mu.Unlock()
	if err != nil {
		s.gw.mu.Lock()
		s.dropLocked(c)
		s.gw.mu.Unlock()
		return
	}
	defer func() {
		s.gw.mu.Lock()
		s.dropLocked(c)
		s.gw.mu.Unlock()
		s.notify()
	}()
	for {
		var f frame
		if err := c.ReadJSON(&f); err != nil {
			return
		}
		switch f.Op {
		case opHeartbeat:
			s.gw.mu.Lock()
			s.gw.stats.Heartbeats++
			if s.gw.live == c {
				s.gw.stats.LiveHeartbeats++
			}
			err = c.WriteJSON(frame{Op: opHeartbeatAck, D: json.RawMessage("null")})
			s.gw.mu.Unlock()
		case opIdentify:
			err = s.identify(c, f.D)
		case opResume:
			err = s.resume(c, f.D)
		default:
			// Presence updates, voice and member requests: accepted, unused.
		}
		if err != nil {
			return
		}
		s.notify()
	}
}

func (s *Server) identify(c *websocket.Conn, d json.RawMessage) error {
	var id struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	if err := json.Unmarshal(d, &id); err != nil || !s.tokenOK(id.Token) {
		_ = c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."))
		return errAuth
	}
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	if s.gw.live != nil && s.gw.live != c {
		s.dropLocked(s.gw.live)
	}
	s.gw.stats.Identifies++
	s.gw.stats.LiveHeartbeats = 0
	s.gw.stats.Intents = id.Intents
	s.gw.sessionID = "session-" + strconv.Itoa(s.gw.stats.Identifies)
	s.gw.seq = 0
	s.gw.log = nil
	s.gw.live = c
	ready, _ := json.Marshal(map[string]any{
		"v": 9, "session_id": s.gw.sessionID, "resume_gateway_url": s.GatewayURL(),
		"user": s.Bot, "guilds": []any{}, "private_channels": []any{}, "shard": []int{0, 1},
		"application": map[string]any{"id": AppID, "flags": 0},
	})
	s.gw.seq++
	r := dispatched{seq: s.gw.seq, typ: "READY", data: ready}
	s.gw.log = append(s.gw.log, r)
	seq := r.seq
	return c.WriteJSON(frame{Op: opDispatch, D: ready, S: &seq, Type: "READY"})
}

func (s *Server) resume(c *websocket.Conn, d json.RawMessage) error {
	var rs struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	if err := json.Unmarshal(d, &rs); err != nil || !s.tokenOK(rs.Token) {
		_ = c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."))
		return errAuth
	}
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	if rs.SessionID == "" || rs.SessionID != s.gw.sessionID || rs.Seq > s.gw.seq {
		// Not resumable: the client must IDENTIFY again.
		return c.WriteJSON(frame{Op: opInvalidSession, D: json.RawMessage("false")})
	}
	if s.gw.live != nil && s.gw.live != c {
		s.dropLocked(s.gw.live)
	}
	s.gw.stats.Resumes++
	s.gw.stats.LiveHeartbeats = 0
	s.gw.stats.ResumedFrom = rs.Seq
	for _, ev := range s.gw.log {
		if ev.seq > rs.Seq && ev.typ != "READY" && ev.typ != "RESUMED" {
			seq := ev.seq
			if err := c.WriteJSON(frame{Op: opDispatch, D: ev.data, S: &seq, Type: ev.typ}); err != nil {
				return err
			}
		}
	}
	s.gw.seq++
	resumed := dispatched{seq: s.gw.seq, typ: "RESUMED", data: json.RawMessage("{}")}
	s.gw.log = append(s.gw.log, resumed)
	s.gw.live = c
	seq := resumed.seq
	return c.WriteJSON(frame{Op: opDispatch, D: resumed.data, S: &seq, Type: "RESUMED"})
}

func (s *Server) tokenOK(tok string) bool {
	return tok == "Bot "+s.Token || tok == s.Token
}

type authError struct{}

func (authError) Error() string { return "gateway authentication failed" }

var errAuth error = authError{}
